// The foreign module's type cases (issue 11, tests): one array per type of
// the spec's format strings, produced by hand as any C producer would, with
// its own malloc and release callbacks that free everything and count their
// calls. Every case has 4 slots from a non-zero offset, nulls where the type
// allows, and is exported as ArrowSchema + ArrowArray or ArrowDeviceArray;
// a record batch of every case, too. Nested cases: types-nested.c. Nothing
// of arrow-c-device is linked in: only the spec's header.

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "types.h"

static int live = 0;            // blocks of t_alloc not yet freed
static int roots_released = 0;  // release calls on the structs handed out
static int nodes_released = 0;  // release calls on children and dictionaries, by their parents
static int root_tag;            // private_data of a struct handed out

void* t_alloc(size_t n) { live++; return malloc(n ? n : 1); }
void t_free(void* p) { if (p) { live--; free(p); } }
void* t_dup(const void* src, size_t n) { void* p = t_alloc(n); memcpy(p, src, n); return p; }

uint8_t* t_bits(const char* s) {
  size_t n = strlen(s);
  uint8_t* b = t_alloc((n + 7) / 8);
  memset(b, 0, (n + 7) / 8);
  for (size_t i = 0; i < n; i++) if (s[i] == '1') b[i / 8] |= (uint8_t)(1 << (i % 8));
  return b;
}

static void count(void* private_data) {
  if (private_data == &root_tag) roots_released++; else nodes_released++;
}

static void release_schema(struct ArrowSchema* s) {
  count(s->private_data);
  for (int64_t i = 0; i < s->n_children; i++) {
    if (s->children[i]->release) s->children[i]->release(s->children[i]);
    t_free(s->children[i]);
  }
  t_free(s->children);
  if (s->dictionary) {
    if (s->dictionary->release) s->dictionary->release(s->dictionary);
    t_free(s->dictionary);
  }
  s->release = NULL;
}

static void release_array(struct ArrowArray* a) {
  count(a->private_data);
  for (int64_t i = 0; i < a->n_buffers; i++) t_free((void*)a->buffers[i]);
  t_free(a->buffers);
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
    t_free(a->children[i]);
  }
  t_free(a->children);
  if (a->dictionary) {
    if (a->dictionary->release) a->dictionary->release(a->dictionary);
    t_free(a->dictionary);
  }
  a->release = NULL;
}

struct ArrowSchema* t_schema(const char* format, const char* name, int64_t flags, int64_t n, ...) {
  struct ArrowSchema* s = t_alloc(sizeof *s);
  memset(s, 0, sizeof *s);
  s->format = format;
  s->name = name;
  s->flags = flags;
  s->n_children = n;
  s->children = n ? t_alloc((size_t)n * sizeof(struct ArrowSchema*)) : NULL;
  va_list args;
  va_start(args, n);
  for (int64_t i = 0; i < n; i++) s->children[i] = va_arg(args, struct ArrowSchema*);
  va_end(args);
  s->release = release_schema;
  return s;
}

struct ArrowArray* t_array(int64_t length, int64_t offset, int64_t n_buffers, int64_t n_children) {
  struct ArrowArray* a = t_alloc(sizeof *a);
  memset(a, 0, sizeof *a);
  a->length = length;
  a->offset = offset;
  a->n_buffers = n_buffers;
  a->buffers = t_alloc((size_t)n_buffers * sizeof(void*));
  memset(a->buffers, 0, (size_t)n_buffers * sizeof(void*));
  a->n_children = n_children;
  a->children = n_children ? t_alloc((size_t)n_children * sizeof(struct ArrowArray*)) : NULL;
  a->release = release_array;
  return a;
}

void t_nulls(struct ArrowArray* a) {
  const uint8_t* v = a->n_buffers > 0 ? a->buffers[0] : NULL;
  a->null_count = 0;
  for (int64_t i = a->offset; v && i < a->offset + a->length; i++) if (!((v[i / 8] >> (i % 8)) & 1)) a->null_count++;
}

struct ArrowArray* t_fixed(const void* values, size_t width, int64_t phys, int64_t offset, const char* valid) {
  struct ArrowArray* a = t_array(phys - offset, offset, 2, 0);
  a->buffers[0] = valid ? t_bits(valid) : NULL;
  a->buffers[1] = t_dup(values, width * (size_t)phys);
  t_nulls(a);
  return a;
}

struct ArrowArray* t_strings(const char* const* values, int64_t phys, int64_t offset, int large) {
  char valid[64] = {0};
  if (phys >= (int64_t)sizeof valid) __builtin_trap();  // the cases are short
  struct ArrowArray* a = t_array(phys - offset, offset, 3, 0);
  size_t total = 2;
  for (int64_t i = 0; i < phys; i++) {
    valid[i] = values[i] ? '1' : '0';
    total += values[i] ? strlen(values[i]) : 0;
  }
  char* data = t_alloc(total);
  int64_t* o64 = large ? t_alloc((size_t)(phys + 1) * 8) : NULL;
  int32_t* o32 = large ? NULL : t_alloc((size_t)(phys + 1) * 4);
  memcpy(data, "##", 2);  // bytes before the first value: offsets[0] is 2
  size_t at = 2;
  for (int64_t i = 0; i <= phys; i++) {
    if (large) o64[i] = (int64_t)at; else o32[i] = (int32_t)at;
    if (i < phys && values[i]) { memcpy(data + at, values[i], strlen(values[i])); at += strlen(values[i]); }
  }
  a->buffers[0] = t_bits(valid);
  a->buffers[1] = large ? (void*)o64 : (void*)o32;
  a->buffers[2] = data;
  t_nulls(a);
  return a;
}

// Views of PHYS strings (NULL: null): inline up to 12 bytes, longer ones in
// two variadic buffers by turns, each after 3 bytes of its own.
static struct ArrowArray* views(const char* const* values) {
  struct ArrowArray* a = t_array(LEN, OFF, 5, 0);
  uint8_t* v = t_alloc(16 * PHYS);
  memset(v, 0, 16 * PHYS);
  char* data[2] = {t_alloc(64), t_alloc(64)};
  int64_t* sizes = t_alloc(2 * sizeof(int64_t));
  sizes[0] = sizes[1] = 3;
  memcpy(data[0], "###", 3);
  memcpy(data[1], "%%%", 3);
  char valid[PHYS + 1] = {0};
  for (int i = 0, turn = 0; i < PHYS; i++) {
    valid[i] = values[i] ? '1' : '0';
    if (!values[i]) continue;
    int32_t n = (int32_t)strlen(values[i]);
    memcpy(v + 16 * i, &n, 4);
    if (n <= 12) { memcpy(v + 16 * i + 4, values[i], (size_t)n); continue; }
    int32_t index = turn++ % 2;
    int32_t at = (int32_t)sizes[index];
    memcpy(v + 16 * i + 4, values[i], 4);
    memcpy(v + 16 * i + 8, &index, 4);
    memcpy(v + 16 * i + 12, &at, 4);
    memcpy(data[index] + at, values[i], (size_t)n);
    sizes[index] += n;
  }
  a->buffers[0] = t_bits(valid);
  a->buffers[1] = v;
  a->buffers[2] = data[0];
  a->buffers[3] = data[1];
  a->buffers[4] = sizes;
  t_nulls(a);
  return a;
}

// ---- leaf cases: the slice is slots 1..4; slot 0 is outside it, slot 3 null ----

#define FIXED(fn, T, ...) static struct ArrowArray* fn(void) { static const T v[] = {__VA_ARGS__}; return t_fixed(v, sizeof v / PHYS, PHYS, OFF, VALID); }

static struct ArrowArray* null_array(void) {
  struct ArrowArray* a = t_array(LEN, OFF, 0, 0);
  a->null_count = LEN;
  return a;
}
static struct ArrowArray* bool_array(void) {
  struct ArrowArray* a = t_array(LEN, OFF, 2, 0);
  a->buffers[0] = t_bits(VALID);
  a->buffers[1] = t_bits("10011");
  t_nulls(a);
  return a;
}
FIXED(int8_array, int8_t, -1, -128, 127, 5, -7)
FIXED(int16_array, int16_t, 0, -32768, 32767, 9, 300)
FIXED(int32_array, int32_t, 0, INT32_MIN, INT32_MAX, 9, 42)
FIXED(int64_array, int64_t, 0, INT64_MIN, INT64_MAX, 9, -5)
FIXED(uint8_array, uint8_t, 0, 255, 1, 9, 128)
FIXED(uint16_array, uint16_t, 0, 65535, 1, 9, 32768)
FIXED(uint32_array, uint32_t, 0, UINT32_MAX, 1, 9, 2147483648u)
FIXED(uint64_array, uint64_t, 0, UINT64_MAX, 1, 9, UINT64_C(9223372036854775808))
FIXED(float16_array, uint16_t, 0, 0x3c00, 0xc000, 0, 0x7c00)  // 1, -2, -, +inf
FIXED(float32_array, float, 0, 1.5f, -0.25f, 0, 65504.0f)
FIXED(float64_array, double, 0, 3.14159, -1e300, 0, NAN)
FIXED(decimal32_array, int32_t, 0, 12345, -99999, 0, 999999999)
FIXED(decimal64_array, int64_t, 0, INT64_C(123456789012345678), -1, 0, 42)
// 128 and 256 bits as little-endian 64-bit words: -2, 2^64, 7; -3, 2^128, 5.
FIXED(decimal128_array, int64_t, 0, 0, -2, -1, 0, 1, 0, 0, 7, 0)
FIXED(decimal256_array, int64_t, 0, 0, 0, 0, -3, -1, -1, -1, 0, 0, 1, 0, 0, 0, 0, 0, 5, 0, 0, 0)
FIXED(date32_array, int32_t, 0, 19000, -1, 0, 1)
FIXED(date64_array, int64_t, 0, INT64_C(1641600000000), -86400000, 0, 0)
FIXED(time32s_array, int32_t, 0, 0, 86399, 0, 3600)
FIXED(time32ms_array, int32_t, 0, 1, 86399999, 0, 43200000)
FIXED(time64us_array, int64_t, 0, 1, INT64_C(86399999999), 0, 5)
FIXED(time64ns_array, int64_t, 0, INT64_C(86399999999999), 2, 0, 7)
FIXED(timestamp_array, int64_t, 0, INT64_C(1700000000000), -1, 0, 0)
FIXED(duration_array, int64_t, 0, -5, 86400, 0, 1)
FIXED(months_array, int32_t, 0, 12, -3, 0, 1)
FIXED(day_time_array, int32_t, 0, 0, 1, 500, -2, -1000, 0, 0, 30, 0)
struct Mdn { int32_t months, days; int64_t ns; };
FIXED(mdn_array, struct Mdn, {0, 0, 0}, {1, 2, 3}, {-1, -2, INT64_C(-3000000000)}, {0, 0, 0}, {0, 31, 1})
FIXED(fixed_binary_array, uint8_t, 9, 9, 9, 0x00, 0x01, 0x02, 0xff, 0xfe, 0xfd, 7, 7, 7, 0xab, 0xcd, 0xef)

static const char* const binary_values[PHYS] = {"\x01", "\xab\xcd", "", NULL, "\xff\xee"};
static const char* const utf8_values[PHYS] = {"skip", "\xce\xb1", "", NULL, "w\xc3\xb6rld"};  // α, wörld
static const char* const large_utf8_values[PHYS] = {"zz", "long value", "b", NULL, "\xe2\x82\xac"};  // €
static struct ArrowArray* binary_array(void) { return t_strings(binary_values, PHYS, OFF, 0); }
static struct ArrowArray* large_binary_array(void) { return t_strings(binary_values, PHYS, OFF, 1); }
static struct ArrowArray* utf8_array(void) { return t_strings(utf8_values, PHYS, OFF, 0); }
static struct ArrowArray* large_utf8_array(void) { return t_strings(large_utf8_values, PHYS, OFF, 1); }
static struct ArrowArray* binary_view_array(void) {
  static const char* const v[PHYS] = {"\xff outside the slice, long", "\xab\xcd",
    "\x80\x81\x82\x83\x84\x85\x86\x87\x88\x89\x8a\x8b\x8c", NULL, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e"};
  return views(v);
}
static struct ArrowArray* utf8_view_array(void) {
  static const char* const v[PHYS] = {"outside the slice, long", "exactly12byt", "longer than twelve bytes", NULL, "in the second buffer: \xce\xb2"};
  return views(v);
}

#define LEAF(name, format, fn) {name, format, NULL, fn}
static const struct Case leaf_cases[] = {
  LEAF("null", "n", null_array), LEAF("bool", "b", bool_array),
  LEAF("int8", "c", int8_array), LEAF("int16", "s", int16_array), LEAF("int32", "i", int32_array), LEAF("int64", "l", int64_array),
  LEAF("uint8", "C", uint8_array), LEAF("uint16", "S", uint16_array), LEAF("uint32", "I", uint32_array), LEAF("uint64", "L", uint64_array),
  LEAF("float16", "e", float16_array), LEAF("float32", "f", float32_array), LEAF("float64", "g", float64_array),
  LEAF("decimal32", "d:9,2,32", decimal32_array), LEAF("decimal64", "d:18,3,64", decimal64_array),
  LEAF("decimal128", "d:38,10", decimal128_array), LEAF("decimal256", "d:76,0,256", decimal256_array),
  LEAF("date32", "tdD", date32_array), LEAF("date64", "tdm", date64_array),
  LEAF("time32_s", "tts", time32s_array), LEAF("time32_ms", "ttm", time32ms_array),
  LEAF("time64_us", "ttu", time64us_array), LEAF("time64_ns", "ttn", time64ns_array),
  LEAF("timestamp_ms_tz", "tsm:Europe/Paris", timestamp_array), LEAF("duration_s", "tDs", duration_array),
  LEAF("interval_months", "tiM", months_array), LEAF("interval_day_time", "tiD", day_time_array),
  LEAF("interval_month_day_nano", "tin", mdn_array),
  LEAF("binary", "z", binary_array), LEAF("large_binary", "Z", large_binary_array),
  LEAF("utf8", "u", utf8_array), LEAF("large_utf8", "U", large_utf8_array),
  LEAF("binary_view", "vz", binary_view_array), LEAF("utf8_view", "vu", utf8_view_array),
  LEAF("fixed_size_binary", "w:3", fixed_binary_array),
};
static const int leaf_count = sizeof leaf_cases / sizeof leaf_cases[0];

static const struct Case* case_at(int i) {
  if (i < 0 || i >= leaf_count + nested_count) return NULL;
  return i < leaf_count ? &leaf_cases[i] : &nested_cases[i - leaf_count];
}

static struct ArrowSchema* schema_of(const struct Case* c) {
  return c->format ? t_schema(c->format, c->name, ARROW_FLAG_NULLABLE, 0) : c->schema();
}

// ---- exports ---------------------------------------------------------------

EXPORT(types_live_blocks) int types_live_blocks(void) { return live; }
EXPORT(types_roots_released) int types_roots_released(void) { return roots_released; }
EXPORT(types_nodes_released) int types_nodes_released(void) { return nodes_released; }
EXPORT(types_free) void types_free(void* p) { t_free(p); }
EXPORT(case_count) int case_count(void) { return leaf_count + nested_count; }
EXPORT(case_name) const char* case_name(int i) { return case_at(i) ? case_at(i)->name : NULL; }

// The case's schema and array; NULL past the last case. The caller frees the struct itself (types_free) after release.
EXPORT(case_schema) struct ArrowSchema* case_schema(int i) {
  if (!case_at(i)) return NULL;
  struct ArrowSchema* s = schema_of(case_at(i));
  s->private_data = &root_tag;
  return s;
}

EXPORT(case_array) struct ArrowArray* case_array(int i) {
  if (!case_at(i)) return NULL;
  struct ArrowArray* a = case_at(i)->array();
  a->private_data = &root_tag;
  return a;
}

// An array moved into an ArrowDeviceArray on the CPU (device_id -1, no event).
static struct ArrowDeviceArray* on_cpu(struct ArrowArray* a) {
  if (!a) return NULL;
  struct ArrowDeviceArray* d = t_alloc(sizeof *d);
  memset(d, 0, sizeof *d);
  d->array = *a;  // moved: the struct's content, not its buffers
  t_free(a);
  d->device_id = -1;
  d->device_type = ARROW_DEVICE_CPU;
  return d;
}

EXPORT(case_device_array) struct ArrowDeviceArray* case_device_array(int i) { return on_cpu(case_array(i)); }

// A record batch (struct, no nulls, offset 0) of every case as a column named after it.
EXPORT(batch_schema) struct ArrowSchema* batch_schema(void) {
  int n = case_count();
  struct ArrowSchema* s = t_schema("+s", "", 0, 0);
  s->n_children = n;
  s->children = t_alloc((size_t)n * sizeof(struct ArrowSchema*));
  for (int i = 0; i < n; i++) s->children[i] = schema_of(case_at(i));
  s->private_data = &root_tag;
  return s;
}

EXPORT(batch_array) struct ArrowArray* batch_array(void) {
  int n = case_count();
  struct ArrowArray* a = t_array(LEN, 0, 1, n);
  for (int i = 0; i < n; i++) a->children[i] = case_at(i)->array();
  a->private_data = &root_tag;
  return a;
}

EXPORT(batch_device_array) struct ArrowDeviceArray* batch_device_array(void) { return on_cpu(batch_array()); }
