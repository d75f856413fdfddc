// A foreign module for test/foreign.test.ts: C built by emcc as its own
// standalone wasm module (its own memory, allocator and function table),
// which produces an int32 column as ArrowSchema + ArrowArray the way any C
// producer would, with release callbacks that count their calls. Nothing of
// arrow-c-device is linked in: only the spec's header.

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
