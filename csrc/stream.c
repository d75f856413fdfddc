// Pull streams (ArrowArrayStream, ArrowDeviceArrayStream): moves, the
// consumer-side calls that enforce the protocol, the C producer over a batch
// source and the C consumer that drains a stream. Modelled on nanoarrow's
// array_stream.c.

#include <errno.h>
#include <string.h>

#include "acd.h"

// ---- moves and releases -----------------------------------------------------

void AcdArrayStreamMove(struct ArrowArrayStream* src, struct ArrowArrayStream* dst) {
  memcpy(dst, src, sizeof(struct ArrowArrayStream));
  src->release = NULL;
}

void AcdDeviceArrayStreamMove(struct ArrowDeviceArrayStream* src,
                              struct ArrowDeviceArrayStream* dst) {
  memcpy(dst, src, sizeof(struct ArrowDeviceArrayStream));
  src->release = NULL;
}

void AcdArrayStreamRelease(struct ArrowArrayStream* stream) {
  if (stream != NULL && stream->release != NULL) stream->release(stream);
}

void AcdDeviceArrayStreamRelease(struct ArrowDeviceArrayStream* stream) {
  if (stream != NULL && stream->release != NULL) stream->release(stream);
}

// ---- consumer-side calls ------------------------------------------------------

// The producer's message for a failed call, copied at once: get_last_error's
// pointer is only valid until the next call on the stream.
static int AcdStreamFailed(struct AcdError* error, const char* callback, int code,
                           const char* message) {
  if (message != NULL) return AcdErrorSet(error, code, "%s: %s", callback, message);
  return AcdErrorSet(error, code, "%s: error %d (%s), and get_last_error gave no message",
                     callback, code, strerror(code));
}

int AcdArrayStreamGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out,
                            struct AcdError* error) {
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "get_schema: the stream is released");
  out->release = NULL;
  int code = stream->get_schema(stream, out);
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_schema", code, stream->get_last_error(stream));
  }
  if (out->release == NULL) {
    return AcdErrorSet(error, EINVAL, "get_schema: returned 0 with a released schema");
  }
  return ACD_OK;
}

int AcdArrayStreamGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out,
                          struct AcdError* error) {
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "get_next: the stream is released");
  out->release = NULL;
  int code = stream->get_next(stream, out);
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_next", code, stream->get_last_error(stream));
  }
  return ACD_OK;
}

int AcdDeviceArrayStreamGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out,
                                  struct AcdError* error) {
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "get_schema: the stream is released");
  out->release = NULL;
  int code = stream->get_schema(stream, out);
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_schema", code, stream->get_last_error(stream));
  }
  if (out->release == NULL) {
    return AcdErrorSet(error, EINVAL, "get_schema: returned 0 with a released schema");
  }
  return ACD_OK;
}

int AcdDeviceArrayStreamGetNext(struct ArrowDeviceArrayStream* stream,
                                struct ArrowDeviceArray* out, struct AcdError* error) {
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "get_next: the stream is released");
  out->array.release = NULL;
  int code = stream->get_next(stream, out);
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_next", code, stream->get_last_error(stream));
  }
  if (out->array.release != NULL && out->device_type != stream->device_type) {
    int found = out->device_type;
    AcdArrayRelease(&out->array);
    return AcdErrorSet(error, EINVAL,
                       "get_next: device_type: expected %d (the stream's), found %d",
                       stream->device_type, found);
  }
  return ACD_OK;
}

// ---- the C producer -------------------------------------------------------------

struct AcdSourceStreamPrivate {
  struct AcdBatchSource source;
  // The last failure; message[0] == 0 after a successful call.
  struct AcdError error;
  int failed_code;
  int64_t batches;
};

static int AcdSourceStreamFail(struct AcdSourceStreamPrivate* p, int code) {
  p->failed_code = code;
  return code;
}

static int AcdSourceStreamGetSchema(struct AcdSourceStreamPrivate* p, struct ArrowSchema* out) {
  p->error.message[0] = '\0';
  int code = p->source.get_schema(&p->source, out, &p->error);
  if (code != ACD_OK) {
    out->release = NULL;
    if (p->error.message[0] == '\0') AcdErrorSet(&p->error, code, "the source failed (%d)", code);
  }
  return code;
}

// The next batch of the source, checked against the stream's device type.
static int AcdSourceStreamGetNext(struct AcdSourceStreamPrivate* p, struct ArrowDeviceArray* out,
                                  ArrowDeviceType device_type) {
  if (p->failed_code != ACD_OK) return p->failed_code;  // error kept from the failure
  p->error.message[0] = '\0';
  out->array.release = NULL;
  int code = p->source.get_next(&p->source, out, &p->error);
  if (code != ACD_OK) {
    out->array.release = NULL;
    if (p->error.message[0] == '\0') AcdErrorSet(&p->error, code, "the source failed (%d)", code);
    return AcdSourceStreamFail(p, code);
  }
  if (out->array.release == NULL) return ACD_OK;
  if (out->device_type != device_type) {
    int found = out->device_type;
    AcdArrayRelease(&out->array);
    AcdErrorSet(&p->error, EINVAL, "device_type: expected %d (the stream's), found %d",
                device_type, found);
    return AcdSourceStreamFail(p, EINVAL);
  }
  p->batches++;
  return ACD_OK;
}

static const char* AcdSourceStreamLastError(struct AcdSourceStreamPrivate* p) {
  return p->error.message[0] == '\0' ? NULL : p->error.message;
}

static void AcdSourceStreamFree(struct AcdSourceStreamPrivate* p) {
  AcdBatchSourceRelease(&p->source);
  AcdFree(p);
}

static int AcdSourceStreamNew(struct AcdBatchSource* source, struct AcdSourceStreamPrivate** out,
                              struct AcdError* error) {
  if (source->release == NULL) return AcdErrorSet(error, EINVAL, "source: released");
  struct AcdSourceStreamPrivate* p = AcdCalloc(1, sizeof(struct AcdSourceStreamPrivate));
  if (p == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a stream");
  AcdBatchSourceMove(source, &p->source);
  *out = p;
  return ACD_OK;
}

// ArrowArrayStream callbacks.

static int AcdArraySourceGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  return AcdSourceStreamGetSchema(stream->private_data, out);
}

static int AcdArraySourceGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  struct AcdSourceStreamPrivate* p = stream->private_data;
  struct ArrowDeviceArray device_array;
  int code = AcdSourceStreamGetNext(p, &device_array, ARROW_DEVICE_CPU);
  if (code != ACD_OK) {
    out->release = NULL;
    return code;
  }
  AcdArrayMove(&device_array.array, out);
  return ACD_OK;
}

static const char* AcdArraySourceGetLastError(struct ArrowArrayStream* stream) {
  return AcdSourceStreamLastError(stream->private_data);
}

static void AcdArraySourceRelease(struct ArrowArrayStream* stream) {
  AcdSourceStreamFree(stream->private_data);
  stream->release = NULL;
}

int AcdArrayStreamInitSource(struct ArrowArrayStream* stream, struct AcdBatchSource* source,
                             struct AcdError* error) {
  stream->release = NULL;
  if (source->release != NULL && source->device_type != ARROW_DEVICE_CPU) {
    return AcdErrorSet(error, EINVAL,
                       "source: device_type: an ArrowArrayStream carries CPU arrays (%d), found %d",
                       ARROW_DEVICE_CPU, source->device_type);
  }
  struct AcdSourceStreamPrivate* p;
  int code = AcdSourceStreamNew(source, &p, error);
  if (code != ACD_OK) return code;
  stream->get_schema = &AcdArraySourceGetSchema;
  stream->get_next = &AcdArraySourceGetNext;
  stream->get_last_error = &AcdArraySourceGetLastError;
  stream->private_data = p;
  stream->release = &AcdArraySourceRelease;
  return ACD_OK;
}

// ArrowDeviceArrayStream callbacks.

static int AcdDeviceSourceGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out) {
  return AcdSourceStreamGetSchema(stream->private_data, out);
}

static int AcdDeviceSourceGetNext(struct ArrowDeviceArrayStream* stream,
                                  struct ArrowDeviceArray* out) {
  return AcdSourceStreamGetNext(stream->private_data, out, stream->device_type);
}

static const char* AcdDeviceSourceGetLastError(struct ArrowDeviceArrayStream* stream) {
  return AcdSourceStreamLastError(stream->private_data);
}

static void AcdDeviceSourceRelease(struct ArrowDeviceArrayStream* stream) {
  AcdSourceStreamFree(stream->private_data);
  stream->release = NULL;
}

int AcdDeviceArrayStreamInitSource(struct ArrowDeviceArrayStream* stream,
                                   struct AcdBatchSource* source, struct AcdError* error) {
  stream->release = NULL;
  ArrowDeviceType device_type = source->device_type;
  struct AcdSourceStreamPrivate* p;
  int code = AcdSourceStreamNew(source, &p, error);
  if (code != ACD_OK) return code;
  stream->device_type = device_type;
  stream->get_schema = &AcdDeviceSourceGetSchema;
  stream->get_next = &AcdDeviceSourceGetNext;
  stream->get_last_error = &AcdDeviceSourceGetLastError;
  stream->private_data = p;
  stream->release = &AcdDeviceSourceRelease;
  return ACD_OK;
}

// ---- the C consumer ---------------------------------------------------------------

// Checks one batch against the stream's schema and moves it into list (or
// releases it). On failure the batch is released.
static int AcdDrainTake(struct ArrowDeviceArray* batch, const struct ArrowSchema* schema,
                        struct AcdBatchList* list, struct AcdStreamTotals* totals,
                        struct AcdError* error) {
  // Device memory is not read by the host: its buffers are checked to lie on
  // the device, with the struct, instead.
  int code = batch->device_type == ARROW_DEVICE_CPU
                 ? AcdArrayValidate(schema, &batch->array, ACD_VALIDATION_DEFAULT, error)
                 : AcdDeviceArrayValidate(schema, batch, error);
  if (code != ACD_OK) {
    AcdErrorPrefix(error, "batch %lld does not match the stream's schema", (long long)totals->batches);
    AcdArrayRelease(&batch->array);
    return code;
  }
  int64_t rows = batch->array.length;
  if (list != NULL) {
    code = AcdBatchListAppend(list, batch, error);
    if (code != ACD_OK) {
      AcdArrayRelease(&batch->array);
      return code;
    }
  } else {
    AcdArrayRelease(&batch->array);
  }
  totals->batches++;
  totals->rows += rows;
  return ACD_OK;
}

// Takes the schema: into the list when there is one, else into `own`.
static int AcdDrainSchema(struct ArrowSchema* schema, struct AcdBatchList* list,
                          struct ArrowSchema* own, struct ArrowSchema** out,
                          struct AcdError* error) {
  if (list != NULL) {
    if (list->schema.release != NULL) {
      AcdSchemaRelease(schema);
      return AcdErrorSet(error, EINVAL, "list: already holds a schema");
    }
    AcdSchemaMove(schema, &list->schema);
    *out = &list->schema;
  } else {
    AcdSchemaMove(schema, own);
    *out = own;
  }
  return ACD_OK;
}

int AcdArrayStreamDrain(struct ArrowArrayStream* stream, struct AcdBatchList* list,
                        struct AcdStreamTotals* totals, struct AcdError* error) {
  struct AcdStreamTotals local = {0, 0};
  if (totals == NULL) totals = &local;
  totals->batches = totals->rows = 0;
  struct ArrowSchema received, own;
  struct ArrowSchema* schema = NULL;
  own.release = NULL;
  int code = AcdArrayStreamGetSchema(stream, &received, error);
  if (code == ACD_OK) code = AcdDrainSchema(&received, list, &own, &schema, error);
  if (code == ACD_OK && list != NULL) list->device_type = ARROW_DEVICE_CPU;
  while (code == ACD_OK) {
    struct ArrowDeviceArray batch;
    memset(&batch, 0, sizeof(batch));
    code = AcdArrayStreamGetNext(stream, &batch.array, error);
    if (code != ACD_OK) {
      AcdErrorPrefix(error, "batch %lld", (long long)totals->batches);
      break;
    }
    if (batch.array.release == NULL) break;  // the end
    AcdDeviceArrayInitDevice(&batch, ARROW_DEVICE_CPU, -1);
    code = AcdDrainTake(&batch, schema, list, totals, error);
  }
  AcdSchemaRelease(&own);
  AcdArrayStreamRelease(stream);
  return code;
}

int AcdDeviceArrayStreamDrain(struct ArrowDeviceArrayStream* stream, struct AcdBatchList* list,
                              struct AcdStreamTotals* totals, struct AcdError* error) {
  struct AcdStreamTotals local = {0, 0};
  if (totals == NULL) totals = &local;
  totals->batches = totals->rows = 0;
  struct ArrowSchema received, own;
  struct ArrowSchema* schema = NULL;
  own.release = NULL;
  int code = AcdDeviceArrayStreamGetSchema(stream, &received, error);
  if (code == ACD_OK) code = AcdDrainSchema(&received, list, &own, &schema, error);
  if (code == ACD_OK && list != NULL) list->device_type = stream->device_type;
  while (code == ACD_OK) {
    struct ArrowDeviceArray batch;
    code = AcdDeviceArrayStreamGetNext(stream, &batch, error);
    if (code != ACD_OK) {
      AcdErrorPrefix(error, "batch %lld", (long long)totals->batches);
      break;
    }
    if (batch.array.release == NULL) break;  // the end
    code = AcdDrainTake(&batch, schema, list, totals, error);
  }
  AcdSchemaRelease(&own);
  AcdDeviceArrayStreamRelease(stream);
  return code;
}
