// Where the C producers' batches come from: a list of batches owned by the
// core (what the C consumers collect) and a generator of a known stream, for
// tests and fixtures. Both are AcdBatchSources, which the pull producer
// (stream.c) and the async producer (async_producer.c) hand out.

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "stream/stream.h"

// ---- schema copies ----------------------------------------------------------

int AcdSchemaDeepCopy(const struct ArrowSchema* src, struct ArrowSchema* dst,
                      struct AcdError* error) {
  dst->release = NULL;
  if (src->release == NULL) return AcdErrorSet(error, EINVAL, "schema: released");
  int code = AcdSchemaInit(dst, src->format, src->name, src->metadata, src->flags,
                           src->n_children, src->dictionary != NULL, error);
  if (code != ACD_OK) return code;
  for (int64_t i = 0; i < src->n_children && code == ACD_OK; i++) {
    code = AcdSchemaDeepCopy(src->children[i], dst->children[i], error);
    if (code != ACD_OK) AcdErrorPrefix(error, "children[%lld]", (long long)i);
  }
  if (code == ACD_OK && src->dictionary != NULL) {
    code = AcdSchemaDeepCopy(src->dictionary, dst->dictionary, error);
    if (code != ACD_OK) AcdErrorPrefix(error, "dictionary");
  }
  if (code != ACD_OK) AcdSchemaRelease(dst);
  return code;
}

// ---- batch lists ------------------------------------------------------------

void AcdBatchListInit(struct AcdBatchList* list) {
  memset(list, 0, sizeof(*list));
}

int AcdBatchListAppend(struct AcdBatchList* list, struct ArrowDeviceArray* array,
                       struct AcdError* error) {
  if (list->length == list->capacity) {
    int64_t capacity = list->capacity == 0 ? 8 : list->capacity * 2;
    struct ArrowDeviceArray* arrays = AcdMalloc(capacity * (int64_t)sizeof(struct ArrowDeviceArray));
    if (arrays == NULL) {
      return AcdErrorSet(error, ENOMEM, "out of memory growing a batch list to %lld batches",
                         (long long)capacity);
    }
    if (list->length > 0) {
      memcpy(arrays, list->arrays, (size_t)list->length * sizeof(struct ArrowDeviceArray));
    }
    AcdFree(list->arrays);
    list->arrays = arrays;
    list->capacity = capacity;
  }
  AcdDeviceArrayMove(array, &list->arrays[list->length++]);
  return ACD_OK;
}

void AcdBatchListReset(struct AcdBatchList* list) {
  AcdSchemaRelease(&list->schema);
  for (int64_t i = 0; i < list->length; i++) AcdArrayRelease(&list->arrays[i].array);
  AcdFree(list->arrays);
  AcdBatchListInit(list);
}

// ---- sources ----------------------------------------------------------------

void AcdBatchSourceMove(struct AcdBatchSource* src, struct AcdBatchSource* dst) {
  memcpy(dst, src, sizeof(struct AcdBatchSource));
  src->release = NULL;
}

void AcdBatchSourceRelease(struct AcdBatchSource* source) {
  if (source != NULL && source->release != NULL) source->release(source);
}

// A list source: the list's batches in order, then the end (again and again).

struct AcdListSourcePrivate {
  struct AcdBatchList list;
  int64_t next;
};

static int AcdListSourceGetSchema(struct AcdBatchSource* self, struct ArrowSchema* out,
                                  struct AcdError* error) {
  struct AcdListSourcePrivate* p = self->private_data;
  return AcdSchemaDeepCopy(&p->list.schema, out, error);
}

static int AcdListSourceGetNext(struct AcdBatchSource* self, struct ArrowDeviceArray* out,
                                struct AcdError* error) {
  (void)error;
  struct AcdListSourcePrivate* p = self->private_data;
  if (p->next == p->list.length) {
    out->array.release = NULL;
    return ACD_OK;
  }
  AcdDeviceArrayMove(&p->list.arrays[p->next++], out);
  return ACD_OK;
}

static void AcdListSourceRelease(struct AcdBatchSource* self) {
  struct AcdListSourcePrivate* p = self->private_data;
  AcdBatchListReset(&p->list);
  AcdFree(p);
  self->release = NULL;
}

int AcdBatchSourceInitList(struct AcdBatchSource* source, struct AcdBatchList* list,
                           struct AcdError* error) {
  source->release = NULL;
  if (list->schema.release == NULL) return AcdErrorSet(error, EINVAL, "list: has no schema");
  struct AcdListSourcePrivate* p = AcdCalloc(1, sizeof(struct AcdListSourcePrivate));
  if (p == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a list source");
  p->list = *list;
  AcdBatchListInit(list);
  source->device_type = p->list.device_type == 0 ? ARROW_DEVICE_CPU : p->list.device_type;
  source->get_schema = &AcdListSourceGetSchema;
  source->get_next = &AcdListSourceGetNext;
  source->private_data = p;
  source->release = &AcdListSourceRelease;
  return ACD_OK;
}

// A generator: struct<id: int32 not null, value: double, name: utf8>.

struct AcdGeneratorPrivate {
  struct AcdGeneratorOptions options;
  char* fail_message;
  int64_t next;
};

void AcdGeneratorOptionsInit(struct AcdGeneratorOptions* options) {
  options->n_batches = 3;
  options->rows_per_batch = 5;
  options->device_type = ARROW_DEVICE_CPU;
  options->device_id = -1;
  options->fail_at = -1;
  options->fail_code = EIO;
  options->fail_message = NULL;
  options->wrong_device_at = -1;
}

static int AcdGeneratorFail(struct AcdGeneratorPrivate* p, struct AcdError* error) {
  const char* message = p->fail_message == NULL ? "the generator failed as asked" : p->fail_message;
  return AcdErrorSet(error, p->options.fail_code, "%s", message);
}

static int AcdGeneratorGetSchema(struct AcdBatchSource* self, struct ArrowSchema* out,
                                 struct AcdError* error) {
  struct AcdGeneratorPrivate* p = self->private_data;
  out->release = NULL;
  if (p->options.fail_at == -2) return AcdGeneratorFail(p, error);
  int code = AcdSchemaInit(out, "+s", "", NULL, 0, 3, 0, error);
  if (code != ACD_OK) return code;
  if ((code = AcdSchemaInit(out->children[0], "i", "id", NULL, 0, 0, 0, error)) != ACD_OK ||
      (code = AcdSchemaInit(out->children[1], "g", "value", NULL, ARROW_FLAG_NULLABLE, 0, 0,
                            error)) != ACD_OK ||
      (code = AcdSchemaInit(out->children[2], "u", "name", NULL, ARROW_FLAG_NULLABLE, 0, 0,
                            error)) != ACD_OK) {
    AcdSchemaRelease(out);
  }
  return code;
}

static void AcdBitSet(uint8_t* bits, int64_t i) { bits[i >> 3] |= (uint8_t)(1u << (i & 7)); }

// Fills the three columns of batch b; out->array is initialized (3 children).
static int AcdGeneratorFill(struct ArrowArray* array, int64_t first, int64_t n) {
  struct ArrowArray* id = array->children[0];
  struct ArrowArray* value = array->children[1];
  struct ArrowArray* name = array->children[2];
  int64_t value_nulls = 0, name_nulls = 0, name_bytes = 0;
  char text[32];
  for (int64_t r = first; r < first + n; r++) {
    if (r % 7 == 3) value_nulls++;
    if (r % 5 == 4) {
      name_nulls++;
    } else {
      name_bytes += snprintf(text, sizeof(text), "r%lld", (long long)r);
    }
  }
  if (AcdArrayInit(id, n, 0, 0, 2, 0, 0, NULL) != ACD_OK ||
      AcdArrayInit(value, n, value_nulls, 0, 2, 0, 0, NULL) != ACD_OK ||
      AcdArrayInit(name, n, name_nulls, 0, 3, 0, 0, NULL) != ACD_OK) {
    return ENOMEM;
  }
  int32_t* ids = AcdArrayAllocateBuffer(id, 1, n * 4);
  double* values = AcdArrayAllocateBuffer(value, 1, n * 8);
  uint8_t* value_valid = value_nulls > 0 ? AcdArrayAllocateBuffer(value, 0, (n + 7) / 8) : NULL;
  int32_t* offsets = AcdArrayAllocateBuffer(name, 1, (n + 1) * 4);
  char* data = AcdArrayAllocateBuffer(name, 2, name_bytes);
  uint8_t* name_valid = name_nulls > 0 ? AcdArrayAllocateBuffer(name, 0, (n + 7) / 8) : NULL;
  if (ids == NULL || values == NULL || offsets == NULL || data == NULL ||
      (value_nulls > 0 && value_valid == NULL) || (name_nulls > 0 && name_valid == NULL)) {
    return ENOMEM;
  }
  if (value_valid != NULL) memset(value_valid, 0, (size_t)((n + 7) / 8));
  if (name_valid != NULL) memset(name_valid, 0, (size_t)((n + 7) / 8));
  int32_t at = 0;
  offsets[0] = 0;
  for (int64_t i = 0; i < n; i++) {
    int64_t r = first + i;
    ids[i] = (int32_t)r;
    values[i] = r % 7 == 3 ? 0.0 : (double)r * 0.5;
    if (value_valid != NULL && r % 7 != 3) AcdBitSet(value_valid, i);
    if (r % 5 != 4) {
      int len = snprintf(text, sizeof(text), "r%lld", (long long)r);
      memcpy(data + at, text, (size_t)len);
      at += len;
      if (name_valid != NULL) AcdBitSet(name_valid, i);
    }
    offsets[i + 1] = at;
  }
  return ACD_OK;
}

static int AcdGeneratorGetNext(struct AcdBatchSource* self, struct ArrowDeviceArray* out,
                               struct AcdError* error) {
  struct AcdGeneratorPrivate* p = self->private_data;
  out->array.release = NULL;
  int64_t b = p->next;
  if (b >= p->options.n_batches) return ACD_OK;  // the end
  if (b == p->options.fail_at) return AcdGeneratorFail(p, error);
  int64_t n = p->options.rows_per_batch;
  int code = AcdArrayInit(&out->array, n, 0, 0, 1, 3, 0, error);
  if (code != ACD_OK) return code;
  if (AcdGeneratorFill(&out->array, b * n, n) != ACD_OK) {
    AcdArrayRelease(&out->array);
    return AcdErrorSet(error, ENOMEM, "out of memory generating batch %lld", (long long)b);
  }
  ArrowDeviceType device_type =
      b == p->options.wrong_device_at ? ARROW_DEVICE_EXT_DEV : p->options.device_type;
  AcdDeviceArrayInitDevice(out, device_type, p->options.device_id);
  p->next++;
  return ACD_OK;
}

static void AcdGeneratorRelease(struct AcdBatchSource* self) {
  struct AcdGeneratorPrivate* p = self->private_data;
  AcdFree(p->fail_message);
  AcdFree(p);
  self->release = NULL;
}

int AcdBatchSourceInitGenerator(struct AcdBatchSource* source,
                                const struct AcdGeneratorOptions* options,
                                struct AcdError* error) {
  source->release = NULL;
  if (options->n_batches < 0 || options->rows_per_batch < 0 ||
      options->rows_per_batch > INT32_MAX / 16 ||
      options->n_batches * options->rows_per_batch > INT32_MAX) {
    return AcdErrorSet(error, EINVAL,
                       "generator: expected 0 <= rows in all (%lld x %lld) <= %d",
                       (long long)options->n_batches, (long long)options->rows_per_batch,
                       INT32_MAX);
  }
  if (options->fail_at != -1 && options->fail_code == 0) {
    return AcdErrorSet(error, EINVAL, "generator: fail_code must not be 0");
  }
  struct AcdGeneratorPrivate* p = AcdCalloc(1, sizeof(struct AcdGeneratorPrivate));
  if (p == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a generator");
  p->options = *options;
  p->options.fail_message = NULL;
  if (options->fail_message != NULL) {
    size_t size = strlen(options->fail_message) + 1;
    p->fail_message = AcdMalloc((int64_t)size);
    if (p->fail_message == NULL) {
      AcdFree(p);
      return AcdErrorSet(error, ENOMEM, "out of memory copying the failure message");
    }
    memcpy(p->fail_message, options->fail_message, size);
  }
  source->device_type = options->device_type;
  source->get_schema = &AcdGeneratorGetSchema;
  source->get_next = &AcdGeneratorGetNext;
  source->private_data = p;
  source->release = &AcdGeneratorRelease;
  return ACD_OK;
}
