// The async device stream's C consumer: a handler that collects the stream
// into a batch list, with back-pressure (request(window) from on_schema, then
// request(1) per extracted task). Tasks are extracted inside on_next_task, or
// copied and extracted later in the pump (async_pump.c's run queue), which
// is how a consumer keeps a task beyond the call. Options make it cancel or
// fail on purpose, for the tests of the producers.

#include <errno.h>
#include <string.h>

#include "stream/stream.h"

struct AcdAsyncConsumer {
  // First, so that the job is the consumer.
  struct AcdAsyncJob job;
  struct ArrowAsyncDeviceStreamHandler handler;
  struct AcdAsyncConsumerOptions options;
  // Valid from on_schema until release.
  struct ArrowAsyncProducer* producer;
  struct AcdBatchList list;
  int schema_received;
  int ended;
  int released;
  int cancelled;
  // The consumer's own failure (not the producer's on_error): tasks still
  // queued are then not wanted.
  int failed;
  int error_code;
  struct AcdError error;
  char* additional_metadata;
  // Freed by AcdAsyncConsumerFree while the producer still held the handler:
  // the consumer frees itself when the producer releases it.
  int free_on_release;
  int64_t tasks;
  int64_t requested;
  // The producer's callback being called, for AcdConsumerAbort.
  const char* calling;
  // Copies of the tasks to extract in the pump (a ring of queue_capacity).
  struct ArrowAsyncTask* queue;
  int64_t queue_head;
  int64_t queue_length;
  int64_t queue_capacity;
};

void AcdAsyncConsumerOptionsInit(struct AcdAsyncConsumerOptions* options) {
  options->window = 4;
  options->extract_later = 0;
  options->cancel_after = -1;
  options->fail_task_at = -1;
  options->fail_schema = 0;
}

// Whether the producer may still be called: it is valid from on_schema until
// it releases the handler, and only request(1)/cancel are made.
static int AcdConsumerMayCallProducer(struct AcdAsyncConsumer* c) {
  return c->producer != NULL && !c->released && !c->ended;
}

// A task whose extract_data cannot be called (ACD_CALLBACK_VALID) is never
// called: its data stays with the producer.
#define ACD_TASK_CALLABLE(task) ACD_CALLBACK_VALID((task)->extract_data, ACD_ROLE_TASK_EXTRACT_DATA)

// Before on_schema the producer cannot be called: on_schema then answers
// ECANCELED, after which the producer calls release only.
static void AcdConsumerCancel(struct AcdAsyncConsumer* c) {
  if (c->cancelled) return;
  c->cancelled = 1;
  if (AcdConsumerMayCallProducer(c)) {
    c->calling = "cancel";
    c->producer->cancel(c->producer);
    c->calling = NULL;
  }
}

// Records the consumer's first failure and stops the stream.
static int AcdConsumerFail(struct AcdAsyncConsumer* c, int code) {
  if (c->error_code == ACD_OK) c->error_code = code;
  c->failed = 1;
  AcdConsumerCancel(c);
  return code;
}

// Extracts a task: into the list when the data is wanted, else with NULL.
static int AcdConsumerExtract(struct AcdAsyncConsumer* c, struct ArrowAsyncTask* task) {
  if (!ACD_TASK_CALLABLE(task)) {
    ACD_CALLBACK_CHECK(task->extract_data, ACD_ROLE_TASK_EXTRACT_DATA, "task.extract_data", &c->error);
    return AcdConsumerFail(c, EINVAL);
  }
  if (c->cancelled || c->failed) {
    task->extract_data(task, NULL);  // not wanted: the producer cleans up
    return ACD_OK;
  }
  struct ArrowDeviceArray array;
  memset(&array, 0, sizeof(array));
  c->calling = "extract_data";
  int code = task->extract_data(task, &array);
  c->calling = NULL;
  if (code != ACD_OK) {
    AcdErrorSet(&c->error, code, "extract_data (task %lld) returned %d", (long long)c->list.length, code);
    return AcdConsumerFail(c, code);
  }
  if (array.array.release == NULL) {
    AcdErrorSet(&c->error, EINVAL, "extract_data (task %lld) returned 0 and a released array",
                (long long)c->list.length);
    return AcdConsumerFail(c, EINVAL);
  }
  if (array.device_type != c->list.device_type) {
    AcdErrorSet(&c->error, EINVAL, "batch %lld: device_type: expected %d (the producer's), found %d",
                (long long)c->list.length, c->list.device_type, array.device_type);
    AcdArrayRelease(&array.array);
    return AcdConsumerFail(c, EINVAL);
  }
  code = array.device_type == ARROW_DEVICE_CPU
             ? AcdArrayValidate(&c->list.schema, &array.array, ACD_VALIDATION_DEFAULT, &c->error)
             : AcdDeviceArrayValidate(&c->list.schema, &array, &c->error);
  if (code == ACD_OK) code = AcdBatchListAppend(&c->list, &array, &c->error);
  if (code != ACD_OK) {
    AcdErrorPrefix(&c->error, "batch %lld", (long long)c->list.length);
    AcdArrayRelease(&array.array);
    return AcdConsumerFail(c, code);
  }
  if (c->options.cancel_after >= 0 && c->list.length >= c->options.cancel_after) {
    AcdConsumerCancel(c);
  } else if (AcdConsumerMayCallProducer(c) && !c->cancelled) {
    c->requested++;
    c->calling = "request";
    c->producer->request(c->producer, 1);
    c->calling = NULL;
  }
  return ACD_OK;
}

static int AcdConsumerOnSchema(struct ArrowAsyncDeviceStreamHandler* self,
                               struct ArrowSchema* stream_schema) {
  struct AcdAsyncConsumer* c = self->private_data;
  if (c->schema_received) {
    AcdErrorSet(&c->error, EINVAL, "on_schema: called a second time");
    AcdSchemaRelease(stream_schema);
    return AcdConsumerFail(c, EINVAL);
  }
  c->schema_received = 1;
  if (c->cancelled) {
    AcdSchemaRelease(stream_schema);  // cancelled (or freed) before on_schema
    return ECANCELED;
  }
  if (self->producer == NULL) {
    AcdErrorSet(&c->error, EINVAL, "on_schema: the producer member is NULL");
    AcdSchemaRelease(stream_schema);
    c->error_code = EINVAL;
    return EINVAL;
  }
  c->producer = self->producer;
  // The producer's callbacks are checked once, before any is called.
  int checked = c->producer == NULL || (uintptr_t)c->producer % _Alignof(struct ArrowAsyncProducer) != 0
                    ? AcdErrorSet(&c->error, EINVAL, "producer: expected an aligned struct, found %p", (void*)c->producer)
                    : ACD_CALLBACK_CHECK(c->producer->request, ACD_ROLE_PRODUCER_REQUEST, "producer.request", &c->error);
  if (checked == ACD_OK) {
    checked = ACD_CALLBACK_CHECK(c->producer->cancel, ACD_ROLE_PRODUCER_CANCEL, "producer.cancel", &c->error);
  }
  if (checked != ACD_OK) {
    c->producer = NULL;  // never called
    AcdSchemaRelease(stream_schema);
    c->error_code = checked;
    return checked;
  }
  if (c->options.fail_schema) {
    AcdErrorSet(&c->error, EINVAL, "on_schema: failing as asked");
    AcdSchemaRelease(stream_schema);  // the consumer owns it, even when failing
    c->error_code = EINVAL;
    return EINVAL;
  }
  int code = AcdSchemaValidate(stream_schema, &c->error);
  if (code != ACD_OK) {
    AcdErrorPrefix(&c->error, "on_schema");
    AcdSchemaRelease(stream_schema);
    c->error_code = code;
    return code;
  }
  const char* metadata = c->producer->additional_metadata;
  int64_t size = AcdMetadataSize(metadata, -1, &c->error);
  if (size < 0) {
    AcdErrorPrefix(&c->error, "additional_metadata");
    AcdSchemaRelease(stream_schema);
    c->error_code = EINVAL;
    return EINVAL;
  }
  if (metadata != NULL) {
    c->additional_metadata = AcdMalloc(size);
    if (c->additional_metadata == NULL) {
      AcdErrorSet(&c->error, ENOMEM, "out of memory copying additional_metadata");
      AcdSchemaRelease(stream_schema);
      c->error_code = ENOMEM;
      return ENOMEM;
    }
    memcpy(c->additional_metadata, metadata, (size_t)size);
  }
  AcdSchemaMove(stream_schema, &c->list.schema);
  c->list.device_type = c->producer->device_type;
  // Back-pressure: at most `window` tasks ahead of what was extracted.
  c->requested += c->options.window;
  c->producer->request(c->producer, c->options.window);
  return ACD_OK;
}

static int AcdConsumerQueue(struct AcdAsyncConsumer* c, const struct ArrowAsyncTask* task) {
  if (c->queue_length == c->queue_capacity) {
    int64_t capacity = c->queue_capacity == 0 ? 8 : c->queue_capacity * 2;
    struct ArrowAsyncTask* queue = AcdMalloc(capacity * (int64_t)sizeof(struct ArrowAsyncTask));
    if (queue == NULL) return ENOMEM;
    for (int64_t i = 0; i < c->queue_length; i++) {
      queue[i] = c->queue[(c->queue_head + i) % c->queue_capacity];
    }
    AcdFree(c->queue);
    c->queue = queue;
    c->queue_head = 0;
    c->queue_capacity = capacity;
  }
  // A copy: the producer's task struct is only valid during on_next_task.
  c->queue[(c->queue_head + c->queue_length) % c->queue_capacity] = *task;
  c->queue_length++;
  AcdAsyncSchedule(&c->job);
  return ACD_OK;
}

static int AcdConsumerOnNextTask(struct ArrowAsyncDeviceStreamHandler* self,
                                 struct ArrowAsyncTask* task, const char* metadata) {
  (void)metadata;  // only valid during the call; this consumer does not keep it
  struct AcdAsyncConsumer* c = self->private_data;
  if (task == NULL) {
    c->ended = 1;
    return ACD_OK;
  }
  int64_t k = c->tasks++;
  if (k == c->options.fail_task_at) {
    if (ACD_TASK_CALLABLE(task)) task->extract_data(task, NULL);
    AcdErrorSet(&c->error, EINVAL, "on_next_task: failing at task %lld as asked", (long long)k);
    c->error_code = EINVAL;
    return EINVAL;
  }
  int code;
  if (c->options.extract_later && !c->cancelled && !c->failed) {
    code = AcdConsumerQueue(c, task);
    if (code != ACD_OK) {
      if (ACD_TASK_CALLABLE(task)) task->extract_data(task, NULL);
      AcdErrorSet(&c->error, code, "out of memory queueing task %lld", (long long)k);
      return AcdConsumerFail(c, code);
    }
  } else {
    code = AcdConsumerExtract(c, task);
    if (code != ACD_OK) return code;
  }
  return ACD_OK;
}

static void AcdConsumerOnError(struct ArrowAsyncDeviceStreamHandler* self, int code,
                               const char* message, const char* metadata) {
  (void)metadata;
  struct AcdAsyncConsumer* c = self->private_data;
  // Copied now: message is only valid during this call. No producer calls here.
  if (c->error_code == ACD_OK) {
    c->error_code = code == ACD_OK ? EIO : code;
    if (message != NULL) {
      AcdErrorSet(&c->error, code, "%s", message);
    } else {
      AcdErrorSet(&c->error, code, "error %d from the producer, with no message", code);
    }
  }
}

static void AcdConsumerDestroy(struct AcdAsyncConsumer* c);

static void AcdConsumerRelease(struct ArrowAsyncDeviceStreamHandler* self) {
  struct AcdAsyncConsumer* c = self->private_data;
  c->released = 1;
  c->producer = NULL;  // no producer call after this
  if (c->free_on_release) AcdConsumerDestroy(c);
}

// The pump's step: cancel after a failure (see AcdConsumerAbort), or
// extract one queued task.
static void AcdConsumerStep(struct AcdAsyncJob* job) {
  struct AcdAsyncConsumer* c = (struct AcdAsyncConsumer*)job;
  c->calling = NULL;  // stale when a callback threw under another object's step
  if (c->failed && !c->cancelled) {
    AcdConsumerCancel(c);
    if (c->queue_length > 0) AcdAsyncSchedule(&c->job);
    return;
  }
  if (c->queue_length == 0) return;
  struct ArrowAsyncTask task = c->queue[c->queue_head];
  c->queue_head = (c->queue_head + 1) % c->queue_capacity;
  c->queue_length--;
  AcdConsumerExtract(c, &task);
  if (c->queue_length > 0) AcdAsyncSchedule(&c->job);
}

// A step did not return (AcdAsyncPumpAbort): what the producer's callback
// threw is the consumer's error; the next step cancels the producer.
static void AcdConsumerAbort(struct AcdAsyncJob* job, int code, const char* message) {
  struct AcdAsyncConsumer* c = (struct AcdAsyncConsumer*)job;
  const char* where = c->calling != NULL ? c->calling : "consumer";
  c->calling = NULL;
  if (c->error_code == ACD_OK) {
    c->error_code = code;
    if (strcmp(where, "extract_data") == 0) {
      AcdErrorSet(&c->error, code, "extract_data (task %lld): %s", (long long)c->list.length, message != NULL ? message : "aborted");
    } else {
      AcdErrorSet(&c->error, code, "%s: %s", where, message != NULL ? message : "aborted");
    }
  }
  c->failed = 1;
  AcdAsyncSchedule(&c->job);
}

int AcdAsyncConsumerNew(const struct AcdAsyncConsumerOptions* options,
                        struct AcdAsyncConsumer** out, struct AcdError* error) {
  *out = NULL;
  if (options->window <= 0) {
    return AcdErrorSet(error, EINVAL, "window: expected > 0, found %lld", (long long)options->window);
  }
  struct AcdAsyncConsumer* c = AcdCalloc(1, sizeof(struct AcdAsyncConsumer));
  if (c == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating a consumer");
  c->options = *options;
  c->job.step = &AcdConsumerStep;
  c->job.abort = &AcdConsumerAbort;
  AcdBatchListInit(&c->list);
  c->handler.on_schema = &AcdConsumerOnSchema;
  c->handler.on_next_task = &AcdConsumerOnNextTask;
  c->handler.on_error = &AcdConsumerOnError;
  c->handler.release = &AcdConsumerRelease;
  c->handler.producer = NULL;
  c->handler.private_data = c;
  AcdAsyncStatsMutable()->consumers_live++;
  *out = c;
  return ACD_OK;
}

struct ArrowAsyncDeviceStreamHandler* AcdAsyncConsumerHandler(struct AcdAsyncConsumer* consumer) {
  return &consumer->handler;
}

void AcdAsyncConsumerGetState(struct AcdAsyncConsumer* c, struct AcdAsyncConsumerState* out) {
  out->schema_received = c->schema_received;
  out->ended = c->ended;
  out->released = c->released;
  out->error_code = c->error_code;
  out->error_message = c->error_code == ACD_OK ? NULL : c->error.message;
  out->additional_metadata = c->additional_metadata;
  out->tasks = c->tasks;
  out->requested = c->requested;
  out->list = &c->list;
}

void AcdAsyncConsumerFree(struct AcdAsyncConsumer* c) {
  if (c == NULL) return;
  if (c->handler.producer != NULL && !c->released) {
    // A producer holds the handler: stop it, and go with its release.
    AcdConsumerCancel(c);
    c->free_on_release = 1;
    return;
  }
  AcdConsumerDestroy(c);
}

static void AcdConsumerDestroy(struct AcdAsyncConsumer* c) {
  AcdAsyncUnschedule(&c->job);
  c->cancelled = 1;
  while (c->queue_length > 0) {
    struct ArrowAsyncTask task = c->queue[c->queue_head];
    c->queue_head = (c->queue_head + 1) % c->queue_capacity;
    c->queue_length--;
    if (ACD_TASK_CALLABLE(&task)) task.extract_data(&task, NULL);
  }
  AcdFree(c->queue);
  AcdBatchListReset(&c->list);
  AcdFree(c->additional_metadata);
  AcdFree(c);
  AcdAsyncStatsMutable()->consumers_live--;
}
