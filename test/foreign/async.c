// The foreign module's async device stream, both sides, for
// test/foreign-async.test.ts: a C producer that drives a handler made by
// arrow-c-device (in this module's memory, its callbacks in this module's
// table), and a C consumer whose handler arrow-c-device drives. Nothing of
// arrow-c-device is linked in: only the spec's header. The protocol is
// callback driven and this module has no event loop, so JS pumps it: the
// producer does one step per async_producer_pump() call (request() only
// records the demand, as the spec requires: it never calls the handler), and
// the deferred consumer extracts its queued tasks in async_consumer_pump().
// Longer than 400 lines: both sides are in one file because they share the
// batches and the counters the test reads.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_device.h"

#define EXPORT(name) __attribute__((export_name(#name)))

static int live = 0;  // blocks allocated here and not freed
static void* counted_malloc(size_t n) { live++; return malloc(n); }
static void counted_free(void* p) { if (p) { live--; free(p); } }

EXPORT(async_live_blocks) int async_live_blocks(void) { return live; }

// What both sides counted, read by the test with async_stat(i).
enum {
  STAT_REQUEST_CALLS, STAT_REQUESTED, STAT_CANCEL_CALLS, STAT_EXTRACTED, STAT_DISCARDED,
  STAT_BATCHES_RELEASED, STAT_SCHEMAS_RELEASED, STAT_PRODUCERS_FREED, STAT_COUNT
};
static int64_t stats[STAT_COUNT];

EXPORT(async_stat) int64_t async_stat(int i) { return i >= 0 && i < STAT_COUNT ? stats[i] : -1; }
EXPORT(async_reset_stats) void async_reset_stats(void) { memset(stats, 0, sizeof stats); }

// ---- the batches: struct<x: int32>, x = b * 100 + i, null when i % 4 == 3 --------

static void release_x_schema(struct ArrowSchema* s) {
  s->release = NULL;
}

static void release_batch_schema(struct ArrowSchema* s) {
  struct ArrowSchema* child = s->children[0];
  if (child->release != NULL) child->release(child);
  counted_free(child);
  counted_free(s->children);
  s->release = NULL;
  stats[STAT_SCHEMAS_RELEASED]++;
}

static int make_batch_schema(struct ArrowSchema* out) {
  struct ArrowSchema* child = counted_malloc(sizeof *child);
  struct ArrowSchema** children = counted_malloc(sizeof *children);
  if (child == NULL || children == NULL) { counted_free(child); counted_free(children); return ENOMEM; }
  memset(child, 0, sizeof *child);
  child->format = "i";
  child->name = "x";
  child->flags = ARROW_FLAG_NULLABLE;
  child->release = release_x_schema;
  children[0] = child;
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = 1;
  out->children = children;
  out->release = release_batch_schema;
  return 0;
}

static void release_x(struct ArrowArray* a) {
  counted_free((void*)a->buffers[0]);
  counted_free((void*)a->buffers[1]);
  counted_free(a->buffers);
  a->release = NULL;
}

static void release_batch(struct ArrowArray* a) {
  struct ArrowArray* child = a->children[0];
  if (child->release != NULL) child->release(child);
  counted_free(child);
  counted_free(a->children);
  counted_free(a->buffers);
  a->release = NULL;
  stats[STAT_BATCHES_RELEASED]++;
}

// Batch b of `rows` rows as a CPU device array at out (its own release).
static int fill_batch(struct ArrowDeviceArray* out, int64_t b, int64_t rows) {
  uint8_t* validity = counted_malloc((size_t)(rows + 7) / 8 + 1);
  int32_t* values = counted_malloc((size_t)rows * sizeof(int32_t) + 1);
  const void** child_buffers = counted_malloc(2 * sizeof(void*));
  struct ArrowArray* child = counted_malloc(sizeof *child);
  struct ArrowArray** children = counted_malloc(sizeof *children);
  const void** buffers = counted_malloc(sizeof(void*));
  if (!validity || !values || !child_buffers || !child || !children || !buffers) {
    counted_free(validity); counted_free(values); counted_free(child_buffers);
    counted_free(child); counted_free(children); counted_free(buffers);
    return ENOMEM;
  }
  memset(validity, 0, (size_t)(rows + 7) / 8 + 1);
  int64_t nulls = 0;
  for (int64_t i = 0; i < rows; i++) {
    values[i] = (int32_t)(b * 100 + i);
    if (i % 4 == 3) nulls++; else validity[i / 8] |= (uint8_t)(1 << (i % 8));
  }
  child_buffers[0] = validity;
  child_buffers[1] = values;
  memset(child, 0, sizeof *child);
  child->length = rows;
  child->null_count = nulls;
  child->n_buffers = 2;
  child->buffers = child_buffers;
  child->release = release_x;
  children[0] = child;
  buffers[0] = NULL;
  memset(out, 0, sizeof *out);
  out->array.length = rows;
  out->array.n_buffers = 1;
  out->array.buffers = buffers;
  out->array.n_children = 1;
  out->array.children = children;
  out->array.release = release_batch;
  out->device_id = -1;
  out->device_type = ARROW_DEVICE_CPU;
  return 0;
}

// ---- the producer -------------------------------------------------------------

#define MAX_TASKS 64

struct Producer;

struct TaskState {
  struct Producer* owner;
  int64_t index;
  int live;  // handed over and not extracted yet
};

struct Producer {
  struct ArrowAsyncProducer producer;  // first: request and cancel find the state by a cast
  struct ArrowAsyncDeviceStreamHandler* handler;  // NULL once released
  int64_t batches, rows, fail_at, next, demand;
  int schema_sent, cancelled, bad_request;
  int64_t pending;  // tasks handed over and not extracted: they outlive the handler
  struct TaskState tasks[MAX_TASKS];
  char metadata[32];  // the metadata of the current on_next_task call
};

// additional_metadata: {"producer": "c"}, as ArrowSchema.metadata is encoded.
static const char ADDITIONAL[] = "\1\0\0\0\x08\0\0\0producer\1\0\0\0c";

static void producer_free_if_done(struct Producer* p) {
  if (p->handler == NULL && p->pending == 0) {
    counted_free(p);
    stats[STAT_PRODUCERS_FREED]++;
  }
}

// The last call on the handler; the producer's state goes after it (and after its tasks).
static int producer_finish(struct Producer* p) {
  struct ArrowAsyncDeviceStreamHandler* h = p->handler;
  p->handler = NULL;
  h->release(h);
  producer_free_if_done(p);
  return 0;
}

static void producer_request(struct ArrowAsyncProducer* self, int64_t n) {
  struct Producer* p = (struct Producer*)self;
  stats[STAT_REQUEST_CALLS]++;
  if (p->cancelled || p->handler == NULL) return;  // a NOP after cancel
  if (n <= 0) { p->bad_request = 1; return; }       // reported by on_error, never from here
  stats[STAT_REQUESTED] += n;
  p->demand += n;
}

static void producer_cancel(struct ArrowAsyncProducer* self) {
  stats[STAT_CANCEL_CALLS]++;
  ((struct Producer*)self)->cancelled = 1;
}

static int producer_extract(struct ArrowAsyncTask* task, struct ArrowDeviceArray* out) {
  struct TaskState* t = task->private_data;
  if (t == NULL || !t->live) return EINVAL;  // exactly once
  t->live = 0;
  struct Producer* p = t->owner;
  int code = 0;
  if (out != NULL) {
    code = fill_batch(out, t->index, p->rows);
    if (code == 0) stats[STAT_EXTRACTED]++;
  } else {
    stats[STAT_DISCARDED]++;
  }
  p->pending--;
  producer_free_if_done(p);
  return code;
}

// Starts producing `batches` batches of `rows` rows into handler (made by
// the consumer); on_error (EIO) instead of batch `fail_at` (-1: never).
// Sets handler->producer; everything else happens in async_producer_pump.
EXPORT(async_producer_start) struct Producer* async_producer_start(struct ArrowAsyncDeviceStreamHandler* handler, int64_t batches,
    int64_t rows, int64_t fail_at) {
  if (batches < 0 || batches > MAX_TASKS || rows < 0) return NULL;
  struct Producer* p = counted_malloc(sizeof *p);
  if (p == NULL) return NULL;
  memset(p, 0, sizeof *p);
  p->producer.device_type = ARROW_DEVICE_CPU;
  p->producer.request = producer_request;
  p->producer.cancel = producer_cancel;
  p->producer.additional_metadata = ADDITIONAL;
  p->producer.private_data = p;
  p->handler = handler;
  p->batches = batches;
  p->rows = rows;
  p->fail_at = fail_at;
  handler->producer = &p->producer;  // before any callback, as the spec requires
  return p;
}

// One step: on_schema, or one on_next_task within the demand, or the end
// (on_next_task(NULL), on_error, or release only after cancel or a refusal).
// 1 while the handler is held, 0 once released (do not call it again: the
// state may be gone).
EXPORT(async_producer_pump) int async_producer_pump(struct Producer* p) {
  struct ArrowAsyncDeviceStreamHandler* h = p->handler;
  if (!p->schema_sent) {
    p->schema_sent = 1;
    struct ArrowSchema schema;
    int code = make_batch_schema(&schema);
    if (code != 0) {
      h->on_error(h, code, "out of memory making the schema", NULL);
      return producer_finish(p);
    }
    code = h->on_schema(h, &schema);
    if (schema.release != NULL) schema.release(&schema);  // not moved out by the consumer
    return code != 0 ? producer_finish(p) : 1;
  }
  if (p->cancelled) return producer_finish(p);  // no on_error after cancel
  if (p->bad_request) {
    h->on_error(h, EINVAL, "request: n must be > 0", NULL);
    return producer_finish(p);
  }
  if (p->demand <= 0) return 1;  // idle until request
  if (p->next == p->fail_at) {
    h->on_error(h, EIO, "simulated failure producing a batch", NULL);
    return producer_finish(p);
  }
  p->demand--;
  if (p->next == p->batches) {
    h->on_next_task(h, NULL, NULL);
    return producer_finish(p);
  }
  struct TaskState* t = &p->tasks[p->next];
  t->owner = p;
  t->index = p->next++;
  t->live = 1;
  p->pending++;
  // {"batch": "<index>"}: valid during the call only.
  char digits[8];
  int n = 0;
  int64_t v = t->index;
  do { digits[n++] = (char)('0' + v % 10); v /= 10; } while (v > 0);
  int32_t key = 5, len = n;
  memcpy(p->metadata, "\1\0\0\0", 4);
  memcpy(p->metadata + 4, &key, 4);
  memcpy(p->metadata + 8, "batch", 5);
  memcpy(p->metadata + 13, &len, 4);
  for (int i = 0; i < n; i++) p->metadata[17 + i] = digits[n - 1 - i];
  struct ArrowAsyncTask task = {producer_extract, t};  // valid during the call only
  int code = h->on_next_task(h, &task, p->metadata);
  return code != 0 ? producer_finish(p) : 1;
}

// ---- the consumer -------------------------------------------------------------

struct Consumer {
  struct ArrowAsyncDeviceStreamHandler handler;  // first: the callbacks find the state by a cast
  int64_t window, cancel_after;
  int defer;  // tasks are copied and extracted in async_consumer_pump
  struct ArrowAsyncTask queue[MAX_TASKS];
  int64_t queued, taken;
  // results, read with async_consumer_result
  int64_t batches, rows, sum, nulls, metadata_seen, discarded, error_code, released, ended, schema_ok, additional_seen;
  int cancelled;
  char message[256];
};

enum {
  R_BATCHES, R_ROWS, R_SUM, R_NULLS, R_METADATA_SEEN, R_DISCARDED, R_ERROR, R_RELEASED, R_ENDED, R_SCHEMA_OK, R_ADDITIONAL_SEEN, R_COUNT
};

static void consumer_fail(struct Consumer* c, int code, const char* message) {
  if (c->error_code != 0) return;
  c->error_code = code;
  strncpy(c->message, message, sizeof c->message - 1);
}

static int consumer_on_schema(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowSchema* schema) {
  struct Consumer* c = (struct Consumer*)self;
  int ok = strcmp(schema->format, "+s") == 0 && schema->n_children == 1 && strcmp(schema->children[0]->format, "i") == 0;
  schema->release(schema);  // ours: released here whatever we answer
  if (!ok) { consumer_fail(c, EINVAL, "on_schema: expected struct<int32>"); return EINVAL; }
  if (self->producer == NULL || self->producer->device_type != ARROW_DEVICE_CPU) {
    consumer_fail(c, EINVAL, "on_schema: expected a CPU producer");
    return EINVAL;
  }
  c->schema_ok = 1;
  c->additional_seen = self->producer->additional_metadata != NULL;
  self->producer->request(self->producer, c->window);
  return 0;
}

// Sums the batch's column x (offsets of the batch and of x respected), then releases it.
static int consumer_take(struct Consumer* c, struct ArrowAsyncTask* task) {
  struct ArrowDeviceArray out;
  memset(&out, 0, sizeof out);
  int code = task->extract_data(task, &out);
  if (code != 0) { consumer_fail(c, code, "extract_data failed"); return code; }
  if (out.array.release == NULL || out.device_type != ARROW_DEVICE_CPU || out.array.n_children != 1) {
    if (out.array.release != NULL) out.array.release(&out.array);
    consumer_fail(c, EINVAL, "extract_data: expected a live CPU struct array of one column");
    return EINVAL;
  }
  const struct ArrowArray* x = out.array.children[0];
  const uint8_t* validity = x->buffers[0];
  const int32_t* values = x->buffers[1];
  for (int64_t i = 0; i < out.array.length; i++) {
    int64_t j = out.array.offset + x->offset + i;
    if (validity == NULL || (validity[j / 8] >> (j % 8)) & 1) c->sum += values[j]; else c->nulls++;
  }
  c->rows += out.array.length;
  c->batches++;
  out.array.release(&out.array);
  if (c->released) return 0;  // the producer is gone: its tasks are still extracted
  if (c->cancel_after > 0 && c->batches == c->cancel_after) {
    c->cancelled = 1;
    c->handler.producer->cancel(c->handler.producer);
  } else {
    c->handler.producer->request(c->handler.producer, 1);
  }
  return 0;
}

static int consumer_on_next_task(struct ArrowAsyncDeviceStreamHandler* self, struct ArrowAsyncTask* task, const char* metadata) {
  struct Consumer* c = (struct Consumer*)self;
  if (task == NULL) { c->ended = 1; return 0; }
  if (metadata != NULL) c->metadata_seen++;
  if (c->cancelled || c->error_code != 0) {
    c->discarded++;
    return task->extract_data(task, NULL);  // not wanted: the producer cleans up
  }
  if (!c->defer) return consumer_take(c, task);
  if (c->queued == MAX_TASKS) { task->extract_data(task, NULL); consumer_fail(c, ENOMEM, "on_next_task: the queue is full"); return ENOMEM; }
  c->queue[c->queued++] = *task;  // the task struct is valid during this call only
  return 0;
}

static void consumer_on_error(struct ArrowAsyncDeviceStreamHandler* self, int code, const char* message, const char* metadata) {
  (void)metadata;
  consumer_fail((struct Consumer*)self, code, message != NULL ? message : "(no message)");
}

static void consumer_release(struct ArrowAsyncDeviceStreamHandler* self) {
  // The state stays for the test to read (async_consumer_free); the producer is gone.
  ((struct Consumer*)self)->released = 1;
  self->producer = NULL;
}

// A handler that requests `window` batches, then one per batch taken; it
// cancels after `cancel_after` batches (0: never); with `defer`, tasks are
// kept (copied) and extracted by async_consumer_pump.
EXPORT(async_consumer_new) struct ArrowAsyncDeviceStreamHandler* async_consumer_new(int64_t window, int64_t cancel_after, int defer) {
  struct Consumer* c = counted_malloc(sizeof *c);
  if (c == NULL) return NULL;
  memset(c, 0, sizeof *c);
  c->window = window;
  c->cancel_after = cancel_after;
  c->defer = defer;
  c->handler.on_schema = consumer_on_schema;
  c->handler.on_next_task = consumer_on_next_task;
  c->handler.on_error = consumer_on_error;
  c->handler.release = consumer_release;
  c->handler.private_data = c;
  return &c->handler;
}

// Extracts the queued tasks (after a cancel or an error, with NULL), also
// after the producer released the handler; returns how many are left (none).
EXPORT(async_consumer_pump) int64_t async_consumer_pump(struct ArrowAsyncDeviceStreamHandler* h) {
  struct Consumer* c = (struct Consumer*)h;
  while (c->taken < c->queued) {
    struct ArrowAsyncTask* task = &c->queue[c->taken++];
    if (c->cancelled || c->error_code != 0) {
      c->discarded++;
      task->extract_data(task, NULL);
    } else {
      consumer_take(c, task);
    }
  }
  return c->queued - c->taken;
}

EXPORT(async_consumer_result) int64_t async_consumer_result(struct ArrowAsyncDeviceStreamHandler* h, int i) {
  struct Consumer* c = (struct Consumer*)h;
  const int64_t r[R_COUNT] = {
    c->batches, c->rows, c->sum, c->nulls, c->metadata_seen, c->discarded, c->error_code, c->released, c->ended, c->schema_ok, c->additional_seen,
  };
  return i >= 0 && i < R_COUNT ? r[i] : -1;
}

EXPORT(async_consumer_message) const char* async_consumer_message(struct ArrowAsyncDeviceStreamHandler* h) {
  return ((struct Consumer*)h)->message;
}

EXPORT(async_consumer_free) void async_consumer_free(struct ArrowAsyncDeviceStreamHandler* h) { counted_free(h); }
