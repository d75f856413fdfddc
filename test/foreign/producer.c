// A foreign module for test/foreign.test.ts: C built by emcc as its own
// standalone wasm module (its own memory, allocator and function table),
// which produces an int32 column as ArrowSchema + ArrowArray the way any C
// producer would, with release callbacks that count their calls. Nothing of
// arrow-c-device is linked in: only the spec's header.

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_device.h"

#define EXPORT(name) __attribute__((export_name(#name)))

static int live = 0;      // blocks allocated here and not freed
static int released = 0;  // release callbacks called

static void* counted_malloc(size_t n) { live++; return malloc(n); }
static void counted_free(void* p) { if (p) { live--; free(p); } }

static void release_schema(struct ArrowSchema* s) {
  released++;
  s->release = NULL;
}

static void release_array(struct ArrowArray* a) {
  released++;
  counted_free((void*)a->buffers[0]);
  counted_free((void*)a->buffers[1]);
  counted_free((void*)a->buffers);
  a->release = NULL;
}

static int add(int a, int b) { return a + b; }
static void boom(void* p) { (void)p; __builtin_trap(); }

EXPORT(live_blocks) int live_blocks(void) { return live; }
EXPORT(released_count) int released_count(void) { return released; }
EXPORT(add_ptr) uintptr_t add_ptr(void) { return (uintptr_t)add; }
EXPORT(boom_ptr) uintptr_t boom_ptr(void) { return (uintptr_t)boom; }

// An int32 column "x" of `length` values 10, 11, ... (every third one null),
// exposed from slot `offset` on; the two structs are allocated here too.
EXPORT(make_schema) struct ArrowSchema* make_schema(void) {
  struct ArrowSchema* s = counted_malloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->format = "i";
  s->name = "x";
  s->flags = ARROW_FLAG_NULLABLE;
  s->release = release_schema;
  return s;
}

EXPORT(make_array) struct ArrowArray* make_array(int64_t length, int64_t offset) {
  int64_t n = offset + length;
  uint8_t* validity = counted_malloc((size_t)(n + 7) / 8);
  int32_t* values = counted_malloc((size_t)n * sizeof(int32_t));
  memset(validity, 0, (size_t)(n + 7) / 8);
  int64_t nulls = 0;
  for (int64_t i = 0; i < n; i++) {
    values[i] = (int32_t)(10 + i);
    if (i % 3 == 2) { if (i >= offset) nulls++; } else validity[i / 8] |= (uint8_t)(1 << (i % 8));
  }
  const void** buffers = counted_malloc(2 * sizeof(void*));
  buffers[0] = validity;
  buffers[1] = values;
  struct ArrowArray* a = counted_malloc(sizeof *a);
  memset(a, 0, sizeof *a);
  a->length = length;
  a->offset = offset;
  a->null_count = nulls;
  a->n_buffers = 2;
  a->buffers = buffers;
  a->release = release_array;
  return a;
}

EXPORT(free_struct) void free_struct(void* p) { counted_free(p); }

// ---- consuming what arrow-c-device exported into this module ------------------

static int is_valid(const struct ArrowArray* a, int64_t i) {
  const uint8_t* v = (const uint8_t*)a->buffers[0];
  int64_t j = a->offset + i;
  return v == NULL || (v[j / 8] >> (j % 8)) & 1;
}

static int64_t sum_node(const struct ArrowArray* a) {
  const int32_t* values = (const int32_t*)a->buffers[1];
  int64_t sum = 0;
  for (int64_t i = 0; i < a->length; i++) if (is_valid(a, i)) sum += values[a->offset + i];
  return sum;
}

// The sum of an int32 column's non-null values (offset and validity
// respected); then both structs are released, as any C consumer does.
// -1 when the schema is not int32.
EXPORT(sum_int32) int64_t sum_int32(struct ArrowSchema* schema, struct ArrowArray* array) {
  int64_t sum = strcmp(schema->format, "i") == 0 && array->n_buffers == 2 ? sum_node(array) : -1;
  array->release(array);
  schema->release(schema);
  return sum;
}

// The sum of int32 column `column` of a record batch (a struct array);
// the child is moved out first and released after its parent, as the spec
// allows a consumer to. -1 when that column is not int32.
EXPORT(sum_batch_column) int64_t sum_batch_column(struct ArrowSchema* schema, struct ArrowArray* array, int64_t column) {
  int64_t sum = -1;
  if (strcmp(schema->format, "+s") == 0 && column < array->n_children &&
      strcmp(schema->children[column]->format, "i") == 0) {
    struct ArrowArray child = *array->children[column];
    array->children[column]->release = NULL;  // moved
    array->release(array);
    sum = sum_node(&child);
    child.release(&child);
  } else {
    array->release(array);
  }
  schema->release(schema);
  return sum;
}

// FNV-1a over a utf8 column's strings (a null hashes as one 0xff byte), then released.
EXPORT(hash_utf8) uint32_t hash_utf8(struct ArrowSchema* schema, struct ArrowArray* array) {
  uint32_t h = 2166136261u;
  if (strcmp(schema->format, "u") == 0) {
    const int32_t* offsets = (const int32_t*)array->buffers[1];
    const uint8_t* data = (const uint8_t*)array->buffers[2];
    for (int64_t i = 0; i < array->length; i++) {
      if (!is_valid(array, i)) { h = (h ^ 0xffu) * 16777619u; continue; }
      for (int32_t k = offsets[array->offset + i]; k < offsets[array->offset + i + 1]; k++) h = (h ^ data[k]) * 16777619u;
    }
  }
  array->release(array);
  schema->release(schema);
  return h;
}

// The sum of a CPU device array's int32 values (of its first column, for a
// record batch), then released.
EXPORT(sum_device_int32) int64_t sum_device_int32(struct ArrowSchema* schema, struct ArrowDeviceArray* device) {
  const struct ArrowArray* a = &device->array;
  if (strcmp(schema->format, "+s") == 0 && a->n_children > 0) a = a->children[0];
  int64_t sum = device->device_type == ARROW_DEVICE_CPU ? sum_node(a) : -1;
  device->array.release(&device->array);
  schema->release(schema);
  return sum;
}

// ---- a pull stream of record batches (struct<x: int32>) ------------------------

struct StreamState {
  int64_t next;
  int64_t batches;
  int64_t fail_at;  // get_next fails (EIO) at this batch; -1: never
  char message[64];
};

static void release_batch(struct ArrowArray* a) {
  released++;
  struct ArrowArray* child = a->children[0];
  if (child->release != NULL) child->release(child);
  counted_free(a->children[0]);
  counted_free(a->children);
  counted_free((void*)a->buffers);
  a->release = NULL;
}

static void release_batch_schema(struct ArrowSchema* s) {
  released++;
  struct ArrowSchema* child = s->children[0];
  if (child->release != NULL) child->release(child);
  counted_free(child);
  counted_free(s->children);
  s->release = NULL;
}

static int stream_get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  (void)stream;
  struct ArrowSchema* child = make_schema();  // "x": int32, released by its own callback
  struct ArrowSchema** children = counted_malloc(sizeof(struct ArrowSchema*));
  children[0] = child;
  memset(out, 0, sizeof *out);
  out->format = "+s";
  out->name = "";
  out->n_children = 1;
  out->children = children;
  out->release = release_batch_schema;
  return 0;
}

static int stream_get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  struct StreamState* st = stream->private_data;
  memset(out, 0, sizeof *out);
  if (st->next == st->fail_at) {
    strcpy(st->message, "simulated failure in get_next");
    return EIO;
  }
  if (st->next >= st->batches) return 0;  // released: the end
  int64_t b = st->next++;
  struct ArrowArray* child = make_array(3, 0);
  int32_t* values = (int32_t*)child->buffers[1];
  for (int i = 0; i < 3; i++) values[i] = (int32_t)(b * 10 + i);
  child->null_count = 0;
  memset((void*)child->buffers[0], 0xff, 1);
  struct ArrowArray** children = counted_malloc(sizeof(struct ArrowArray*));
  children[0] = child;
  const void** buffers = counted_malloc(sizeof(void*));
  buffers[0] = NULL;
  out->length = 3;
  out->n_buffers = 1;
  out->buffers = buffers;
  out->n_children = 1;
  out->children = children;
  out->release = release_batch;
  return 0;
}

static const char* stream_get_last_error(struct ArrowArrayStream* stream) {
  struct StreamState* st = stream->private_data;
  return st->message[0] ? st->message : NULL;
}

static void stream_release(struct ArrowArrayStream* stream) {
  released++;
  counted_free(stream->private_data);
  stream->release = NULL;
}

// A stream of `batches` batches of struct<x: int32>, whose get_next fails at `fail_at`.
EXPORT(make_stream) struct ArrowArrayStream* make_stream(int64_t batches, int64_t fail_at) {
  struct StreamState* st = counted_malloc(sizeof *st);
  memset(st, 0, sizeof *st);
  st->batches = batches;
  st->fail_at = fail_at;
  struct ArrowArrayStream* s = counted_malloc(sizeof *s);
  s->get_schema = stream_get_schema;
  s->get_next = stream_get_next;
  s->get_last_error = stream_get_last_error;
  s->release = stream_release;
  s->private_data = st;
  return s;
}

// ---- consuming a stream arrow-c-device exported into this module ----------------

static char consumer_message[256];

EXPORT(consumer_message_ptr) const char* consumer_message_ptr(void) { return consumer_message; }

// Pulls every batch of a stream of record batches whose first column is
// int32, sums that column, and releases each batch, the schema and the
// stream, as a C consumer does. Returns the sum, or -(error code) with
// get_last_error's message in consumer_message.
EXPORT(drain_stream) int64_t drain_stream(struct ArrowArrayStream* stream) {
  struct ArrowSchema schema;
  int64_t sum = 0;
  int code = stream->get_schema(stream, &schema);
  if (code == 0) {
    int ok = strcmp(schema.format, "+s") == 0 && schema.n_children > 0 && strcmp(schema.children[0]->format, "i") == 0;
    schema.release(&schema);
    if (!ok) code = EINVAL;
  }
  while (code == 0) {
    struct ArrowArray batch;
    code = stream->get_next(stream, &batch);
    if (code != 0 || batch.release == NULL) break;
    sum += sum_node(batch.children[0]);
    batch.release(&batch);
  }
  if (code != 0) {
    const char* m = stream->get_last_error(stream);
    strncpy(consumer_message, m ? m : "(no message)", sizeof consumer_message - 1);
  }
  stream->release(stream);
  return code != 0 ? -code : sum;
}
