// The bookkeeping of one validation walk (struct AcdValidation): the path
// from the root kept while walking, so that every failure says where it
// happened; and trees, not DAGs (issue 9, item 4): the set of structs the walk
// has reached, and the message that names both paths of a struct reached
// twice. With it a walk visits each struct once, so its work is bounded by
// the size of its input rather than by the number of paths through a DAG.

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate/validate.h"

// ---- paths ----------------------------------------------------------------

void AcdValidationInit(struct AcdValidation* v, struct AcdError* error) {
  v->error = error;
  v->nodes_left = ACD_VALIDATION_MAX_NODES;
  v->path_length = 4;
  memcpy(v->path, "root", 5);
  v->root = NULL;
  v->seen = NULL;
  v->seen_capacity = 0;
  v->seen_count = 0;
}

void AcdValidationEnd(struct AcdValidation* v) {
  if (v->seen != NULL && v->seen != v->seen_inline) AcdFree(v->seen);
  v->seen = NULL;
  v->seen_capacity = 0;
  v->seen_count = 0;
}

// Appends n bytes of text to the path (truncating at its end); returns the mark.
static size_t AcdValidationAppend(struct AcdValidation* v, const char* text, size_t n) {
  size_t mark = v->path_length;
  if (v->error == NULL) return mark;
  size_t room = sizeof(v->path) - 1 - mark;
  if (n > room) n = room;
  memcpy(v->path + mark, text, n);
  v->path_length = mark + n;
  v->path[v->path_length] = '\0';
  return mark;
}

// The common path components without vsnprintf: the path is built on every
// node a validation visits, so it has to be cheap.
size_t AcdValidationPushText(struct AcdValidation* v, const char* text) {
  return AcdValidationAppend(v, text, strlen(text));
}

size_t AcdValidationPushChild(struct AcdValidation* v, int64_t i) {
  char text[40] = ".children[";
  size_t n = 10;
  char digits[24];
  size_t d = 0;
  uint64_t x = (uint64_t)i;
  do {
    digits[d++] = (char)('0' + x % 10);
    x /= 10;
  } while (x != 0);
  while (d > 0) text[n++] = digits[--d];
  text[n++] = ']';
  return AcdValidationAppend(v, text, n);
}

size_t AcdValidationPush(struct AcdValidation* v, const char* fmt, ...) {
  size_t mark = v->path_length;
  // Without an error to fill, the path is never shown.
  if (v->error == NULL) return mark;

  size_t room = sizeof(v->path) - mark;
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(v->path + mark, room, fmt, args);
  va_end(args);
  if (n < 0) {
    v->path[mark] = '\0';
  } else {
    v->path_length = (size_t)n < room ? mark + (size_t)n : sizeof(v->path) - 1;
  }
  return mark;
}

void AcdValidationPop(struct AcdValidation* v, size_t mark) {
  v->path_length = mark;
  v->path[mark] = '\0';
}

// Very deep paths keep their start and end, so that the message still fits.
static void AcdValidationPrefixPath(struct AcdValidation* v, const char* field) {
  const char* sep = field == NULL ? "" : ".";
  if (field == NULL) field = "";
  // The path on its own too (cut at its end when very long), for callers.
  int n = snprintf(v->error->path, sizeof(v->error->path), "%s%s%s", v->path, sep, field);
  if (n < 0) v->error->path[0] = '\0';
  if (v->path_length <= 400) {
    AcdErrorPrefix(v->error, "%s%s%s", v->path, sep, field);
  } else {
    const char* tail = v->path + v->path_length - 250;
    AcdErrorPrefix(v->error, "%.100s...%s%s%s", v->path, tail, sep, field);
  }
}

int AcdValidationFail(struct AcdValidation* v, const char* field, int code, const char* fmt,
                      ...) {
  if (v->error == NULL) return code;

  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(v->error->message, sizeof(v->error->message), fmt, args);
  va_end(args);
  if (n < 0) v->error->message[0] = '\0';
  AcdValidationPrefixPath(v, field);
  return code;
}

int AcdValidationPrefix(struct AcdValidation* v, int code) {
  if (v->error != NULL) AcdValidationPrefixPath(v, NULL);
  return code;
}

int AcdValidationPrefixField(struct AcdValidation* v, const char* field, int code) {
  if (v->error != NULL) AcdValidationPrefixPath(v, field);
  return code;
}

int AcdValidationReadable(const void* ptr, int64_t size) {
  return size == 0 || (size > 0 && AcdAddressRangeValid(ptr, size));
}

// ---- the seen set -------------------------------------------------------------

static size_t AcdSeenSlot(const uintptr_t* table, size_t capacity, uintptr_t key) {
  size_t mask = capacity - 1;
  size_t h = (size_t)(((uint64_t)key >> 3) * 0x9E3779B97F4A7C15ull >> 17) & mask;
  while (table[h] != 0 && table[h] != key) h = (h + 1) & mask;
  return h;
}

int AcdValidationSeen(struct AcdValidation* v, const void* ptr) {
  if (v->seen_capacity == 0) {
    memset(v->seen_inline, 0, sizeof(v->seen_inline));
    v->seen = v->seen_inline;
    v->seen_capacity = ACD_VALIDATION_SEEN_INLINE;
  }
  uintptr_t key = (uintptr_t)ptr;
  size_t h = AcdSeenSlot(v->seen, v->seen_capacity, key);
  if (v->seen[h] == key) return 1;
  // At most half full: grow fourfold (a few allocations per walk, never one per node).
  if ((v->seen_count + 1) * 2 > v->seen_capacity) {
    size_t capacity = v->seen_capacity * 4;
    uintptr_t* table = AcdCalloc((int64_t)capacity, (int64_t)sizeof(uintptr_t));
    if (table == NULL) return -1;
    for (size_t i = 0; i < v->seen_capacity; i++) {
      if (v->seen[i] != 0) table[AcdSeenSlot(table, capacity, v->seen[i])] = v->seen[i];
    }
    if (v->seen != v->seen_inline) AcdFree(v->seen);
    v->seen = table;
    v->seen_capacity = capacity;
    h = AcdSeenSlot(table, capacity, key);
  }
  v->seen[h] = key;
  v->seen_count++;
  return 0;
}

int AcdValidationVisit(struct AcdValidation* v) {
  if (--v->nodes_left >= 0) return ACD_OK;
  return AcdValidationFail(v, NULL, EINVAL,
                           "more than %d nodes: a tree this large is not accepted",
                           ACD_VALIDATION_MAX_NODES);
}

// ---- paths ----------------------------------------------------------------------

// Finds where a walk in the validators' order (pre-order: the node, its
// children, then its dictionary) first reached target, and appends that path
// to path (size bytes, holding "root"). Only nodes the validation already
// reached before target's second visit are read, but each is checked again.
int AcdTreeFindPath(const void* node, const void* target, enum AcdTreeKind kind, char* path,
                    size_t size, int depth) {
  if (node == target) return 1;
  size_t struct_size = kind == ACD_TREE_SCHEMA ? sizeof(struct ArrowSchema) : sizeof(struct ArrowArray);
  size_t align = kind == ACD_TREE_SCHEMA ? _Alignof(struct ArrowSchema) : _Alignof(struct ArrowArray);
  if (node == NULL || depth >= ACD_VALIDATION_MAX_DEPTH || !ACD_IS_ALIGNED(node, align) ||
      !AcdValidationReadable(node, (int64_t)struct_size)) {
    return 0;
  }
  int64_t n;
  const void* const* children;
  const void* dictionary;
  if (kind == ACD_TREE_SCHEMA) {
    const struct ArrowSchema* s = node;
    n = s->n_children;
    children = (const void* const*)s->children;
    dictionary = s->dictionary;
  } else {
    const struct ArrowArray* a = node;
    n = a->n_children;
    children = (const void* const*)a->children;
    dictionary = a->dictionary;
  }
  size_t length = strlen(path);
  if (n > 0 && n < INT64_MAX / (int64_t)sizeof(void*) && children != NULL &&
      ACD_IS_ALIGNED(children, _Alignof(void*)) &&
      AcdValidationReadable(children, n * (int64_t)sizeof(void*))) {
    for (int64_t i = 0; i < n; i++) {
      snprintf(path + length, size - length, ".children[%" PRId64 "]", i);
      if (AcdTreeFindPath(children[i], target, kind, path, size, depth + 1)) return 1;
    }
  }
  if (dictionary != NULL) {
    snprintf(path + length, size - length, ".dictionary");
    if (AcdTreeFindPath(dictionary, target, kind, path, size, depth + 1)) return 1;
  }
  path[length] = '\0';
  return 0;
}

int AcdValidationVisitStruct(struct AcdValidation* v, const void* root, const void* node,
                             enum AcdTreeKind kind) {
  int seen = AcdValidationSeen(v, node);
  if (seen == 0) return ACD_OK;
  const char* name = kind == ACD_TREE_SCHEMA ? "ArrowSchema" : "ArrowArray";
  if (seen < 0) {
    return AcdValidationFail(v, NULL, ENOMEM, "out of memory recording the visited structs");
  }
  char first[512] = "root";
  if (!AcdTreeFindPath(root, node, kind, first, sizeof(first), 0)) memcpy(first, "?", 2);
  return AcdValidationFail(v, NULL, EINVAL,
                           "the same struct %s as %s (%p): a C Data tree is a tree, in which no "
                           "struct is reached twice and there is no cycle",
                           name, first, node);
}

