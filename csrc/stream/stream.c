// Pull streams (ArrowArrayStream, ArrowDeviceArrayStream): the C producer
// over a batch source and the C consumer that drains a stream (moves,
// releases and the checked consumer-side calls are in calls.c).
// Modelled on nanoarrow's array_stream.c.

#include <errno.h>
#include <string.h>

#include "stream/stream.h"

// ---- the C producer -------------------------------------------------------------

struct AcdSourceStreamPrivate {
  uint32_t kind;  // ACD_KIND_SOURCE_STREAM
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
  p->kind = 0;
  AcdBatchSourceRelease(&p->source);
  AcdFree(p);
}

static int AcdSourceStreamNew(struct AcdBatchSource* source, struct AcdSourceStreamPrivate** out,
                              struct AcdError* error) {
  if (source->release == NULL) return AcdErrorSet(error, EINVAL, "source: released");
  struct AcdSourceStreamPrivate* p = AcdCalloc(1, sizeof(struct AcdSourceStreamPrivate));
  if (p == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a stream");
  p->kind = ACD_KIND_SOURCE_STREAM;
  AcdBatchSourceMove(source, &p->source);
  *out = p;
  return ACD_OK;
}

// ArrowArrayStream callbacks.

// Each callback first checks that the struct's private_data is one of ours
// (a corrupted struct may point its callbacks here).
static const char acd_not_ours[] = "the stream's private_data is not a stream of this library";
#define ACD_SOURCE_STREAM(stream) \
  (AcdPrivateIs((stream)->private_data, ACD_KIND_SOURCE_STREAM) \
       ? (struct AcdSourceStreamPrivate*)(stream)->private_data    \
       : NULL)

int AcdArraySourceGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return EINVAL;
  return AcdSourceStreamGetSchema(p, out);
}

int AcdArraySourceGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return EINVAL;
  struct ArrowDeviceArray device_array;
  int code = AcdSourceStreamGetNext(p, &device_array, ARROW_DEVICE_CPU);
  if (code != ACD_OK) {
    out->release = NULL;
    return code;
  }
  AcdArrayMove(&device_array.array, out);
  return ACD_OK;
}

const char* AcdArraySourceGetLastError(struct ArrowArrayStream* stream) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  return p == NULL ? acd_not_ours : AcdSourceStreamLastError(p);
}

void AcdArraySourceRelease(struct ArrowArrayStream* stream) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return;  // AcdArrayStreamRelease reports it
  AcdSourceStreamFree(p);
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
  struct AcdSourceStreamPrivate* p = NULL;
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

int AcdDeviceSourceGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return EINVAL;
  return AcdSourceStreamGetSchema(p, out);
}

int AcdDeviceSourceGetNext(struct ArrowDeviceArrayStream* stream,
                                  struct ArrowDeviceArray* out) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return EINVAL;
  return AcdSourceStreamGetNext(p, out, stream->device_type);
}

const char* AcdDeviceSourceGetLastError(struct ArrowDeviceArrayStream* stream) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  return p == NULL ? acd_not_ours : AcdSourceStreamLastError(p);
}

void AcdDeviceSourceRelease(struct ArrowDeviceArrayStream* stream) {
  struct AcdSourceStreamPrivate* p = ACD_SOURCE_STREAM(stream);
  if (p == NULL) return;  // AcdDeviceArrayStreamRelease reports it
  AcdSourceStreamFree(p);
  stream->release = NULL;
}

// Known to abi/callback.c, each in its one role.
ACD_CONSTRUCTOR(AcdSourceStreamRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdArraySourceGetSchema, ACD_ROLE_ARRAY_STREAM_GET_SCHEMA);
  ACD_CALLBACK_REGISTER(&AcdArraySourceGetNext, ACD_ROLE_ARRAY_STREAM_GET_NEXT);
  ACD_CALLBACK_REGISTER(&AcdArraySourceGetLastError, ACD_ROLE_ARRAY_STREAM_GET_LAST_ERROR);
  ACD_CALLBACK_REGISTER(&AcdArraySourceRelease, ACD_ROLE_ARRAY_STREAM_RELEASE);
  ACD_CALLBACK_REGISTER(&AcdDeviceSourceGetSchema, ACD_ROLE_DEVICE_STREAM_GET_SCHEMA);
  ACD_CALLBACK_REGISTER(&AcdDeviceSourceGetNext, ACD_ROLE_DEVICE_STREAM_GET_NEXT);
  ACD_CALLBACK_REGISTER(&AcdDeviceSourceGetLastError, ACD_ROLE_DEVICE_STREAM_GET_LAST_ERROR);
  ACD_CALLBACK_REGISTER(&AcdDeviceSourceRelease, ACD_ROLE_DEVICE_STREAM_RELEASE);
}

int AcdDeviceArrayStreamInitSource(struct ArrowDeviceArrayStream* stream,
                                   struct AcdBatchSource* source, struct AcdError* error) {
  stream->release = NULL;
  ArrowDeviceType device_type = source->device_type;
  struct AcdSourceStreamPrivate* p = NULL;
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
