// Tests of the loader's async producer (AcdFixtureAsync*, acd_fixture.h),
// run by test/c/fixture.sh under ASan/UBSan: a consumer's handler written
// here receives an async script's schema, tasks and end; request(n) credit is
// honoured (nothing delivered beyond it, the end included), cancel stops the
// tasks without on_error, the script's failure arrives as on_error with its
// errno and message, request(0) as on_error(EINVAL), a non-zero return of
// on_next_task ends the play; extract_data(NULL) lets the loader release the
// batch; a task never extracted is reported. Prints "c-fixture-async: N passed, M failed".

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixtures/acd_fixture.h"
#include "fixture_image.h"

static int passed, failed;

#define CHECK(c) Check((c) != 0, #c, __LINE__)
static void Check(int ok, const char* what, int line) {
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "test_fixture_async.c:%d: check failed: %s\n", line, what);
  }
}

// What the consumer does, and what it saw.
struct Consumer {
  int64_t on_schema_request, per_task_request;
  int cancel_after, fail_on_task, extract_null;
  int keep_task;  // 1: the first task kept, never extracted; 2: extracted after the play; 3: every task extracted twice
  int schemas, tasks, ends, errors, releases, error_code, calls_after_release;
  int64_t sum;
  char schema_format[8], message[64];
  struct ArrowAsyncTask kept;
};

static int OnSchema(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowSchema* schema) {
  struct Consumer* c = (struct Consumer*)self->private_data;
  struct ArrowSchema mine = *schema;  // moved out, as the spec asks
  schema->release = NULL;
  c->calls_after_release += c->releases;
  c->schemas++;
  snprintf(c->schema_format, sizeof c->schema_format, "%s", mine.format);
  mine.release(&mine);
  if (c->on_schema_request != 0) self->producer->request(self->producer, c->on_schema_request < 0 ? 0 : c->on_schema_request);
  return 0;
}

static int OnNextTask(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowAsyncTask* task, const char* metadata) {
  struct Consumer* c = (struct Consumer*)self->private_data;
  struct ArrowDeviceArray batch;
  (void)metadata;
  c->calls_after_release += c->releases;
  if (task == NULL) {
    c->ends++;
    return 0;
  }
  c->tasks++;
  if ((c->keep_task == 1 || c->keep_task == 2) && c->tasks == 1) {
    c->kept = *task;  // extracted later, or never
  } else if (c->extract_null) {
    CHECK(task->extract_data(task, NULL) == 0);
  } else {
    CHECK(task->extract_data(task, &batch) == 0 && batch.device_type == ARROW_DEVICE_CPU);
    c->sum += ((const int32_t*)batch.array.buffers[1])[batch.array.length - 1];
    batch.array.release(&batch.array);
    if (c->keep_task == 3) CHECK(task->extract_data(task, &batch) == EINVAL);  // exactly once
  }
  if (c->cancel_after == c->tasks) self->producer->cancel(self->producer);
  if (c->fail_on_task == c->tasks) return EPIPE;
  if (c->per_task_request != 0) self->producer->request(self->producer, c->per_task_request);
  return 0;
}

static void OnError(struct ArrowAsyncDeviceStreamHandler* self, int code, const char* message, const char* metadata) {
  struct Consumer* c = (struct Consumer*)self->private_data;
  (void)metadata;
  c->calls_after_release += c->releases;
  c->errors++;
  c->error_code = code;
  snprintf(c->message, sizeof c->message, "%s", message ? message : "(null)");
}

static void Release(struct ArrowAsyncDeviceStreamHandler* self) {
  ((struct Consumer*)self->private_data)->releases++;
  self->release = NULL;
}

static struct AcdFixture* Load(int64_t fail_at) {
  struct Img* img = (struct Img*)malloc(sizeof *img);
  uint64_t schema, batches[3];
  size_t size;
  unsigned char* bytes;
  struct AcdFixture* fx = NULL;
  struct AcdFixtureError error;
  int i;
  ImgInit(img);
  schema = ImgSchema(img, "i", "x", 0, NULL, 0);
  for (i = 0; i < 3; i++) batches[i] = ImgDeviceInt32(img, 2, 10 * i);  // last values 2, 12, 22
  ImgRoot(img, 6, ACD_FIXTURE_NO_SCHEMA, ImgScript(img, schema, 3, batches, fail_at, EIO, "sensor gone"), 0);
  bytes = ImgWrite(img, &size);
  if (AcdFixtureLoad(bytes, size, &fx, &error) != 0) fprintf(stderr, "load: %s\n", error.message);
  free(bytes);
  free(img);
  return fx;
}

// Plays the script into a consumer set up by `c`; returns AcdFixtureFree's problems.
static int Play(struct Consumer* c, int64_t fail_at, struct AcdFixtureAsyncCounts* counts, int* over, char* report) {
  struct AcdFixture* fx = Load(fail_at);
  struct ArrowAsyncDeviceStreamHandler handler;
  struct AcdFixtureAsync* play = NULL;
  struct AcdFixtureError error;
  memset(&handler, 0, sizeof handler);
  handler.on_schema = OnSchema;
  handler.on_next_task = OnNextTask;
  handler.on_error = OnError;
  handler.release = Release;
  handler.private_data = c;
  CHECK(fx != NULL && AcdFixtureAsyncStart(fx, 0, &handler, &play, &error) == 0);
  CHECK(handler.producer != NULL && handler.producer->device_type == ARROW_DEVICE_CPU);
  *over = AcdFixtureAsyncPump(play);
  AcdFixtureAsyncGetCounts(play, counts);
  if (c->keep_task == 2) {  // the kept task extracted after the play
    struct ArrowDeviceArray batch;
    CHECK(c->kept.extract_data(&c->kept, &batch) == 0 && ((const int32_t*)batch.array.buffers[1])[1] == 2);
    batch.array.release(&batch.array);
  }
  return AcdFixtureFree(fx, report, 1024);
}

int main(void) {
  struct AcdFixtureAsyncCounts n;
  char report[1024];
  int over;
  {  // One credit at a time: three tasks, then the end, then release.
    struct Consumer c = {1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over);
    CHECK(c.schemas == 1 && strcmp(c.schema_format, "i") == 0 && c.tasks == 3 && c.ends == 1 && c.errors == 0);
    CHECK(c.sum == 2 + 12 + 22 && c.releases == 1 && c.calls_after_release == 0);
    CHECK(n.requested == 4 && n.tasks == 3 && n.extracted == 3 && n.ends == 1 && n.handler_releases == 1 && n.violations == 0);
  }
  {  // Two credits, never more: two tasks, then the play waits (no end without credit).
    struct Consumer c = {2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && !over);  // released by AcdFixtureFree
    CHECK(c.tasks == 2 && c.ends == 0 && c.releases == 1 && n.tasks == 2);
  }
  {  // Three credits: the end needs a fourth.
    struct Consumer c = {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && !over && c.tasks == 3 && c.ends == 0);
  }
  {  // Cancel after the first task: no more tasks, no on_error, release.
    struct Consumer c = {5, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over);
    CHECK(c.tasks == 1 && c.errors == 0 && c.ends == 0 && c.releases == 1 && n.cancel_calls == 1);
  }
  {  // The script fails at batch 1: one task, then on_error(EIO, its message), then release.
    struct Consumer c = {5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, 1, &n, &over, report) == 0 && over);
    CHECK(c.tasks == 1 && c.errors == 1 && c.error_code == EIO && strcmp(c.message, "sensor gone") == 0 && c.releases == 1);
  }
  {  // request(0): on_error(EINVAL), then release.
    struct Consumer c = {-1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over && c.errors == 1 && c.error_code == EINVAL && c.tasks == 0);
  }
  {  // on_next_task returns EPIPE: release without on_error.
    struct Consumer c = {5, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over && c.tasks == 1 && c.errors == 0 && c.releases == 1);
  }
  {  // extract_data(NULL): the loader releases the batches itself.
    struct Consumer c = {5, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over && n.extracted_null == 3 && n.extracted == 0 && c.ends == 1);
  }
  {  // A task copied and extracted after the play is over: still valid until the free.
    struct Consumer c = {5, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 0 && over && c.tasks == 3);
  }
  {  // extract_data twice: EINVAL, and each reported as a violation.
    struct Consumer c = {5, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 1 && n.violations == 3 && strstr(report, "3 consumer violations") != NULL);
  }
  {  // A task never extracted: reported.
    struct Consumer c = {5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, "", "", {NULL, NULL}};
    CHECK(Play(&c, -1, &n, &over, report) == 1 && strstr(report, "async root 0: task 0 delivered and never extracted") != NULL);
  }
  {  // Not an async root, or a handler without callbacks: refused.
    struct AcdFixture* fx = Load(-1);
    struct ArrowAsyncDeviceStreamHandler handler;
    struct AcdFixtureAsync* play = NULL;
    struct AcdFixtureError error;
    memset(&handler, 0, sizeof handler);
    CHECK(AcdFixtureAsyncStart(fx, 1, &handler, &play, &error) == EINVAL && strstr(error.message, "no async script") != NULL);
    CHECK(AcdFixtureAsyncStart(fx, 0, &handler, &play, &error) == EINVAL && play == NULL);
    CHECK(AcdFixtureFree(fx, NULL, 0) == 0);
  }
  printf("c-fixture-async: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
