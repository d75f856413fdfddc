// Producing a whole ArrowSchema tree and a whole ArrowArray tree in one call,
// from a flat descriptor the caller wrote into memory (ts/model/flat.ts):
// one wasm call per export instead of a few per node. Each node is made
// exactly as AcdSchemaInit and AcdArrayInit + AcdArrayAllocateBuffer make it
// (same blocks, same releases, same ownership); the buffers are allocated
// here and their addresses written back into the descriptor for the caller
// to fill. The walk keeps its own stack (no C recursion, so no depth limit
// that could overrun the wasm stack).

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

// The largest integer a double holds exactly (JS's Number.MAX_SAFE_INTEGER + 1):
// every count and size of a descriptor is at most this, so converting it to
// int64 cannot overflow.
#define ACD_FLAT_MAX_INT (INT64_C(1) << 53)

// A node waiting to be made: the struct to fill, its parent node (-1 for the
// root) and which of the parent's children it is (-1: the dictionary).
struct AcdFlatPending {
  void* target;
  int64_t parent;
  int64_t which;
};

// Where each node made so far sits in the tree, for the path of an error.
struct AcdFlatNode {
  int64_t parent;
  int64_t which;
};

struct AcdFlatWalk {
  double* words;
  int64_t n_words;
  int64_t at;
  const char* strings;
  int64_t n_strings;
  struct AcdFlatPending* pending;
  int64_t n_pending;
  struct AcdFlatNode* nodes;
  int64_t n_nodes;
  int64_t capacity;
};

// Word k of the descriptor as an integer in [min, max]; -1 (error set) when
// the descriptor ends or the word is not such an integer.
static int AcdFlatInt(struct AcdFlatWalk* w, int64_t k, int64_t min, int64_t max, const char* what,
                      int64_t* out, struct AcdError* error) {
  if (w->at + k >= w->n_words) {
    return AcdErrorSet(error, EINVAL, "descriptor: ends at word %" PRId64 " inside a node (%s)",
                       w->n_words, what);
  }
  double v = w->words[w->at + k];
  // The comparisons are false for NaN.
  if (!(v >= (double)min && v <= (double)max) || v != (double)(int64_t)v) {
    return AcdErrorSet(error, EINVAL, "descriptor: %s: expected an integer from %" PRId64 " to %" PRId64 ", found %g",
                       what, min, max, v);
  }
  *out = (int64_t)v;
  return ACD_OK;
}

// A string of the descriptor: its offset and length words (offset -1: NULL).
static int AcdFlatString(struct AcdFlatWalk* w, int64_t k, const char* what, const char** out,
                         int64_t* size, struct AcdError* error) {
  int64_t offset = 0, length = 0;
  int code = AcdFlatInt(w, k, -1, w->n_strings, what, &offset, error);
  if (code == ACD_OK) code = AcdFlatInt(w, k + 1, 0, w->n_strings, what, &length, error);
  if (code != ACD_OK) return code;
  if (offset < 0) {
    *out = NULL;
    *size = -1;
    return ACD_OK;
  }
  if (length > w->n_strings - offset) {
    return AcdErrorSet(error, EINVAL, "descriptor: %s: %" PRId64 " bytes at %" PRId64 " run past the %" PRId64 " string bytes",
                       what, length, offset, w->n_strings);
  }
  *out = w->strings + offset;
  *size = length;
  return ACD_OK;
}

// Queues a node's children (then its dictionary) so that they are made in
// the descriptor's order: children first to last, then the dictionary.
static void AcdFlatQueue(struct AcdFlatWalk* w, int64_t node, void* children, size_t struct_size,
                         int64_t n_children, void* dictionary) {
  if (dictionary != NULL) w->pending[w->n_pending++] = (struct AcdFlatPending){dictionary, node, -1};
  for (int64_t i = n_children - 1; i >= 0; i--) {
    w->pending[w->n_pending++] = (struct AcdFlatPending){(char*)children + (size_t)i * struct_size, node, i};
  }
}

// Whether n more nodes fit in the walk's stacks (the descriptor's length
// bounds them; a descriptor that claims more children than it has words is refused).
static int AcdFlatRoom(struct AcdFlatWalk* w, int64_t n, struct AcdError* error) {
  if (n > w->capacity - w->n_pending - w->n_nodes) {
    return AcdErrorSet(error, EINVAL, "descriptor: %" PRId64 " more nodes than its %" PRId64 " words can hold", n, w->n_words);
  }
  return ACD_OK;
}

// Prefixes the error with the failing node's path ("array.children[2].dictionary")
// and sets error->path to it (and `suffix`, e.g. ".buffers[1]").
static void AcdFlatPath(struct AcdFlatWalk* w, const char* root, int64_t node, const char* suffix,
                        struct AcdError* error) {
  if (error == NULL) return;
  char path[sizeof(error->path)];
  char part[48];
  size_t capacity = sizeof(path) - 1;
  size_t at = capacity;
  path[capacity] = '\0';
  size_t n = strlen(suffix);
  if (n <= at) {
    at -= n;
    memcpy(path + at, suffix, n);
  }
  for (int64_t k = node; k >= 0 && w->nodes[k].parent >= 0; k = w->nodes[k].parent) {
    if (w->nodes[k].which < 0) {
      snprintf(part, sizeof(part), ".dictionary");
    } else {
      snprintf(part, sizeof(part), ".children[%" PRId64 "]", w->nodes[k].which);
    }
    n = strlen(part);
    if (n > at) break;
    at -= n;
    memcpy(path + at, part, n);
  }
  n = strlen(root);
  if (n <= at) {
    at -= n;
    memcpy(path + at, root, n);
  }
  AcdErrorPrefix(error, "%s", path + at);
  memcpy(error->path, path + at, strlen(path + at) + 1);
}

// Makes the schema tree rooted at `schema` from the words at w->at.
static int AcdFlatSchemas(struct AcdFlatWalk* w, struct ArrowSchema* schema, struct AcdError* error) {
  w->n_pending = 0;
  w->n_nodes = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){schema, -1, 0};
  while (w->n_pending > 0) {
    struct AcdFlatPending p = w->pending[--w->n_pending];
    int64_t node = w->n_nodes++;
    w->nodes[node] = (struct AcdFlatNode){p.parent, p.which};
    struct ArrowSchema* s = (struct ArrowSchema*)p.target;
    const char *format = NULL, *name = NULL, *metadata = NULL;
    int64_t format_size = 0, name_size = 0, metadata_size = 0, flags = 0, n_children = 0, with_dictionary = 0;
    int code = AcdFlatString(w, 0, "format", &format, &format_size, error);
    if (code == ACD_OK) code = AcdFlatString(w, 2, "name", &name, &name_size, error);
    if (code == ACD_OK) code = AcdFlatString(w, 4, "metadata", &metadata, &metadata_size, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 6, 0, INT32_MAX, "flags", &flags, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 7, 0, INT32_MAX, "n_children", &n_children, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 8, 0, 1, "dictionary", &with_dictionary, error);
    if (code == ACD_OK && format == NULL) code = AcdErrorSet(error, EINVAL, "format is NULL");
    if (code == ACD_OK) code = AcdFlatRoom(w, n_children + with_dictionary, error);
    if (code == ACD_OK) {
      code = AcdSchemaInitSized(s, format, format_size, name, name_size, metadata, metadata_size, flags,
                                n_children, (int)with_dictionary, error);
    }
    if (code != ACD_OK) {
      AcdFlatPath(w, "schema", node, "", error);
      return code;
    }
    w->at += ACD_FLAT_SCHEMA_WORDS;
    AcdFlatQueue(w, node, s->n_children > 0 ? s->children[0] : NULL, sizeof(struct ArrowSchema),
                 n_children, s->dictionary);
  }
  return ACD_OK;
}

// Makes the array tree rooted at `array` from the words at w->at; each
// buffer's size word becomes its address (0 for a NULL buffer).
static int AcdFlatArrays(struct AcdFlatWalk* w, struct ArrowArray* array, struct AcdError* error) {
  w->n_pending = 0;
  w->n_nodes = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){array, -1, 0};
  while (w->n_pending > 0) {
    struct AcdFlatPending p = w->pending[--w->n_pending];
    int64_t node = w->n_nodes++;
    w->nodes[node] = (struct AcdFlatNode){p.parent, p.which};
    struct ArrowArray* a = (struct ArrowArray*)p.target;
    // length, null_count and offset are the caller's, unchecked as AcdArrayInit
    // leaves them (a consumer's validation judges them).
    int64_t length = 0, null_count = 0, offset = 0, n_buffers = 0, n_children = 0, with_dictionary = 0;
    int code = AcdFlatInt(w, 0, -ACD_FLAT_MAX_INT, ACD_FLAT_MAX_INT, "length", &length, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 1, -ACD_FLAT_MAX_INT, ACD_FLAT_MAX_INT, "null_count", &null_count, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 2, -ACD_FLAT_MAX_INT, ACD_FLAT_MAX_INT, "offset", &offset, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 3, 0, INT32_MAX, "n_buffers", &n_buffers, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 4, 0, INT32_MAX, "n_children", &n_children, error);
    if (code == ACD_OK) code = AcdFlatInt(w, 5, 0, 1, "dictionary", &with_dictionary, error);
    if (code == ACD_OK) code = AcdFlatRoom(w, n_children + with_dictionary, error);
    if (code == ACD_OK && n_buffers > w->n_words - w->at - ACD_FLAT_ARRAY_WORDS) {
      code = AcdErrorSet(error, EINVAL, "descriptor: %" PRId64 " buffer sizes run past its %" PRId64 " words",
                         n_buffers, w->n_words);
    }
    if (code == ACD_OK) {
      code = AcdArrayInit(a, length, null_count, offset, n_buffers, n_children, (int)with_dictionary, error);
    }
    if (code != ACD_OK) {
      AcdFlatPath(w, "array", node, "", error);
      return code;
    }
    w->at += ACD_FLAT_ARRAY_WORDS;
    for (int64_t i = 0; i < n_buffers; i++) {
      char suffix[40];
      int64_t size = 0;
      code = AcdFlatInt(w, i, -1, ACD_FLAT_MAX_INT, "buffer size", &size, error);
      if (code == ACD_OK && size >= 0 && AcdArrayAllocateBuffer(a, i, size) == NULL) {
        code = AcdErrorSet(error, ENOMEM, "could not allocate %" PRId64 " bytes", size);
      }
      if (code != ACD_OK) {
        snprintf(suffix, sizeof(suffix), ".buffers[%" PRId64 "]", i);
        AcdFlatPath(w, "array", node, suffix, error);
        return code;
      }
      w->words[w->at + i] = size < 0 ? 0.0 : (double)(uintptr_t)a->buffers[i];
    }
    w->at += n_buffers;
    AcdFlatQueue(w, node, a->n_children > 0 ? a->children[0] : NULL, sizeof(struct ArrowArray),
                 n_children, a->dictionary);
  }
  return ACD_OK;
}

int AcdFlatInit(double* words, int64_t n_words, const char* strings, int64_t n_strings,
                struct ArrowSchema* schema, struct ArrowArray* array, struct AcdError* error) {
  if (schema != NULL) schema->release = NULL;
  if (array != NULL) array->release = NULL;
  if (n_words < 0 || n_strings < 0 || (n_words > 0 && words == NULL) || (n_strings > 0 && strings == NULL)) {
    return AcdErrorSet(error, EINVAL, "descriptor: expected %" PRId64 " words and %" PRId64 " string bytes, found NULL",
                       n_words, n_strings);
  }
  // Every node takes at least ACD_FLAT_ARRAY_WORDS words: that bounds both stacks.
  int64_t capacity = n_words / ACD_FLAT_ARRAY_WORDS + 1;
  void* stacks = AcdMalloc(capacity * (int64_t)(sizeof(struct AcdFlatPending) + sizeof(struct AcdFlatNode)));
  if (stacks == NULL) return AcdErrorSet(error, ENOMEM, "out of memory walking a descriptor of %" PRId64 " words", n_words);
  struct AcdFlatWalk w = {words, n_words, 0, strings, n_strings, (struct AcdFlatPending*)stacks, 0,
                          (struct AcdFlatNode*)((struct AcdFlatPending*)stacks + capacity), 0, capacity};
  int code = schema != NULL ? AcdFlatSchemas(&w, schema, error) : ACD_OK;
  if (code == ACD_OK && array != NULL) code = AcdFlatArrays(&w, array, error);
  if (code == ACD_OK && w.at != n_words) {
    code = AcdErrorSet(error, EINVAL, "descriptor: %" PRId64 " words, %" PRId64 " of them read", n_words, w.at);
  }
  AcdFree(stacks);
  if (code != ACD_OK) {
    // Each tree's release frees every node made so far (those not made yet are zeroed).
    if (schema != NULL) AcdSchemaRelease(schema);
    if (array != NULL) AcdArrayRelease(array);
  }
  return code;
}
