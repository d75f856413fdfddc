// C helpers of the arrow-go peer (glue.h). The async play: the loader is not
// thread-safe, and arrow-go's async handler (cdata.CreateAsyncDeviceStreamHandler)
// calls the producer's request and the tasks' extract_data from its own
// goroutine, and the consumer releases the batches from another. So the
// loader gets a proxy handler and arrow-go a proxy producer and proxy tasks,
// and every call into the loader holds one recursive lock (recursive: arrow-go
// calls request inside on_schema, which the loader calls with the lock held).
#define _GNU_SOURCE
#include "glue.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t lock;
static pthread_once_t lock_once = PTHREAD_ONCE_INIT;

static void InitLock(void) {
  pthread_mutexattr_t attr;
  pthread_mutexattr_init(&attr);
  pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
  pthread_mutex_init(&lock, &attr);
  pthread_mutexattr_destroy(&attr);
}

void PeerLock(void) {
  pthread_once(&lock_once, InitLock);
  pthread_mutex_lock(&lock);
}

void PeerUnlock(void) { pthread_mutex_unlock(&lock); }

// The release callback field of a root's struct (LP64 and ILP32 alike: read through the C types).
static void* ReleaseOf(uint32_t kind, void* ptr) {
  switch (kind) {
    case ACD_FIXTURE_SCHEMA: return (void*)((struct ArrowSchema*)ptr)->release;
    case ACD_FIXTURE_ARRAY: return (void*)((struct ArrowArray*)ptr)->release;
    case ACD_FIXTURE_DEVICE_ARRAY: return (void*)((struct ArrowDeviceArray*)ptr)->array.release;
    case ACD_FIXTURE_ARRAY_STREAM: return (void*)((struct ArrowArrayStream*)ptr)->release;
    case ACD_FIXTURE_DEVICE_ARRAY_STREAM: return (void*)((struct ArrowDeviceArrayStream*)ptr)->release;
    default: return NULL;
  }
}

int PeerHoldsRelease(uint32_t kind, void* ptr) { return ptr != NULL && ReleaseOf(kind, ptr) != NULL; }

int PeerReleaseRoot(uint32_t kind, void* ptr) {
  if (!PeerHoldsRelease(kind, ptr)) return 0;
  switch (kind) {
    case ACD_FIXTURE_SCHEMA: ((struct ArrowSchema*)ptr)->release((struct ArrowSchema*)ptr); break;
    case ACD_FIXTURE_ARRAY: ((struct ArrowArray*)ptr)->release((struct ArrowArray*)ptr); break;
    case ACD_FIXTURE_DEVICE_ARRAY: ((struct ArrowDeviceArray*)ptr)->array.release(&((struct ArrowDeviceArray*)ptr)->array); break;
    case ACD_FIXTURE_ARRAY_STREAM: ((struct ArrowArrayStream*)ptr)->release((struct ArrowArrayStream*)ptr); break;
    case ACD_FIXTURE_DEVICE_ARRAY_STREAM:
      ((struct ArrowDeviceArrayStream*)ptr)->release((struct ArrowDeviceArrayStream*)ptr);
      break;
    default: return 0;
  }
  return 1;
}

// ---- the serialised async play -------------------------------------------------------

static pthread_cond_t moved = PTHREAD_COND_INITIALIZER;  // a request or cancel came, or the pump ended a round

struct PeerAsync {
  struct AcdFixture* fx;
  uint32_t root;
  struct AcdFixtureAsync* play;
  struct ArrowAsyncDeviceStreamHandler proxy;     // the loader's view of the consumer
  struct ArrowAsyncDeviceStreamHandler* go;       // arrow-go's handler
  struct ArrowAsyncProducer producer;             // arrow-go's view of the loader
  struct ArrowAsyncProducer* loader_producer;
  pthread_t pump;                                 // the thread of PeerAsyncRun
  int64_t rounds;                                 // rounds of the pump finished
  int64_t pending;                                // requests and cancels not yet answered by a round
  int released, done;
  int64_t after_release;                          // request or cancel calls after the handler's release
  int schema_refused;                             // arrow-go's on_schema returned this (0: accepted)
  int release_withheld;                           // 1: arrow-go's release was not called (below)
};

// The loader's callbacks behind the proxies (the same functions for every play).
static int (*loader_extract)(struct ArrowAsyncTask*, struct ArrowDeviceArray*);
static void (*loader_release_array)(struct ArrowArray*);

static void ProxyReleaseArray(struct ArrowArray* array) {
  PeerLock();
  array->release = loader_release_array;
  array->release(array);
  PeerUnlock();
}

static int ProxyExtract(struct ArrowAsyncTask* task, struct ArrowDeviceArray* out) {
  int code;
  PeerLock();
  code = loader_extract(task, out);
  if (code == 0 && out != NULL && out->array.release != NULL) {
    loader_release_array = out->array.release;
    out->array.release = ProxyReleaseArray;
  }
  PeerUnlock();
  return code;
}

// A request or cancel from the consumer's threads returns once the pump has
// answered it (a round of steps): the order of the calls is then the same on
// every run, whatever the scheduling of arrow-go's goroutines.
static void Answered(struct PeerAsync* a) {
  int64_t round = a->rounds;
  a->pending++;
  pthread_cond_broadcast(&moved);
  if (pthread_equal(pthread_self(), a->pump)) return;  // inside a handler call: the pump is this thread
  while (a->rounds == round && !a->done) pthread_cond_wait(&moved, &lock);
}

static void ProxyRequest(struct ArrowAsyncProducer* self, int64_t n) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  PeerLock();
  if (a->released) a->after_release++;
  a->loader_producer->request(a->loader_producer, n);
  Answered(a);
  PeerUnlock();
}

static void ProxyCancel(struct ArrowAsyncProducer* self) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  PeerLock();
  if (a->released) a->after_release++;
  a->loader_producer->cancel(a->loader_producer);
  Answered(a);
  PeerUnlock();
}

// The proxy handler's callbacks run inside AcdFixtureAsyncStart/Step, with the lock held.
static int ProxyOnSchema(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowSchema* schema) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  a->loader_producer = self->producer;
  a->producer.device_type = self->producer->device_type;
  a->producer.additional_metadata = self->producer->additional_metadata;
  a->producer.request = ProxyRequest;
  a->producer.cancel = ProxyCancel;
  a->producer.private_data = a;
  a->go->producer = &a->producer;
  a->schema_refused = a->go->on_schema(a->go, schema);
  return a->schema_refused;
}

static int ProxyOnNextTask(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowAsyncTask* task, const char* metadata) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  struct ArrowAsyncTask proxy;
  if (task == NULL) return a->go->on_next_task(a->go, NULL, metadata);
  loader_extract = task->extract_data;
  proxy.extract_data = ProxyExtract;
  proxy.private_data = task->private_data;  // the loader finds its task by it
  return a->go->on_next_task(a->go, &proxy, metadata);
}

static void ProxyOnError(struct ArrowAsyncDeviceStreamHandler* self, int code, const char* message, const char* metadata) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  a->go->on_error(a->go, code, message, metadata);
}

static void ProxyRelease(struct ArrowAsyncDeviceStreamHandler* self) {
  struct PeerAsync* a = (struct PeerAsync*)self->private_data;
  a->released = 1;
  // arrow-go v18.8.0's on_schema frees its private_data and deletes its handle on every path, and on
  // an error returns leaving release set: its release would then panic on the deleted handle ("misuse
  // of an invalid Handle"), a use after free. The spec has the producer call release after an error
  // of on_schema; the peer withholds that one call and reports it (docs/conformance.md).
  if (a->schema_refused != 0) a->release_withheld = 1;
  else if (a->go->release != NULL) a->go->release(a->go);
  self->release = NULL;
}

int PeerAsyncReleaseWithheld(struct PeerAsync* a) { return a->release_withheld; }

struct PeerAsync* PeerAsyncNew(struct AcdFixture* fx, uint32_t root, struct ArrowAsyncDeviceStreamHandler* go_handler) {
  struct PeerAsync* a = (struct PeerAsync*)calloc(1, sizeof *a);
  if (a == NULL) return NULL;
  a->fx = fx;
  a->root = root;
  a->go = go_handler;
  a->proxy.on_schema = ProxyOnSchema;
  a->proxy.on_next_task = ProxyOnNextTask;
  a->proxy.on_error = ProxyOnError;
  a->proxy.release = ProxyRelease;
  a->proxy.private_data = a;
  return a;
}

int PeerAsyncRun(struct PeerAsync* a, int timeout_seconds, char* message, size_t message_size) {
  struct AcdFixtureError error;
  struct AcdFixtureAsyncCounts counts;
  struct timespec deadline;
  int code = 0;
  PeerLock();
  a->pump = pthread_self();
  code = AcdFixtureAsyncStart(a->fx, a->root, &a->proxy, &a->play, &error);
  if (code != 0) {
    snprintf(message, message_size, "AcdFixtureAsyncStart: %s", error.message);
  }
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += timeout_seconds;
  while (code == 0) {
    while (AcdFixtureAsyncStep(a->play)) {
    }
    a->rounds++;
    pthread_cond_broadcast(&moved);
    AcdFixtureAsyncGetCounts(a->play, &counts);
    if (counts.handler_releases > 0) break;
    while (a->pending == 0 && code == 0) {
      if (pthread_cond_timedwait(&moved, &lock, &deadline) != 0 && a->pending == 0) {
        code = ETIMEDOUT;
        snprintf(message, message_size, "the play stalled: no request from arrow-go's handler within %d s", timeout_seconds);
      }
    }
    a->pending = 0;
  }
  a->done = 1;
  pthread_cond_broadcast(&moved);
  PeerUnlock();
  return code;
}

void PeerAsyncCounts(struct PeerAsync* a, struct AcdFixtureAsyncCounts* out, int64_t* after_release) {
  PeerLock();
  AcdFixtureAsyncGetCounts(a->play, out);
  *after_release = a->after_release;
  PeerUnlock();
}

int PeerAsyncFree(struct PeerAsync* a, char* report, size_t report_size) {
  int problems;
  if (a == NULL) return 0;
  PeerLock();
  problems = AcdFixtureAsyncFree(a->play, report, report_size);
  PeerUnlock();
  free(a);
  return problems;
}
