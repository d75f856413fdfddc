// The foreign module's consumer of record batches that arrow-c-device
// exported { into } it (issue 11, tests), written from the spec alone: it
// checks each batch by hand (formats, buffer counts, lengths, offsets,
// child lengths, dictionary indices), hashes the logical values of every
// column (FNV-1a; offsets and validity respected), then releases what it
// was given through the release callbacks in its table. Batches pulled
// from a stream are hashed the same way. Also the other direction: a pull
// stream of its own record batches of every type case (types.c).

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "types.h"

static char message[256];
EXPORT(types_message) const char* types_message(void) { return message; }

// ---- the hash: per slot a tag byte (0 null, 1 valid) then the value ----------
//   int32, int64, float64: little-endian bytes; bool: one byte 0/1;
//   utf8, large utf8, binary: a 4-byte length then the bytes;
//   list: a 4-byte count then each item; struct: each child's slot;
//   dictionary: the dictionary's slot. Columns one after the other.

static void fnv(uint32_t* h, const void* p, size_t n) {
  const uint8_t* b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 16777619u;
}

static int valid(const struct ArrowArray* a, int64_t j) {
  const uint8_t* v = a->buffers[0];
  return v == NULL || (v[j / 8] >> (j % 8)) & 1;
}

static int64_t offset_at(const struct ArrowArray* a, int64_t j, int large) {
  return large ? ((const int64_t*)a->buffers[1])[j] : ((const int32_t*)a->buffers[1])[j];
}

// Hashes logical slot i of a checked node (its offset applied here).
static void hash_slot(uint32_t* h, const struct ArrowSchema* s, const struct ArrowArray* a, int64_t i) {
  int64_t j = a->offset + i;
  uint8_t tag = (uint8_t)valid(a, j);
  fnv(h, &tag, 1);
  if (!tag) return;
  const char* f = s->format;
  if (s->dictionary) { hash_slot(h, s->dictionary, a->dictionary, ((const int32_t*)a->buffers[1])[j]); return; }
  if (!strcmp(f, "i")) fnv(h, (const int32_t*)a->buffers[1] + j, 4);
  else if (!strcmp(f, "l") || !strcmp(f, "g")) fnv(h, (const int64_t*)a->buffers[1] + j, 8);
  else if (!strcmp(f, "b")) { uint8_t b = (((const uint8_t*)a->buffers[1])[j / 8] >> (j % 8)) & 1; fnv(h, &b, 1); }
  else if (!strcmp(f, "u") || !strcmp(f, "U") || !strcmp(f, "z")) {
    int large = f[0] == 'U';
    int64_t start = offset_at(a, j, large);
    uint32_t n = (uint32_t)(offset_at(a, j + 1, large) - start);
    fnv(h, &n, 4);
    fnv(h, (const uint8_t*)a->buffers[2] + start, n);
  } else if (!strcmp(f, "+l")) {
    int64_t start = offset_at(a, j, 0);
    uint32_t n = (uint32_t)(offset_at(a, j + 1, 0) - start);
    fnv(h, &n, 4);
    for (int64_t k = start; k < start + n; k++) hash_slot(h, s->children[0], a->children[0], k);
  } else if (!strcmp(f, "+s")) {
    for (int64_t c = 0; c < s->n_children; c++) hash_slot(h, s->children[c], a->children[c], j);
  }
}

// ---- the check ---------------------------------------------------------------

static int fail(const char* path, const char* what) {
  snprintf(message, sizeof message, "%s: %s", path, what);
  return EINVAL;
}

static int check(const struct ArrowSchema* s, const struct ArrowArray* a, const char* path, int depth);

// Offsets of slots [offset, offset + length] never decrease, start >= 0, end <= limit (-1: unknown).
static int check_offsets(const struct ArrowArray* a, int large, int64_t limit, const char* path) {
  if (a->length == 0) return 0;
  if (a->buffers[1] == NULL) return fail(path, "offsets: NULL");
  int64_t prev = offset_at(a, a->offset, large);
  if (prev < 0) return fail(path, "offsets: the first is negative");
  for (int64_t j = a->offset + 1; j <= a->offset + a->length; j++) {
    int64_t o = offset_at(a, j, large);
    if (o < prev) return fail(path, "offsets: they decrease");
    prev = o;
  }
  if (limit >= 0 && prev > limit) return fail(path, "offsets: the last is past the child's length");
  return 0;
}

static int check_children(const struct ArrowSchema* s, const struct ArrowArray* a, const char* path, int depth) {
  for (int64_t c = 0; c < a->n_children; c++) {
    char at[128];
    snprintf(at, sizeof at, "%s.%s", path, s->children[c]->name ? s->children[c]->name : "?");
    int code = check(s->children[c], a->children[c], at, depth + 1);
    if (code) return code;
  }
  return 0;
}

static int check(const struct ArrowSchema* s, const struct ArrowArray* a, const char* path, int depth) {
  if (depth > 32) return fail(path, "too deep");
  if (a == NULL || a->release == NULL) return fail(path, "a released or missing array");
  if (a->length < 0 || a->offset < 0) return fail(path, "a negative length or offset");
  if (a->null_count < -1 || a->null_count > a->length) return fail(path, "a null count out of range");
  const char* f = s->format;
  int64_t buffers = -1, children = 0;
  if (s->dictionary) buffers = !strcmp(f, "i") ? 2 : -1;
  else if (!strcmp(f, "i") || !strcmp(f, "l") || !strcmp(f, "g") || !strcmp(f, "b")) buffers = 2;
  else if (!strcmp(f, "u") || !strcmp(f, "U") || !strcmp(f, "z")) buffers = 3;
  else if (!strcmp(f, "+l")) buffers = 2, children = 1;
  else if (!strcmp(f, "+s")) buffers = 1, children = s->n_children;
  if (buffers < 0) return fail(path, "a format this consumer does not read");
  if (a->n_buffers != buffers || a->n_children != children || s->n_children != children) return fail(path, "n_buffers or n_children not as the format says");
  if (a->buffers == NULL || (children > 0 && (a->children == NULL || s->children == NULL))) return fail(path, "NULL buffers or children");
  if (a->null_count != 0 && a->buffers[0] == NULL && a->length > 0) return fail(path, "nulls without a validity bitmap");
  if (buffers >= 2 && a->length > 0 && a->buffers[1] == NULL) return fail(path, "a NULL data buffer");
  int64_t end = a->offset + a->length;
  if (s->dictionary) {
    if (a->dictionary == NULL) return fail(path, "no dictionary");
    int code = check(s->dictionary, a->dictionary, path, depth + 1);
    if (code) return code;
    for (int64_t j = a->offset; j < end; j++) {
      int32_t k = ((const int32_t*)a->buffers[1])[j];
      if (valid(a, j) && (k < 0 || k >= a->dictionary->length)) return fail(path, "an index out of the dictionary");
    }
    return 0;
  }
  if (!strcmp(f, "u") || !strcmp(f, "U") || !strcmp(f, "z")) {
    if (a->length > 0 && a->buffers[2] == NULL) return fail(path, "NULL data");
    return check_offsets(a, f[0] == 'U', -1, path);
  }
  if (!strcmp(f, "+l")) {
    int code = check_offsets(a, 0, a->children[0]->length, path);
    return code ? code : check_children(s, a, path, depth);
  }
  if (!strcmp(f, "+s")) {
    for (int64_t c = 0; c < children; c++) if (a->children[c]->length < end) return fail(path, "a child shorter than the struct");
    return check_children(s, a, path, depth);
  }
  return 0;
}

static int check_and_hash(const struct ArrowSchema* s, const struct ArrowArray* a, uint32_t* h) {
  if (strcmp(s->format, "+s") != 0) return fail("batch", "not a struct");
  int code = check(s, a, "batch", 0);
  if (code) return code;
  for (int64_t c = 0; c < a->n_children; c++) {
    for (int64_t i = 0; i < a->length; i++) hash_slot(h, s->children[c], a->children[c], a->offset + i);
  }
  return 0;
}

// Checks and hashes a record batch, then releases both structs. The hash, or -(error code) with the reason in types_message.
EXPORT(consume_batch) int64_t consume_batch(struct ArrowSchema* schema, struct ArrowArray* array) {
  uint32_t h = 2166136261u;
  int code = check_and_hash(schema, array, &h);
  array->release(array);
  schema->release(schema);
  return code ? -code : (int64_t)h;
}

static const char* last_error(struct ArrowArrayStream* stream) {
  const char* m = stream->get_last_error(stream);
  return m ? m : "(no message)";
}

// Pulls every batch of a stream, checks and hashes them one after the
// other (one hash), releasing each, then the schema and the stream.
EXPORT(consume_stream) int64_t consume_stream(struct ArrowArrayStream* stream) {
  uint32_t h = 2166136261u;
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int code = stream->get_schema(stream, &schema);
  if (code) snprintf(message, sizeof message, "get_schema: %s", last_error(stream));
  while (code == 0) {
    struct ArrowArray batch;
    code = stream->get_next(stream, &batch);
    if (code) { snprintf(message, sizeof message, "get_next: %s", last_error(stream)); break; }
    if (batch.release == NULL) break;
    code = check_and_hash(&schema, &batch, &h);
    batch.release(&batch);
  }
  if (schema.release) schema.release(&schema);
  stream->release(stream);
  return code ? -code : (int64_t)h;
}

// ---- a pull stream of its own: `batches` record batches of every case -------

struct ArrowSchema* batch_schema(void);
struct ArrowArray* batch_array(void);

static int64_t stream_left = 0;  // one stream at a time: enough for the tests
static int streams_released = 0;
EXPORT(types_streams_released) int types_streams_released(void) { return streams_released; }

static int get_schema(struct ArrowArrayStream* stream, struct ArrowSchema* out) {
  (void)stream;
  struct ArrowSchema* s = batch_schema();
  *out = *s;  // moved
  t_free(s);
  return 0;
}

static int get_next(struct ArrowArrayStream* stream, struct ArrowArray* out) {
  (void)stream;
  memset(out, 0, sizeof *out);
  if (stream_left == 0) return 0;  // released: the end
  stream_left--;
  struct ArrowArray* a = batch_array();
  *out = *a;
  t_free(a);
  return 0;
}

static const char* get_last_error(struct ArrowArrayStream* stream) { (void)stream; return NULL; }

static void release_stream(struct ArrowArrayStream* stream) {
  stream_left = 0;
  streams_released++;
  stream->release = NULL;
}

// The caller frees the struct itself (types_free) after release.
EXPORT(types_stream) struct ArrowArrayStream* types_stream(int64_t batches) {
  struct ArrowArrayStream* s = t_alloc(sizeof *s);
  stream_left = batches;
  s->get_schema = get_schema;
  s->get_next = get_next;
  s->get_last_error = get_last_error;
  s->release = release_stream;
  s->private_data = NULL;
  return s;
}
