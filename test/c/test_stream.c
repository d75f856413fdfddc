// Tests of the C core's streams, built natively (test/c/run.sh) with
// ASan/UBSan and by emcc: pull streams (the generator and list producers, the
// consumer-side calls, the drain consumer) and the async device stream (the C
// producer and consumer driven by the pump, and a recording handler that
// checks the producer's side of the protocol); and every layout (run-end
// encoded, list views, binary views) through all of them.
//
// Prints "c-stream: N passed, M failed" and exits non-zero when M > 0.
//
// Longer than 400 lines because it is one test program: the pull and async
// cases share the sources, the recording handler and the harness.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stream/stream.h"
#include "check.h"

// Every test leaves the live byte count where it found it.
#define CHECK_NO_LEAK(start) CHECK(AcdBytesAllocated() == (start))

// ---- helpers --------------------------------------------------------------------

static struct AcdGeneratorOptions Options(int64_t n_batches, int64_t rows) {
  struct AcdGeneratorOptions options;
  AcdGeneratorOptionsInit(&options);
  options.n_batches = n_batches;
  options.rows_per_batch = rows;
  return options;
}

static void InitGenerated(struct ArrowDeviceArrayStream* stream,
                          const struct AcdGeneratorOptions* options) {
  struct AcdError error;
  struct AcdBatchSource source;
  CHECK_OK(AcdBatchSourceInitGenerator(&source, options, &error), &error);
  CHECK_OK(AcdDeviceArrayStreamInitSource(stream, &source, &error), &error);
  CHECK(source.release == NULL);  // moved into the stream
}

// Checks the generator's values in batch b of a stream of `rows` rows per batch.
static void CheckGenerated(const struct ArrowArray* batch, int64_t b, int64_t rows) {
  CHECK(batch->length == rows && batch->n_children == 3);
  const int32_t* ids = batch->children[0]->buffers[1];
  const double* values = batch->children[1]->buffers[1];
  const uint8_t* value_valid = batch->children[1]->buffers[0];
  const int32_t* offsets = batch->children[2]->buffers[1];
  const char* data = batch->children[2]->buffers[2];
  const uint8_t* name_valid = batch->children[2]->buffers[0];
  int ok = 1;
  for (int64_t i = 0; i < rows; i++) {
    int64_t r = b * rows + i;
    char text[32];
    int len = snprintf(text, sizeof(text), "r%lld", (long long)r);
    int value_is_valid = value_valid == NULL || ((value_valid[i >> 3] >> (i & 7)) & 1);
    int name_is_valid = name_valid == NULL || ((name_valid[i >> 3] >> (i & 7)) & 1);
    ok &= ids[i] == r;
    ok &= value_is_valid == (r % 7 != 3);
    if (value_is_valid) ok &= values[i] == (double)r * 0.5;
    ok &= name_is_valid == (r % 5 != 4);
    if (name_is_valid) {
      ok &= offsets[i + 1] - offsets[i] == len && memcmp(data + offsets[i], text, (size_t)len) == 0;
    }
  }
  CHECK(ok);
}

// ---- pull streams -----------------------------------------------------------------

static void TestGeneratedDeviceStream(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct AcdGeneratorOptions options = Options(3, 10);
  struct ArrowDeviceArrayStream stream;
  InitGenerated(&stream, &options);
  CHECK(stream.device_type == ARROW_DEVICE_CPU);

  struct ArrowSchema schema;
  CHECK_OK(AcdDeviceArrayStreamGetSchema(&stream, &schema, &error), &error);
  CHECK(strcmp(schema.format, "+s") == 0 && schema.n_children == 3);
  CHECK(strcmp(schema.children[2]->name, "name") == 0);
  CHECK_OK(AcdSchemaValidate(&schema, &error), &error);

  struct ArrowDeviceArray batches[3];
  for (int b = 0; b < 3; b++) {
    CHECK_OK(AcdDeviceArrayStreamGetNext(&stream, &batches[b], &error), &error);
    CHECK(batches[b].array.release != NULL);
    CHECK(batches[b].device_type == ARROW_DEVICE_CPU && batches[b].device_id == -1);
    CHECK(batches[b].sync_event == NULL);
    CHECK_OK(AcdArrayValidate(&schema, &batches[b].array, ACD_VALIDATION_FULL, &error), &error);
  }
  // The end: a released array and 0, again and again.
  struct ArrowDeviceArray end;
  CHECK_OK(AcdDeviceArrayStreamGetNext(&stream, &end, &error), &error);
  CHECK(end.array.release == NULL);
  CHECK_OK(AcdDeviceArrayStreamGetNext(&stream, &end, &error), &error);
  CHECK(end.array.release == NULL);

  // Results are released independently of the stream: the stream goes first.
  AcdDeviceArrayStreamRelease(&stream);
  CHECK(stream.release == NULL);
  for (int b = 0; b < 3; b++) {
    CheckGenerated(&batches[b].array, b, 10);
    AcdArrayRelease(&batches[b].array);
  }
  AcdSchemaRelease(&schema);
  CHECK_NO_LEAK(start);
}

static void TestReleasedStreamIsNeverCalled(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct AcdGeneratorOptions options = Options(1, 1);
  struct ArrowDeviceArrayStream stream, moved;
  InitGenerated(&stream, &options);
  AcdDeviceArrayStreamMove(&stream, &moved);
  CHECK(stream.release == NULL && moved.release != NULL);
  struct ArrowSchema schema;
  struct ArrowDeviceArray array;
  CHECK_FAILS(AcdDeviceArrayStreamGetSchema(&stream, &schema, &error), EINVAL, &error, "released");
  CHECK_FAILS(AcdDeviceArrayStreamGetNext(&stream, &array, &error), EINVAL, &error, "released");
  AcdDeviceArrayStreamRelease(&stream);  // a NOP on a released stream
  AcdDeviceArrayStreamRelease(&moved);
  CHECK(moved.release == NULL);
  CHECK_NO_LEAK(start);
}

static void TestErrorMidStream(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct AcdGeneratorOptions options = Options(4, 3);
  options.fail_at = 2;
  options.fail_code = EIO;
  options.fail_message = "disk on fire";
  struct ArrowDeviceArrayStream stream;
  InitGenerated(&stream, &options);
  struct ArrowDeviceArray array;
  for (int b = 0; b < 2; b++) {
    CHECK_OK(AcdDeviceArrayStreamGetNext(&stream, &array, &error), &error);
    // get_last_error is only meaningful after an error: ours gives NULL then.
    CHECK(stream.get_last_error(&stream) == NULL);
    AcdArrayRelease(&array.array);
  }
  CHECK_FAILS(AcdDeviceArrayStreamGetNext(&stream, &array, &error), EIO, &error,
              "get_next: disk on fire");
  CHECK(array.array.release == NULL);
  const char* message = stream.get_last_error(&stream);
  CHECK(message != NULL && strstr(message, "disk on fire") != NULL);
  // After a failure the stream keeps failing the same way.
  CHECK(stream.get_next(&stream, &array) == EIO);
  CHECK(array.array.release == NULL);
  AcdDeviceArrayStreamRelease(&stream);

  // The drain consumer reports it, keeps what came before, releases the stream.
  InitGenerated(&stream, &options);
  struct AcdBatchList list;
  AcdBatchListInit(&list);
  struct AcdStreamTotals totals;
  CHECK_FAILS(AcdDeviceArrayStreamDrain(&stream, &list, &totals, &error), EIO, &error,
              "batch 2: get_next: disk on fire");
  CHECK(stream.release == NULL);
  CHECK(list.length == 2 && totals.batches == 2 && totals.rows == 6);
  AcdBatchListReset(&list);

  // get_schema failures too.
  options.fail_at = -2;
  options.fail_message = "no schema today";
  InitGenerated(&stream, &options);
  CHECK_FAILS(AcdDeviceArrayStreamDrain(&stream, NULL, NULL, &error), EIO, &error,
              "get_schema: no schema today");
  CHECK(stream.release == NULL);
  CHECK_NO_LEAK(start);
}

static void TestDrainListAndReplay(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct AcdGeneratorOptions options = Options(5, 7);
  struct ArrowDeviceArrayStream stream;
  InitGenerated(&stream, &options);
  struct AcdBatchList list;
  AcdBatchListInit(&list);
  struct AcdStreamTotals totals;
  CHECK_OK(AcdDeviceArrayStreamDrain(&stream, &list, &totals, &error), &error);
  CHECK(stream.release == NULL);
  CHECK(list.length == 5 && totals.batches == 5 && totals.rows == 35);
  CHECK(list.device_type == ARROW_DEVICE_CPU && list.schema.release != NULL);

  // The list handed out again, as an ArrowArrayStream this time.
  struct AcdBatchSource source;
  CHECK_OK(AcdBatchSourceInitList(&source, &list, &error), &error);
  CHECK(list.length == 0 && list.schema.release == NULL);
  struct ArrowArrayStream array_stream;
  CHECK_OK(AcdArrayStreamInitSource(&array_stream, &source, &error), &error);
  struct ArrowSchema schema1, schema2;
  CHECK_OK(AcdArrayStreamGetSchema(&array_stream, &schema1, &error), &error);
  CHECK_OK(AcdArrayStreamGetSchema(&array_stream, &schema2, &error), &error);  // a second copy
  CHECK(schema1.format != schema2.format && strcmp(schema1.format, schema2.format) == 0);
  AcdSchemaRelease(&schema2);
  struct ArrowArray array;
  for (int b = 0; b < 5; b++) {
    CHECK_OK(AcdArrayStreamGetNext(&array_stream, &array, &error), &error);
    CheckGenerated(&array, b, 7);
    CHECK_OK(AcdArrayValidate(&schema1, &array, ACD_VALIDATION_FULL, &error), &error);
    AcdArrayRelease(&array);
  }
  CHECK_OK(AcdArrayStreamGetNext(&array_stream, &array, &error), &error);
  CHECK(array.release == NULL);
  AcdSchemaRelease(&schema1);
  AcdArrayStreamRelease(&array_stream);

  // Plain streams drained into a list become CPU device arrays.
  struct AcdGeneratorOptions small = Options(2, 2);
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &small, &error), &error);
  CHECK_OK(AcdArrayStreamInitSource(&array_stream, &source, &error), &error);
  CHECK_OK(AcdArrayStreamDrain(&array_stream, &list, &totals, &error), &error);
  CHECK(list.length == 2 && list.arrays[1].device_type == ARROW_DEVICE_CPU);
  CHECK(list.arrays[1].device_id == -1);
  CheckGenerated(&list.arrays[1].array, 1, 2);
  AcdBatchListReset(&list);
  CHECK_NO_LEAK(start);
}

// A hand-made stream whose batches can be wrong: on another device type, or
// not matching the schema.
struct FakeStream {
  int calls_after_release;
  int released;
  int next;
  int wrong_device;
};

static int FakeGetSchema(struct ArrowDeviceArrayStream* self, struct ArrowSchema* out) {
  struct FakeStream* f = self->private_data;
  if (f->released) f->calls_after_release++;
  AcdSchemaInit(out, "+s", "", NULL, 0, 1, 0, NULL);
  return AcdSchemaInit(out->children[0], "i", "x", NULL, ARROW_FLAG_NULLABLE, 0, 0, NULL);
}

static int FakeGetNext(struct ArrowDeviceArrayStream* self, struct ArrowDeviceArray* out) {
  struct FakeStream* f = self->private_data;
  if (f->released) f->calls_after_release++;
  out->array.release = NULL;
  if (f->next++ > 0) return ACD_OK;
  // A struct with no children: does not match the schema's one column.
  AcdArrayInit(&out->array, 1, 0, 0, 1, 0, 0, NULL);
  AcdDeviceArrayInitDevice(out, f->wrong_device ? ARROW_DEVICE_CUDA : ARROW_DEVICE_CPU, -1);
  return ACD_OK;
}

static const char* FakeGetLastError(struct ArrowDeviceArrayStream* self) {
  struct FakeStream* f = self->private_data;
  if (f->released) f->calls_after_release++;
  return NULL;
}

static void FakeRelease(struct ArrowDeviceArrayStream* self) {
  struct FakeStream* f = self->private_data;
  f->released = 1;
  self->release = NULL;
}

static void InitFake(struct ArrowDeviceArrayStream* stream, struct FakeStream* fake) {
  memset(fake, 0, sizeof(*fake));
  stream->device_type = ARROW_DEVICE_CPU;
  stream->get_schema = &FakeGetSchema;
  stream->get_next = &FakeGetNext;
  stream->get_last_error = &FakeGetLastError;
  stream->release = &FakeRelease;
  stream->private_data = fake;
}

static void TestConsumerChecks(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct ArrowDeviceArrayStream stream;
  struct FakeStream fake;

  // A batch on another device type than the stream's is an error, and released.
  InitFake(&stream, &fake);
  fake.wrong_device = 1;
  struct ArrowDeviceArray array;
  CHECK_FAILS(AcdDeviceArrayStreamGetNext(&stream, &array, &error), EINVAL, &error,
              "device_type: expected 1 (the stream's), found 2");
  CHECK(array.array.release == NULL);
  AcdDeviceArrayStreamRelease(&stream);
  CHECK(fake.released);

  // A batch that does not match the schema stops the drain consumer.
  InitFake(&stream, &fake);
  CHECK_FAILS(AcdDeviceArrayStreamDrain(&stream, NULL, NULL, &error), EINVAL, &error,
              "batch 0 does not match the stream's schema");
  CHECK(fake.released && fake.calls_after_release == 0);

  // A producer-side check too: the C producer refuses a batch of another device.
  struct AcdGeneratorOptions options = Options(3, 2);
  options.wrong_device_at = 1;
  InitGenerated(&stream, &options);
  CHECK_FAILS(AcdDeviceArrayStreamDrain(&stream, NULL, NULL, &error), EINVAL, &error,
              "batch 1: get_next: device_type: expected 1 (the stream's), found 12");

  // An ArrowArrayStream only carries CPU arrays.
  struct AcdBatchSource source;
  options = Options(1, 1);
  options.device_type = ARROW_DEVICE_CUDA;
  options.device_id = 0;
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
  struct ArrowArrayStream array_stream;
  CHECK_FAILS(AcdArrayStreamInitSource(&array_stream, &source, &error), EINVAL, &error,
              "an ArrowArrayStream carries CPU arrays");
  CHECK(source.release != NULL && array_stream.release == NULL);  // the caller keeps it
  AcdBatchSourceRelease(&source);
  CHECK_NO_LEAK(start);
}

static void TestSchemaDeepCopy(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  const char metadata[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', 'w'};
  struct ArrowSchema src, dst;
  CHECK_OK(AcdSchemaInit(&src, "+s", "root", metadata, 0, 1, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(src.children[0], "i", "dict", NULL, ARROW_FLAG_NULLABLE, 0, 1, &error),
           &error);
  CHECK_OK(AcdSchemaInit(src.children[0]->dictionary, "u", NULL, NULL, 2, 0, 0, &error), &error);
  CHECK_OK(AcdSchemaDeepCopy(&src, &dst, &error), &error);
  AcdSchemaRelease(&src);
  CHECK_OK(AcdSchemaValidate(&dst, &error), &error);
  CHECK(strcmp(dst.name, "root") == 0 && memcmp(dst.metadata, metadata, sizeof(metadata)) == 0);
  CHECK(strcmp(dst.children[0]->dictionary->format, "u") == 0);
  CHECK(dst.children[0]->dictionary->name == NULL);
  CHECK_FAILS(AcdSchemaDeepCopy(&src, &src, &error), EINVAL, &error, "released");
  AcdSchemaRelease(&dst);
  CHECK_NO_LEAK(start);
}

// ---- async ------------------------------------------------------------------------

static int g_scheduled = 0;
static void Scheduler(void* user) {
  (void)user;
  g_scheduled++;
}

static void RunPump(void) {
  while (AcdAsyncPending() > 0) AcdAsyncPump(16);
}

// A handler that records every call ("S" schema, "T" task, "N" end, "X" error,
// "R" release) and checks the producer's side of the protocol as it goes.
struct Recorder {
  struct ArrowAsyncDeviceStreamHandler handler;
  char log[256];
  int in_request;
  int in_callback;
  int violations;
  int64_t requested;
  int64_t delivered;  // on_next_task calls, the end included
  int64_t request_in_schema;
  int64_t request_per_task;
  int64_t cancel_at;  // cancel after this many tasks (-1 never)
  int return_in_schema;
  int64_t fail_task_at;
  int error_code;
  char error_message[128];
  int metadata_ok;
  struct AcdBatchList list;
};

static void Log(struct Recorder* r, char c) {
  size_t n = strlen(r->log);
  if (n + 1 < sizeof(r->log)) {
    r->log[n] = c;
    r->log[n + 1] = '\0';
  }
}

static void Enter(struct Recorder* r, char c) {
  // Never re-entered, never called from inside request, never after release.
  if (r->in_request || r->in_callback || strchr(r->log, 'R') != NULL) r->violations++;
  r->in_callback = 1;
  Log(r, c);
}

static void RecorderRequest(struct Recorder* r, int64_t n) {
  r->requested += n;
  r->in_request = 1;
  r->handler.producer->request(r->handler.producer, n);
  r->in_request = 0;
}

static int RecorderOnSchema(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowSchema* schema) {
  struct Recorder* r = self->private_data;
  Enter(r, 'S');
  // Populated before on_schema; additional_metadata valid until release.
  if (self->producer == NULL) r->violations++;
  const char* m = self->producer->additional_metadata;
  r->metadata_ok = m != NULL && AcdMetadataSize(m, -1, NULL) == 15 && m[8] == 'k';
  AcdSchemaMove(schema, &r->list.schema);
  r->list.device_type = self->producer->device_type;
  int code = r->return_in_schema;
  if (code == ACD_OK && r->request_in_schema != 0) RecorderRequest(r, r->request_in_schema);
  r->in_callback = 0;
  return code;
}

static int RecorderOnNextTask(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowAsyncTask* task,
                              const char* metadata) {
  (void)metadata;
  struct Recorder* r = self->private_data;
  Enter(r, task == NULL ? 'N' : 'T');
  r->delivered++;
  if (r->delivered > r->requested) r->violations++;  // only within the credit
  int code = ACD_OK;
  if (task != NULL) {
    int64_t k = r->delivered - 1;
    struct ArrowDeviceArray array;
    if (k == r->fail_task_at) {
      task->extract_data(task, NULL);
      code = EINVAL;
    } else {
      if (task->extract_data(task, &array) != ACD_OK) r->violations++;
      // Exactly once: a second call is refused.
      if (task->extract_data(task, &array) != EINVAL) r->violations++;
      struct AcdError error;
      if (AcdBatchListAppend(&r->list, &array, &error) != ACD_OK) r->violations++;
      if (k + 1 == r->cancel_at) {
        self->producer->cancel(self->producer);
        self->producer->cancel(self->producer);  // idempotent
        RecorderRequest(r, 5);  // a NOP after cancel
      } else if (r->request_per_task != 0) {
        RecorderRequest(r, r->request_per_task);
      }
    }
  }
  r->in_callback = 0;
  return code;
}

static void RecorderOnError(struct ArrowAsyncDeviceStreamHandler* self, int code, const char* message,
                            const char* metadata) {
  (void)metadata;
  struct Recorder* r = self->private_data;
  Enter(r, 'X');
  r->error_code = code;
  snprintf(r->error_message, sizeof(r->error_message), "%s", message == NULL ? "" : message);
  r->in_callback = 0;
}

static void RecorderRelease(struct ArrowAsyncDeviceStreamHandler* self) {
  struct Recorder* r = self->private_data;
  Enter(r, 'R');
  if (AcdAsyncPump(100) != 0) r->violations++;  // no pump from inside the pump
  r->in_callback = 0;
}

static void InitRecorder(struct Recorder* r) {
  memset(r, 0, sizeof(*r));
  r->handler.on_schema = &RecorderOnSchema;
  r->handler.on_next_task = &RecorderOnNextTask;
  r->handler.on_error = &RecorderOnError;
  r->handler.release = &RecorderRelease;
  r->handler.private_data = r;
  r->cancel_at = -1;
  r->fail_task_at = -1;
  AcdBatchListInit(&r->list);
}

static const char kMetadata[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', 'w'};

static void StartGenerated(struct Recorder* r, const struct AcdGeneratorOptions* options) {
  struct AcdError error;
  struct AcdBatchSource source;
  CHECK_OK(AcdBatchSourceInitGenerator(&source, options, &error), &error);
  CHECK_OK(AcdAsyncProducerStart(&r->handler, &source, kMetadata, &error), &error);
  CHECK(source.release == NULL);
  CHECK(r->handler.producer != NULL);  // populated before any callback
  CHECK(strlen(r->log) == 0);          // nothing is called from Start
}

static void CheckAsyncStatsClean(void) {
  struct AcdAsyncStats stats;
  AcdAsyncStatsGet(&stats);
  CHECK(stats.producers_live == 0 && stats.consumers_live == 0 && stats.tasks_live == 0);
  CHECK(stats.tasks_created == stats.tasks_extracted + stats.tasks_discarded);
  CHECK(AcdAsyncPending() == 0);
}

static void TestAsyncProducerProtocol(void) {
  int64_t start = AcdBytesAllocated();
  struct Recorder r;
  InitRecorder(&r);
  r.request_in_schema = 2;
  r.request_per_task = 1;
  struct AcdGeneratorOptions options = Options(4, 6);
  int scheduled = g_scheduled;
  StartGenerated(&r, &options);
  CHECK(g_scheduled == scheduled + 1);  // the embedder is told to pump
  RunPump();
  CHECK(strcmp(r.log, "STTTTNR") == 0);
  CHECK(r.violations == 0);
  CHECK(r.metadata_ok);
  CHECK(r.list.length == 4 && r.list.device_type == ARROW_DEVICE_CPU);
  for (int b = 0; b < 4; b++) CheckGenerated(&r.list.arrays[b].array, b, 6);
  AcdBatchListReset(&r.list);
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);

  // No request, no task: the producer waits (its credit is 0).
  InitRecorder(&r);
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "S") == 0);
  RecorderRequest(&r, 1);
  CHECK(strcmp(r.log, "S") == 0);  // request never calls back synchronously
  RunPump();
  CHECK(strcmp(r.log, "ST") == 0);
  r.handler.producer->cancel(r.handler.producer);
  RunPump();
  CHECK(strcmp(r.log, "STR") == 0);  // cancelled: release, no on_error
  CHECK(r.violations == 0);
  AcdBatchListReset(&r.list);
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);
}

static void TestAsyncProducerErrors(void) {
  int64_t start = AcdBytesAllocated();
  struct Recorder r;

  // A failure mid-stream: on_error with the message, then release.
  InitRecorder(&r);
  r.request_in_schema = 10;
  struct AcdGeneratorOptions options = Options(4, 2);
  options.fail_at = 2;
  options.fail_code = EIO;
  options.fail_message = "sensor unplugged";
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "STTXR") == 0);
  CHECK(r.error_code == EIO && strcmp(r.error_message, "batch 2: sensor unplugged") == 0);
  CHECK(r.violations == 0);
  AcdBatchListReset(&r.list);

  // request(n <= 0) is answered with on_error(EINVAL), then release.
  InitRecorder(&r);
  options = Options(4, 2);
  StartGenerated(&r, &options);
  RunPump();
  RecorderRequest(&r, 0);
  CHECK(strcmp(r.log, "S") == 0);
  RunPump();
  CHECK(strcmp(r.log, "SXR") == 0 && r.error_code == EINVAL);
  CHECK(strstr(r.error_message, "n must be > 0, found 0") != NULL);
  AcdBatchListReset(&r.list);

  // A non-zero return from on_schema: release only.
  InitRecorder(&r);
  r.return_in_schema = EINVAL;
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "SR") == 0);
  AcdBatchListReset(&r.list);

  // A non-zero return from on_next_task: release only.
  InitRecorder(&r);
  r.request_in_schema = 4;
  r.fail_task_at = 1;
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "STTR") == 0);
  AcdBatchListReset(&r.list);

  // A batch on another device type than the producer's: on_error, release.
  InitRecorder(&r);
  r.request_in_schema = 4;
  options.wrong_device_at = 0;
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "SXR") == 0 && r.error_code == EINVAL);
  CHECK(strstr(r.error_message, "batch 0: device_type: expected 1 (the producer's), found 12") != NULL);
  AcdBatchListReset(&r.list);

  // Cancel from on_next_task: remaining credit is dropped, release, no on_error.
  InitRecorder(&r);
  r.request_in_schema = 4;
  r.cancel_at = 1;
  options = Options(4, 2);
  StartGenerated(&r, &options);
  RunPump();
  CHECK(strcmp(r.log, "STR") == 0);
  CHECK(r.violations == 0);
  AcdBatchListReset(&r.list);
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);
}

static struct AcdAsyncConsumer* NewConsumer(int64_t window, int extract_later) {
  struct AcdError error;
  struct AcdAsyncConsumerOptions options;
  AcdAsyncConsumerOptionsInit(&options);
  options.window = window;
  options.extract_later = extract_later;
  struct AcdAsyncConsumer* consumer = NULL;
  CHECK_OK(AcdAsyncConsumerNew(&options, &consumer, &error), &error);
  return consumer;
}

static void TestAsyncCToC(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  for (int extract_later = 0; extract_later <= 1; extract_later++) {
    struct AcdAsyncConsumer* consumer = NewConsumer(2, extract_later);
    struct AcdGeneratorOptions options = Options(6, 4);
    struct AcdBatchSource source;
    CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
    CHECK_OK(AcdAsyncProducerStart(AcdAsyncConsumerHandler(consumer), &source, NULL, &error), &error);
    RunPump();
    struct AcdAsyncConsumerState state;
    AcdAsyncConsumerGetState(consumer, &state);
    CHECK(state.schema_received && state.ended && state.released && state.error_code == 0);
    CHECK(state.additional_metadata == NULL);
    CHECK(state.tasks == 6 && state.list->length == 6);
    for (int b = 0; b < 6; b++) CheckGenerated(&state.list->arrays[b].array, b, 4);

    // Collected, then handed out again through a pull stream.
    struct ArrowDeviceArrayStream stream;
    CHECK_OK(AcdBatchSourceInitList(&source, state.list, &error), &error);
    CHECK_OK(AcdDeviceArrayStreamInitSource(&stream, &source, &error), &error);
    struct AcdStreamTotals totals;
    CHECK_OK(AcdDeviceArrayStreamDrain(&stream, NULL, &totals, &error), &error);
    CHECK(totals.batches == 6 && totals.rows == 24);
    AcdAsyncConsumerFree(consumer);
  }

  // Errors reach the C consumer with their message.
  struct AcdAsyncConsumer* consumer = NewConsumer(3, 1);
  struct AcdGeneratorOptions options = Options(6, 4);
  options.fail_at = 4;
  options.fail_code = ENOMEM;
  options.fail_message = "the producer ran out of memory";
  struct AcdBatchSource source;
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
  CHECK_OK(AcdAsyncProducerStart(AcdAsyncConsumerHandler(consumer), &source, kMetadata, &error), &error);
  RunPump();
  struct AcdAsyncConsumerState state;
  AcdAsyncConsumerGetState(consumer, &state);
  CHECK(state.released && !state.ended && state.error_code == ENOMEM);
  CHECK(state.error_message != NULL &&
        strcmp(state.error_message, "batch 4: the producer ran out of memory") == 0);
  CHECK(state.list->length == 4);
  CHECK(state.additional_metadata != NULL && memcmp(state.additional_metadata, kMetadata, 15) == 0);
  AcdAsyncConsumerFree(consumer);

  // A consumer that cancels: tasks still in flight are extracted with NULL.
  struct AcdAsyncConsumerOptions cancel_options;
  AcdAsyncConsumerOptionsInit(&cancel_options);
  cancel_options.window = 3;
  cancel_options.extract_later = 1;
  cancel_options.cancel_after = 1;
  CHECK_OK(AcdAsyncConsumerNew(&cancel_options, &consumer, &error), &error);
  options = Options(6, 4);
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
  CHECK_OK(AcdAsyncProducerStart(AcdAsyncConsumerHandler(consumer), &source, NULL, &error), &error);
  RunPump();
  AcdAsyncConsumerGetState(consumer, &state);
  CHECK(state.released && state.error_code == 0 && !state.ended);
  CHECK(state.tasks >= 1 && state.list->length == 1);
  AcdAsyncConsumerFree(consumer);

  // A consumer freed while the producer holds its handler: it cancels the
  // producer and goes when the producer releases it.
  consumer = NewConsumer(2, 0);
  options = Options(6, 4);
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
  CHECK_OK(AcdAsyncProducerStart(AcdAsyncConsumerHandler(consumer), &source, NULL, &error), &error);
  AcdAsyncPump(1);  // on_schema
  AcdAsyncConsumerFree(consumer);
  RunPump();
  CheckAsyncStatsClean();

  // A consumer that is freed without ever being used.
  consumer = NewConsumer(1, 0);
  AcdAsyncConsumerFree(consumer);
  cancel_options.window = 0;
  CHECK_FAILS(AcdAsyncConsumerNew(&cancel_options, &consumer, &error), EINVAL, &error,
              "window: expected > 0, found 0");
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);
}

static void TestAsyncStartFailures(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct Recorder r;
  InitRecorder(&r);
  struct AcdBatchSource source;
  struct AcdGeneratorOptions options = Options(1, 1);
  CHECK_OK(AcdBatchSourceInitGenerator(&source, &options, &error), &error);
  r.handler.release = NULL;
  CHECK_FAILS(AcdAsyncProducerStart(&r.handler, &source, NULL, &error), EINVAL, &error,
              "handler.release: expected a function void(struct ArrowAsyncDeviceStreamHandler*), found NULL");
  r.handler.release = &RecorderRelease;
  CHECK(source.release != NULL && r.handler.producer == NULL);  // nothing taken
  AcdBatchSourceRelease(&source);
  CHECK(strlen(r.log) == 0);
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);
}

// ---- every type: run-end encoded, list views, views ----------------------------

// The schema of the hand-made batches: struct<ree: run_end_encoded<run_ends:
// int32, values: float32>, lv: list_view<item: int32>, sv: utf8_view>.
static void InitLayoutsSchema(struct ArrowSchema* schema) {
  struct AcdError error;
  CHECK_OK(AcdSchemaInit(schema, "+s", "", NULL, 0, 3, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[0], "+r", "ree", NULL, ARROW_FLAG_NULLABLE, 2, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[0]->children[0], "i", "run_ends", NULL, 0, 0, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[0]->children[1], "f", "values", NULL, ARROW_FLAG_NULLABLE, 0, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[1], "+vl", "lv", NULL, ARROW_FLAG_NULLABLE, 1, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[1]->children[0], "i", "item", NULL, ARROW_FLAG_NULLABLE, 0, 0, &error), &error);
  CHECK_OK(AcdSchemaInit(schema->children[2], "vu", "sv", NULL, ARROW_FLAG_NULLABLE, 0, 0, &error), &error);
}

// Batch b: 4 rows; every column has 5 physical slots and offset 1.
//   ree: runs [0, 2) = b + 0.5, [2, 5) = -1  -> b + 0.5, -1, -1, -1
//   lv:  views (offset, size) (0,1) (1,2) (3,1) (0,0) (4,1) over 10b..10b+4
//        -> [10b+1, 10b+2], [10b+3], [], [10b+4]
//   sv:  "s<b>-<slot>" inline views -> "s<b>-1" .. "s<b>-4"
static void InitLayoutsBatch(struct ArrowArray* batch, int b) {
  struct AcdError error;
  CHECK_OK(AcdArrayInit(batch, 4, 0, 0, 1, 3, 0, &error), &error);
  struct ArrowArray* ree = batch->children[0];
  CHECK_OK(AcdArrayInit(ree, 4, 0, 1, 0, 2, 0, &error), &error);
  CHECK_OK(AcdArrayInit(ree->children[0], 2, 0, 0, 2, 0, 0, &error), &error);
  int32_t* ends = AcdArrayAllocateBuffer(ree->children[0], 1, 2 * sizeof(int32_t));
  ends[0] = 2;
  ends[1] = 5;
  CHECK_OK(AcdArrayInit(ree->children[1], 2, 0, 0, 2, 0, 0, &error), &error);
  float* runs = AcdArrayAllocateBuffer(ree->children[1], 1, 2 * sizeof(float));
  runs[0] = (float)b + 0.5f;
  runs[1] = -1.0f;

  struct ArrowArray* lv = batch->children[1];
  CHECK_OK(AcdArrayInit(lv, 4, 0, 1, 3, 1, 0, &error), &error);
  static const int32_t offsets[5] = {0, 1, 3, 0, 4}, sizes[5] = {1, 2, 1, 0, 1};
  memcpy(AcdArrayAllocateBuffer(lv, 1, sizeof(offsets)), offsets, sizeof(offsets));
  memcpy(AcdArrayAllocateBuffer(lv, 2, sizeof(sizes)), sizes, sizeof(sizes));
  CHECK_OK(AcdArrayInit(lv->children[0], 5, 0, 0, 2, 0, 0, &error), &error);
  int32_t* items = AcdArrayAllocateBuffer(lv->children[0], 1, 5 * sizeof(int32_t));
  for (int i = 0; i < 5; i++) items[i] = 10 * b + i;

  struct ArrowArray* sv = batch->children[2];
  CHECK_OK(AcdArrayInit(sv, 4, 0, 1, 3, 0, 0, &error), &error);
  uint8_t* views = AcdArrayAllocateBuffer(sv, 1, 5 * 16);
  memset(views, 0, 5 * 16);
  for (int i = 0; i < 5; i++) {
    char text[13];
    int32_t len = snprintf(text, sizeof(text), "s%d-%d", b, i);
    memcpy(views + i * 16, &len, 4);
    memcpy(views + i * 16 + 4, text, (size_t)len);
  }
  AcdArrayAllocateBuffer(sv, 2, 0);  // no variadic buffers: their sizes, none
}

// Checks batch b's logical values, read through its offsets as a consumer does.
static void CheckLayoutsBatch(const struct ArrowArray* batch, int b) {
  CHECK(batch->length == 4 && batch->n_children == 3);
  const struct ArrowArray* ree = batch->children[0];
  const int32_t* ends = ree->children[0]->buffers[1];
  const float* runs = ree->children[1]->buffers[1];
  int ok = 1;
  for (int64_t i = 0; i < ree->length; i++) {
    int64_t slot = ree->offset + i, run = 0;
    while (ends[run] <= slot) run++;
    ok &= runs[run] == (i == 0 ? (float)b + 0.5f : -1.0f);
  }
  CHECK(ok);
  const struct ArrowArray* lv = batch->children[1];
  const int32_t* offsets = lv->buffers[1];
  const int32_t* sizes = lv->buffers[2];
  const int32_t* items = lv->children[0]->buffers[1];
  static const int32_t first[4] = {1, 3, -1, 4}, size[4] = {2, 1, 0, 1};
  for (int64_t i = 0; i < 4; i++) {
    ok &= sizes[lv->offset + i] == size[i];
    if (size[i] > 0) ok &= items[offsets[lv->offset + i]] == 10 * b + first[i];
  }
  CHECK(ok);
  const struct ArrowArray* sv = batch->children[2];
  const uint8_t* views = sv->buffers[1];
  for (int64_t i = 0; i < 4; i++) {
    char text[13];
    int32_t len = snprintf(text, sizeof(text), "s%d-%lld", b, (long long)(i + 1)), found;
    memcpy(&found, views + (sv->offset + i) * 16, 4);
    ok &= found == len && memcmp(views + (sv->offset + i) * 16 + 4, text, (size_t)len) == 0;
  }
  CHECK(ok);
}

// A list of n hand-made batches on the CPU.
static void InitLayoutsList(struct AcdBatchList* list, int n) {
  struct AcdError error;
  AcdBatchListInit(list);
  InitLayoutsSchema(&list->schema);
  list->device_type = ARROW_DEVICE_CPU;
  for (int b = 0; b < n; b++) {
    struct ArrowDeviceArray batch;
    memset(&batch, 0, sizeof(batch));
    InitLayoutsBatch(&batch.array, b);
    AcdDeviceArrayInitDevice(&batch, ARROW_DEVICE_CPU, -1);
    CHECK_OK(AcdArrayValidate(&list->schema, &batch.array, ACD_VALIDATION_FULL, &error), &error);
    CHECK_OK(AcdBatchListAppend(list, &batch, &error), &error);
  }
}

// The C producers and consumers carry every layout: run-end encoded, list
// views and binary views through a list producer, both pull streams, the
// drain consumer, and the async producer and consumer.
static void TestEveryLayout(void) {
  int64_t start = AcdBytesAllocated();
  struct AcdError error;
  struct AcdBatchList list, drained;
  InitLayoutsList(&list, 3);

  // list -> ArrowArrayStream -> drained (validated) -> ArrowDeviceArrayStream -> drained again.
  struct AcdBatchSource source;
  CHECK_OK(AcdBatchSourceInitList(&source, &list, &error), &error);
  struct ArrowArrayStream array_stream;
  CHECK_OK(AcdArrayStreamInitSource(&array_stream, &source, &error), &error);
  AcdBatchListInit(&drained);
  struct AcdStreamTotals totals;
  CHECK_OK(AcdArrayStreamDrain(&array_stream, &drained, &totals, &error), &error);
  CHECK(totals.batches == 3 && totals.rows == 12 && drained.length == 3);
  for (int b = 0; b < 3; b++) CheckLayoutsBatch(&drained.arrays[b].array, b);
  CHECK(strcmp(drained.schema.children[0]->format, "+r") == 0 && strcmp(drained.schema.children[1]->format, "+vl") == 0);
  CHECK_OK(AcdBatchSourceInitList(&source, &drained, &error), &error);
  struct ArrowDeviceArrayStream device_stream;
  CHECK_OK(AcdDeviceArrayStreamInitSource(&device_stream, &source, &error), &error);
  CHECK_OK(AcdDeviceArrayStreamDrain(&device_stream, &list, &totals, &error), &error);
  CHECK(totals.batches == 3 && list.length == 3);
  for (int b = 0; b < 3; b++) {
    CheckLayoutsBatch(&list.arrays[b].array, b);
    CHECK_OK(AcdArrayValidate(&list.schema, &list.arrays[b].array, ACD_VALIDATION_FULL, &error), &error);
  }

  // The async device stream, C producer -> C consumer, in both extraction modes.
  for (int extract_later = 0; extract_later <= 1; extract_later++) {
    struct AcdAsyncConsumer* consumer = NewConsumer(2, extract_later);
    CHECK_OK(AcdBatchSourceInitList(&source, &list, &error), &error);
    CHECK_OK(AcdAsyncProducerStart(AcdAsyncConsumerHandler(consumer), &source, NULL, &error), &error);
    RunPump();
    struct AcdAsyncConsumerState state;
    AcdAsyncConsumerGetState(consumer, &state);
    CHECK(state.ended && state.released && state.error_code == 0 && state.list->length == 3);
    for (int b = 0; b < 3; b++) CheckLayoutsBatch(&state.list->arrays[b].array, b);
    // Handed back to `list` for the next round: moved out of the consumer's list.
    list = *state.list;
    AcdBatchListInit(state.list);
    AcdAsyncConsumerFree(consumer);
  }
  AcdBatchListReset(&list);
  CheckAsyncStatsClean();
  CHECK_NO_LEAK(start);
}

int main(void) {
  AcdAsyncSetScheduler(&Scheduler, NULL);
  TestGeneratedDeviceStream();
  TestReleasedStreamIsNeverCalled();
  TestErrorMidStream();
  TestDrainListAndReplay();
  TestConsumerChecks();
  TestSchemaDeepCopy();
  TestAsyncProducerProtocol();
  TestAsyncProducerErrors();
  TestAsyncCToC();
  TestAsyncStartFailures();
  TestEveryLayout();
  return CheckSummary("c-stream");
}
