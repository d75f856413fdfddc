// The C async producer, which feeds any ArrowAsyncDeviceStreamHandler (in C
// or in TypeScript) from a batch source, and the tasks it hands out.
//
// Wasm cannot block, and request must never call a handler synchronously, so
// the producer is a state machine: request and cancel only record what was
// asked and queue the producer; its steps (on_schema, one on_next_task, the
// end, an error) run in AcdAsyncPump, which the embedder calls when the
// scheduler tells it to (TypeScript: from a microtask; the queue is
// async_pump.c).

#include <errno.h>
#include <string.h>

#include "stream/stream.h"

// ---- tasks --------------------------------------------------------------------
// A task's private_data is an id, never reused while the counter does not wrap
// (2^32 tasks on wasm32), not the address of its data: a stale copy of a task
// extracted already must find nothing, not the next task in the same block.

struct AcdAsyncTaskPrivate {
  struct ArrowDeviceArray array;
  uintptr_t id;
  struct AcdAsyncTaskPrivate* next;
};

static struct AcdAsyncTaskPrivate* acd_tasks = NULL;  // the live ones
static uintptr_t acd_task_last_id = 0;

// Unlinks and returns the live task of id, or NULL.
static struct AcdAsyncTaskPrivate* AcdTaskTake(uintptr_t id) {
  for (struct AcdAsyncTaskPrivate** at = &acd_tasks; *at != NULL; at = &(*at)->next) {
    struct AcdAsyncTaskPrivate* p = *at;
    if (p->id != id) continue;
    *at = p->next;
    p->next = NULL;
    return p;
  }
  return NULL;
}

static void AcdTaskRegister(struct AcdAsyncTaskPrivate* p) {
  for (;;) {
    uintptr_t id = ++acd_task_last_id;
    int live = id == 0;
    for (struct AcdAsyncTaskPrivate* at = acd_tasks; at != NULL && !live; at = at->next) live = at->id == id;
    if (!live) {
      p->id = id;
      break;
    }
  }
  p->next = acd_tasks;
  acd_tasks = p;
}

// Moves the task's batch into out (out == NULL: releases it) and frees the
// task's data: exactly once; a second call, on the struct or on any copy of
// it, gives EINVAL.
static int AcdAsyncTaskExtract(struct ArrowAsyncTask* self, struct ArrowDeviceArray* out) {
  struct AcdAsyncTaskPrivate* p = AcdTaskTake((uintptr_t)self->private_data);
  if (p == NULL) return EINVAL;  // extracted already, or a stale copy
  self->private_data = NULL;
  if (out != NULL) {
    AcdDeviceArrayMove(&p->array, out);
    AcdAsyncStatsMutable()->tasks_extracted++;
  } else {
    AcdArrayRelease(&p->array.array);
    AcdAsyncStatsMutable()->tasks_discarded++;
  }
  AcdFree(p);
  AcdAsyncStatsMutable()->tasks_live--;
  return ACD_OK;
}

// ---- the producer ---------------------------------------------------------------

enum AcdProducerPhase { ACD_PRODUCER_SCHEMA, ACD_PRODUCER_RUNNING };

struct AcdAsyncProducerPrivate {
  // First, so that the job is the producer.
  struct AcdAsyncJob job;
  struct ArrowAsyncProducer producer;
  struct ArrowAsyncDeviceStreamHandler* handler;
  struct AcdBatchSource source;
  char* additional_metadata;
  enum AcdProducerPhase phase;
  int64_t credit;
  int cancelled;
  int64_t batches;
  // An error to report with on_error at the next step (from request).
  int pending_code;
  struct AcdError error;
  // In p, not on the stack: a step cut short (AcdAsyncPumpAbort) releases
  // what it was handing over.
  struct ArrowSchema schema;
  uintptr_t task_in_flight;
  // The handler callback being called, for AcdProducerAbort.
  const char* calling;
  // How many times a step was cut short; the steps after it only report.
  int aborted;
  int release_only;
};

static void AcdProducerRequest(struct ArrowAsyncProducer* self, int64_t n) {
  struct AcdAsyncProducerPrivate* p = self->private_data;
  if (p->cancelled) return;  // a NOP after cancel, as the spec asks
  if (n <= 0) {
    if (p->pending_code == ACD_OK) {
      p->pending_code = AcdErrorSet(&p->error, EINVAL, "request: n must be > 0, found %lld",
                                    (long long)n);
    }
  } else {
    p->credit = n > INT64_MAX - p->credit ? INT64_MAX : p->credit + n;
  }
  AcdAsyncSchedule(&p->job);
}

static void AcdProducerCancel(struct ArrowAsyncProducer* self) {
  struct AcdAsyncProducerPrivate* p = self->private_data;
  if (p->cancelled) return;
  p->cancelled = 1;
  AcdAsyncSchedule(&p->job);
}

// A handler callback that is not callable (ACD_CALLBACK_VALID) is skipped:
// the producer then finishes, as after a consumer's failure.
#define ACD_HANDLER_CALLABLE(p, fn, role) ACD_CALLBACK_VALID((p)->handler->fn, (role))

static void AcdProducerDestroy(struct AcdAsyncProducerPrivate* p) {
  AcdAsyncUnschedule(&p->job);
  AcdBatchSourceRelease(&p->source);
  AcdFree(p->additional_metadata);
  AcdFree(p);
  AcdAsyncStatsMutable()->producers_live--;
}

// The last call on the handler, then the producer's own clean-up (the
// producer struct stays valid until handler->release has returned).
static void AcdProducerFinish(struct AcdAsyncProducerPrivate* p) {
  p->calling = "release";
  if (ACD_HANDLER_CALLABLE(p, release, ACD_ROLE_HANDLER_RELEASE)) p->handler->release(p->handler);
  p->calling = NULL;
  AcdProducerDestroy(p);
}

static void AcdProducerFail(struct AcdAsyncProducerPrivate* p, int code) {
  p->calling = "on_error";
  if (ACD_HANDLER_CALLABLE(p, on_error, ACD_ROLE_HANDLER_ON_ERROR)) {
    p->handler->on_error(p->handler, code, p->error.message, NULL);
  }
  p->calling = NULL;
  AcdProducerFinish(p);
}

// Releases a task handed over whose extract_data never came: a copy the
// handler kept now gives EINVAL.
static void AcdProducerDropTask(struct AcdAsyncProducerPrivate* p) {
  struct AcdAsyncTaskPrivate* task = AcdTaskTake(p->task_in_flight);
  p->task_in_flight = 0;
  if (task == NULL) return;
  AcdArrayRelease(&task->array.array);
  AcdFree(task);
  AcdAsyncStatsMutable()->tasks_live--;
  AcdAsyncStatsMutable()->tasks_discarded++;
}

// A step did not return (AcdAsyncPumpAbort): what the handler's callback
// threw goes to its on_error, then release, from the next step; when the
// callback was on_error, release only; when it was release, nothing more.
static void AcdProducerAbort(struct AcdAsyncJob* job, int code, const char* message) {
  struct AcdAsyncProducerPrivate* p = (struct AcdAsyncProducerPrivate*)job;
  const char* where = p->calling;
  p->calling = NULL;
  AcdSchemaRelease(&p->schema);  // a NOP once the handler moved it
  AcdProducerDropTask(p);
  if ((where != NULL && strcmp(where, "release") == 0) || p->aborted >= 3) {
    AcdProducerDestroy(p);
    return;
  }
  if (p->aborted++ == 0 && (where == NULL || strcmp(where, "on_error") != 0)) {
    AcdErrorSet(&p->error, code, "%s: %s", where != NULL ? where : "producer", message != NULL ? message : "aborted");
    p->pending_code = code;
  } else {
    p->release_only = 1;
  }
  AcdAsyncSchedule(&p->job);
}

static void AcdProducerStepSchema(struct AcdAsyncProducerPrivate* p) {
  struct ArrowSchema* schema = &p->schema;
  int code = p->source.get_schema(&p->source, schema, &p->error);
  if (code != ACD_OK) {
    AcdErrorPrefix(&p->error, "schema");
    AcdProducerFail(p, code);
    return;
  }
  p->calling = "on_schema";
  code = ACD_HANDLER_CALLABLE(p, on_schema, ACD_ROLE_HANDLER_ON_SCHEMA)
             ? p->handler->on_schema(p->handler, schema)
             : EINVAL;
  p->calling = NULL;
  // The consumer moves the schema out; release whatever it left.
  AcdSchemaRelease(schema);
  if (code != ACD_OK) {
    AcdProducerFinish(p);  // no on_error after a consumer's failure
    return;
  }
  p->phase = ACD_PRODUCER_RUNNING;
  if (p->credit > 0 || p->cancelled || p->pending_code != ACD_OK) AcdAsyncSchedule(&p->job);
}

static void AcdProducerStepNext(struct AcdAsyncProducerPrivate* p) {
  if (p->pending_code != ACD_OK) {
    AcdProducerFail(p, p->pending_code);
    return;
  }
  if (p->cancelled) {
    AcdProducerFinish(p);  // cancelling is not an error: release only
    return;
  }
  if (p->credit <= 0) return;  // idle until request
  if (!ACD_HANDLER_CALLABLE(p, on_next_task, ACD_ROLE_HANDLER_ON_NEXT_TASK)) {
    AcdProducerFinish(p);
    return;
  }

  struct ArrowDeviceArray array;
  int code = p->source.get_next(&p->source, &array, &p->error);
  if (code != ACD_OK) {
    AcdErrorPrefix(&p->error, "batch %lld", (long long)p->batches);
    AcdProducerFail(p, code);
    return;
  }
  p->credit--;
  if (array.array.release == NULL) {
    p->calling = "on_next_task";
    p->handler->on_next_task(p->handler, NULL, NULL);  // the end
    AcdProducerFinish(p);
    return;
  }
  if (array.device_type != p->producer.device_type) {
    int found = array.device_type;
    AcdArrayRelease(&array.array);
    AcdErrorSet(&p->error, EINVAL, "batch %lld: device_type: expected %d (the producer's), found %d",
                (long long)p->batches, p->producer.device_type, found);
    AcdProducerFail(p, EINVAL);
    return;
  }
  struct AcdAsyncTaskPrivate* task_data = AcdMalloc(sizeof(struct AcdAsyncTaskPrivate));
  if (task_data == NULL) {
    AcdArrayRelease(&array.array);
    AcdErrorSet(&p->error, ENOMEM, "out of memory allocating a task");
    AcdProducerFail(p, ENOMEM);
    return;
  }
  AcdDeviceArrayMove(&array, &task_data->array);
  AcdTaskRegister(task_data);
  AcdAsyncStatsMutable()->tasks_created++;
  AcdAsyncStatsMutable()->tasks_live++;
  p->batches++;
  // Valid during the call only: a consumer that keeps the task copies it.
  struct ArrowAsyncTask task = {&AcdAsyncTaskExtract, (void*)task_data->id};
  p->task_in_flight = task_data->id;
  p->calling = "on_next_task";
  code = p->handler->on_next_task(p->handler, &task, NULL);
  p->calling = NULL;
  p->task_in_flight = 0;
  if (code != ACD_OK) {
    AcdProducerFinish(p);
    return;
  }
  if (p->credit > 0 || p->cancelled || p->pending_code != ACD_OK) AcdAsyncSchedule(&p->job);
}

static void AcdProducerStep(struct AcdAsyncJob* job) {
  struct AcdAsyncProducerPrivate* p = (struct AcdAsyncProducerPrivate*)job;
  if (p->release_only) {
    AcdProducerFinish(p);
  } else if (p->aborted) {
    AcdProducerFail(p, p->pending_code);
  } else if (p->phase == ACD_PRODUCER_SCHEMA) {
    AcdProducerStepSchema(p);
  } else {
    AcdProducerStepNext(p);
  }
}

int AcdAsyncProducerStart(struct ArrowAsyncDeviceStreamHandler* handler,
                          struct AcdBatchSource* source, const char* additional_metadata,
                          struct AcdError* error) {
  if (handler == NULL) return AcdErrorSet(error, EINVAL, "handler: expected a handler, found NULL");
  if ((uintptr_t)handler % _Alignof(struct ArrowAsyncDeviceStreamHandler) != 0) {
    return AcdErrorSet(error, EINVAL, "handler: the struct at %p is misaligned", (void*)handler);
  }
  int checked = ACD_CALLBACK_CHECK(handler->on_schema, ACD_ROLE_HANDLER_ON_SCHEMA, "handler.on_schema", error);
  if (checked == ACD_OK) checked = ACD_CALLBACK_CHECK(handler->on_next_task, ACD_ROLE_HANDLER_ON_NEXT_TASK, "handler.on_next_task", error);
  if (checked == ACD_OK) checked = ACD_CALLBACK_CHECK(handler->on_error, ACD_ROLE_HANDLER_ON_ERROR, "handler.on_error", error);
  if (checked == ACD_OK) checked = ACD_CALLBACK_CHECK(handler->release, ACD_ROLE_HANDLER_RELEASE, "handler.release", error);
  if (checked != ACD_OK) return checked;
  if (source->release == NULL) return AcdErrorSet(error, EINVAL, "source: released");
  int64_t metadata_size = AcdMetadataSize(additional_metadata, -1, error);
  if (metadata_size < 0) {
    AcdErrorPrefix(error, "additional_metadata");
    return EINVAL;
  }
  struct AcdAsyncProducerPrivate* p = AcdCalloc(1, sizeof(struct AcdAsyncProducerPrivate));
  if (p == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a producer");
  if (additional_metadata != NULL) {
    p->additional_metadata = AcdMalloc(metadata_size);
    if (p->additional_metadata == NULL) {
      AcdFree(p);
      return AcdErrorSet(error, ENOMEM, "out of memory copying additional_metadata");
    }
    memcpy(p->additional_metadata, additional_metadata, (size_t)metadata_size);
  }
  p->job.step = &AcdProducerStep;
  p->job.abort = &AcdProducerAbort;
  p->handler = handler;
  p->phase = ACD_PRODUCER_SCHEMA;
  p->producer.device_type = source->device_type;
  p->producer.request = &AcdProducerRequest;
  p->producer.cancel = &AcdProducerCancel;
  p->producer.additional_metadata = p->additional_metadata;
  p->producer.private_data = p;
  AcdBatchSourceMove(source, &p->source);
  // Populated before any callback, as the spec requires.
  handler->producer = &p->producer;
  AcdAsyncStatsMutable()->producers_live++;
  AcdAsyncSchedule(&p->job);
  return ACD_OK;
}
