// Producing a whole ArrowSchema tree and a whole ArrowArray tree in one call,
// from a flat descriptor the caller wrote into memory (ts/model/flat.ts): one
// wasm call per export instead of a few per node, and one allocation per tree
// (tree.c) instead of a few per node. A first pass checks the whole
// descriptor and measures both trees; then each tree's block is allocated and
// a second pass lays its nodes out in it, writing each buffer's address into
// the descriptor in place of its size for the caller to fill. The walks keep
// their own stack (no C recursion, so no depth limit that could overrun the
// wasm stack). Longer than 400 lines: both passes walk one descriptor with
// one private walk state (stacks, the error path), which splitting the file
// would make part of model.h.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

// The largest integer a double holds exactly (JS's Number.MAX_SAFE_INTEGER + 1):
// every count and size of a descriptor is at most this, so converting it to
// int64 cannot overflow.
#define ACD_FLAT_MAX_INT (INT64_C(1) << 53)

// The largest block: what size_t holds, and at most 2^62 (so that sums of
// sizes below it stay within int64).
#define ACD_FLAT_MAX_BLOCK \
  ((uint64_t)SIZE_MAX < (UINT64_C(1) << 62) ? (int64_t)SIZE_MAX : (INT64_C(1) << 62))

// A node waiting to be measured or made: the struct to fill (the second
// pass), its parent node (-1 for the root) and which of the parent's children
// it is (-1: the dictionary).
struct AcdFlatPending {
  void* target;
  int64_t parent;
  int64_t which;
};

// Where each node measured so far sits in the tree, for the path of an error.
struct AcdFlatPlace {
  int64_t parent;
  int64_t which;
};

// One tree as the first pass measured it: where its words start, its nodes,
// the bytes of its node records, pointer arrays and structs (meta), and of
// its strings or buffers (tail).
struct AcdFlatSize {
  int64_t start;
  int64_t nodes;
  int64_t meta;
  int64_t tail;
};

struct AcdFlatWalk {
  double* words;
  int64_t n_words;
  int64_t at;
  const char* strings;
  int64_t n_strings;
  struct AcdFlatPending* pending;
  int64_t n_pending;
  struct AcdFlatPlace* places;
  int64_t n_places;
  int64_t capacity;
  // The end of the string bytes the strings read so far take.
  int64_t strings_end;
};

static int64_t AcdFlatAlign(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// The message of AcdFlatInt's failure (kept out of its inline common case).
__attribute__((noinline)) static int AcdFlatIntError(struct AcdFlatWalk* w, int64_t k, int64_t min, int64_t max,
                                                     const char* what, struct AcdError* error) {
  if (w->at + k >= w->n_words) {
    return AcdErrorSet(error, EINVAL, "descriptor: ends at word %" PRId64 " inside a node (%s)",
                       w->n_words, what);
  }
  return AcdErrorSet(error, EINVAL, "descriptor: %s: expected an integer from %" PRId64 " to %" PRId64 ", found %g",
                     what, min, max, w->words[w->at + k]);
}

// Word k of the descriptor as an integer in [min, max]; -1 (error set) when
// the descriptor ends or the word is not such an integer.
static inline int AcdFlatInt(struct AcdFlatWalk* w, int64_t k, int64_t min, int64_t max, const char* what,
                             int64_t* out, struct AcdError* error) {
  int64_t i = w->at + k;
  if (i < w->n_words) {
    double v = w->words[i];
    // The comparisons are false for NaN; in range, the conversion is exact.
    if (v >= (double)min && v <= (double)max && v == __builtin_trunc(v)) {
      *out = (int64_t)v;
      return ACD_OK;
    }
  }
  return AcdFlatIntError(w, k, min, max, what, error);
}

// A string of the descriptor: its offset and length words (offset -1: NULL).
static inline int AcdFlatString(struct AcdFlatWalk* w, int64_t k, const char* what, const char** out,
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
  if (offset + length > w->strings_end) w->strings_end = offset + length;
  return ACD_OK;
}

// Whether n more nodes fit in the walk's stacks (the descriptor's length
// bounds them; a descriptor that claims more children than it has words is refused).
static int AcdFlatRoom(struct AcdFlatWalk* w, int64_t n, struct AcdError* error) {
  if (n > w->capacity - w->n_pending - w->n_places) {
    return AcdErrorSet(error, EINVAL, "descriptor: %" PRId64 " more nodes than its %" PRId64 " words can hold", n, w->n_words);
  }
  return ACD_OK;
}

// Queues a node's children (then its dictionary) so that they are taken in
// the descriptor's order: children first to last, then the dictionary. The
// children's structs are contiguous from `children` (NULL in the first pass).
static void AcdFlatQueue(struct AcdFlatWalk* w, int64_t node, void* children, size_t struct_size,
                         int64_t n_children, int with_dictionary, void* dictionary) {
  if (with_dictionary) w->pending[w->n_pending++] = (struct AcdFlatPending){dictionary, node, -1};
  for (int64_t i = n_children - 1; i >= 0; i--) {
    void* child = children == NULL ? NULL : (char*)children + (size_t)i * struct_size;
    w->pending[w->n_pending++] = (struct AcdFlatPending){child, node, i};
  }
}

// Takes the next node to measure, recording where it is; returns its index.
static int64_t AcdFlatNext(struct AcdFlatWalk* w) {
  struct AcdFlatPending p = w->pending[--w->n_pending];
  int64_t node = w->n_places++;
  w->places[node] = (struct AcdFlatPlace){p.parent, p.which};
  return node;
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
  for (int64_t k = node; k >= 0 && w->places[k].parent >= 0; k = w->places[k].parent) {
    if (w->places[k].which < 0) {
      snprintf(part, sizeof(part), ".dictionary");
    } else {
      snprintf(part, sizeof(part), ".children[%" PRId64 "]", w->places[k].which);
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

// Bytes of a node's record, pointer arrays and child structs in its block.
static int64_t AcdFlatMeta(int64_t n_buffers, int64_t n_children, int with_dictionary, int64_t struct_size) {
  return AcdFlatAlign((int64_t)sizeof(struct AcdTreeNode), 8) + AcdFlatAlign(n_buffers * (int64_t)sizeof(void*), 8) +
         AcdFlatAlign(n_children * (int64_t)sizeof(void*), 8) + (n_children + (with_dictionary ? 1 : 0)) * struct_size;
}

// Whether a short string (NULL allowed) holds no NUL byte: a loop for the
// names and formats of nearly every node, not a call; 0 for a long one.
static inline int AcdFlatNoNul(const char* s, int64_t n) {
  if (s == NULL) return 1;
  if (n > 32) return 0;
  for (int64_t i = 0; i < n; i++) {
    if (s[i] == '\0') return 0;
  }
  return 1;
}

// Checks and measures the schema tree whose words start at w->at.
static int AcdFlatSchemasMeasure(struct AcdFlatWalk* w, struct AcdFlatSize* size, struct AcdError* error) {
  *size = (struct AcdFlatSize){w->at, 0, 0, 0};
  w->n_pending = 0;
  w->n_places = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){NULL, -1, 0};
  while (w->n_pending > 0) {
    int64_t node = AcdFlatNext(w);
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
    // The common node (short strings without NUL, no metadata) is checked
    // here; any other goes through the check that says what is wrong.
    if (code == ACD_OK && (metadata != NULL || !AcdFlatNoNul(format, format_size) || !AcdFlatNoNul(name, name_size) ||
                           n_children > INT32_MAX / 256)) {
      code = AcdSchemaCheckSized(format, format_size, name, name_size, metadata, metadata_size, n_children, error);
    }
    if (code != ACD_OK) {
      AcdFlatPath(w, "schema", node, "", error);
      return code;
    }
    // Strings are bounded by the string bytes, counts by the words: no sum overflows.
    size->nodes++;
    size->meta += AcdFlatMeta(0, n_children, (int)with_dictionary, (int64_t)sizeof(struct ArrowSchema));
    size->tail += format_size + 1 + (name == NULL ? 0 : name_size + 1) + (metadata == NULL ? 0 : metadata_size);
    w->at += ACD_FLAT_SCHEMA_WORDS;
    AcdFlatQueue(w, node, NULL, 0, n_children, (int)with_dictionary, NULL);
  }
  return ACD_OK;
}

// Checks and measures the array tree whose words start at w->at.
static int AcdFlatArraysMeasure(struct AcdFlatWalk* w, struct AcdFlatSize* size, struct AcdError* error) {
  *size = (struct AcdFlatSize){w->at, 0, 0, 0};
  w->n_pending = 0;
  w->n_places = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){NULL, -1, 0};
  while (w->n_pending > 0) {
    int64_t node = AcdFlatNext(w);
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
    if (code == ACD_OK && (n_buffers > INT32_MAX / 256 || n_children > INT32_MAX / 256)) {
      code = AcdArrayCheckCounts(n_buffers, n_children, error);
    }
    if (code != ACD_OK) {
      AcdFlatPath(w, "array", node, "", error);
      return code;
    }
    size->nodes++;
    size->meta += AcdFlatMeta(n_buffers, n_children, (int)with_dictionary, (int64_t)sizeof(struct ArrowArray));
    w->at += ACD_FLAT_ARRAY_WORDS;
    for (int64_t i = 0; i < n_buffers; i++) {
      int64_t bytes = 0;
      code = AcdFlatInt(w, i, -1, ACD_FLAT_MAX_INT, "buffer size", &bytes, error);
      // Padded to 64 bytes, and an empty buffer gets 64 too (no consumer sees NULL data).
      int64_t padded = bytes < 0 ? 0 : bytes == 0 ? 64 : AcdFlatAlign(bytes, 64);
      if (code == ACD_OK && padded > ACD_FLAT_MAX_BLOCK - size->tail - size->meta - 2 * 64) {
        code = AcdErrorSet(error, ENOMEM, "could not allocate %" PRId64 " bytes", bytes);
      }
      if (code != ACD_OK) {
        char suffix[40];
        snprintf(suffix, sizeof(suffix), ".buffers[%" PRId64 "]", i);
        AcdFlatPath(w, "array", node, suffix, error);
        return code;
      }
      size->tail += padded;
    }
    w->at += n_buffers;
    AcdFlatQueue(w, node, NULL, 0, n_children, (int)with_dictionary, NULL);
  }
  return ACD_OK;
}

// Copies a string of the descriptor (words k, k + 1; checked) to *tail with
// a NUL after it (`terminate`) and returns where it went (NULL for none).
static const char* AcdFlatCopy(struct AcdFlatWalk* w, const double* word, int terminate, char** tail) {
  if (word[0] < 0) return NULL;
  char* out = *tail;
  size_t n = (size_t)word[1];
  const char* from = w->strings + (size_t)word[0];
  // Names and formats are short: a loop, not a call.
  if (n <= 32) {
    for (size_t i = 0; i < n; i++) out[i] = from[i];
  } else {
    memcpy(out, from, n);
  }
  if (terminate) out[n++] = '\0';
  *tail += n;
  return out;
}

// Makes the measured schema tree in `block`, rooted at `root`.
static void AcdFlatSchemasBuild(struct AcdFlatWalk* w, const struct AcdFlatSize* size, struct ArrowSchema* root,
                                unsigned char* block) {
  unsigned char* meta = block + ACD_TREE_HEAD;
  char* tail = (char*)block + ACD_TREE_HEAD + size->meta;
  const double* word = w->words + size->start;
  w->n_pending = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){root, -1, 0};
  while (w->n_pending > 0) {
    struct ArrowSchema* s = (struct ArrowSchema*)w->pending[--w->n_pending].target;
    int64_t n_children = (int64_t)word[7];
    int with_dictionary = word[8] != 0;
    struct AcdTreeNode* node = (struct AcdTreeNode*)meta;
    meta += AcdFlatAlign((int64_t)sizeof(struct AcdTreeNode), 8);
    struct ArrowSchema** children = (struct ArrowSchema**)meta;
    meta += AcdFlatAlign(n_children * (int64_t)sizeof(void*), 8);
    struct ArrowSchema* child_structs = (struct ArrowSchema*)meta;
    meta += n_children * (int64_t)sizeof(struct ArrowSchema);
    struct ArrowSchema* dictionary = with_dictionary ? (struct ArrowSchema*)meta : NULL;
    meta += with_dictionary ? (int64_t)sizeof(struct ArrowSchema) : 0;
    for (int64_t i = 0; i < n_children; i++) children[i] = child_structs + i;
    AcdTreeNodeInit(node, block, ACD_KIND_SCHEMA_TREE, n_children, child_structs, dictionary);
    s->format = AcdFlatCopy(w, word, 1, &tail);
    s->name = AcdFlatCopy(w, word + 2, 1, &tail);
    s->metadata = AcdFlatCopy(w, word + 4, 0, &tail);
    s->flags = (int64_t)word[6];
    s->n_children = n_children;
    s->children = n_children > 0 ? children : NULL;
    s->dictionary = dictionary;
    s->private_data = node;
    s->release = &AcdTreeSchemaRelease;
    word += ACD_FLAT_SCHEMA_WORDS;
    AcdFlatQueue(w, 0, child_structs, sizeof(struct ArrowSchema), n_children, with_dictionary, dictionary);
  }
}

// Makes the measured array tree in `block`, rooted at `root`; each buffer's
// size word becomes its address (0 for a NULL buffer).
static void AcdFlatArraysBuild(struct AcdFlatWalk* w, const struct AcdFlatSize* size, struct ArrowArray* root,
                               unsigned char* block) {
  unsigned char* meta = block + ACD_TREE_HEAD;
  unsigned char* tail = block + AcdFlatAlign(ACD_TREE_HEAD + size->meta, 64);
  double* word = w->words + size->start;
  w->n_pending = 0;
  w->pending[w->n_pending++] = (struct AcdFlatPending){root, -1, 0};
  while (w->n_pending > 0) {
    struct ArrowArray* a = (struct ArrowArray*)w->pending[--w->n_pending].target;
    int64_t n_buffers = (int64_t)word[3];
    int64_t n_children = (int64_t)word[4];
    int with_dictionary = word[5] != 0;
    struct AcdTreeNode* node = (struct AcdTreeNode*)meta;
    meta += AcdFlatAlign((int64_t)sizeof(struct AcdTreeNode), 8);
    const void** buffers = (const void**)meta;
    meta += AcdFlatAlign(n_buffers * (int64_t)sizeof(void*), 8);
    struct ArrowArray** children = (struct ArrowArray**)meta;
    meta += AcdFlatAlign(n_children * (int64_t)sizeof(void*), 8);
    struct ArrowArray* child_structs = (struct ArrowArray*)meta;
    meta += n_children * (int64_t)sizeof(struct ArrowArray);
    struct ArrowArray* dictionary = with_dictionary ? (struct ArrowArray*)meta : NULL;
    meta += with_dictionary ? (int64_t)sizeof(struct ArrowArray) : 0;
    for (int64_t i = 0; i < n_children; i++) children[i] = child_structs + i;
    AcdTreeNodeInit(node, block, ACD_KIND_ARRAY_TREE, n_children, child_structs, dictionary);
    a->length = (int64_t)word[0];
    a->null_count = (int64_t)word[1];
    a->offset = (int64_t)word[2];
    a->n_buffers = n_buffers;
    a->n_children = n_children;
    a->buffers = n_buffers > 0 ? buffers : NULL;
    a->children = n_children > 0 ? children : NULL;
    a->dictionary = dictionary;
    a->private_data = node;
    a->release = &AcdTreeArrayRelease;
    word += ACD_FLAT_ARRAY_WORDS;
    for (int64_t i = 0; i < n_buffers; i++) {
      if (word[i] < 0) {
        buffers[i] = NULL;
        word[i] = 0.0;
        continue;
      }
      int64_t bytes = (int64_t)word[i];
      int64_t padded = bytes == 0 ? 64 : AcdFlatAlign(bytes, 64);
      memset(tail + bytes, 0, (size_t)(padded - bytes));
      buffers[i] = tail;
      word[i] = (double)(uintptr_t)tail;
      tail += padded;
    }
    word += n_buffers;
    AcdFlatQueue(w, 0, child_structs, sizeof(struct ArrowArray), n_children, with_dictionary, dictionary);
  }
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
  void* stacks = AcdMalloc(capacity * (int64_t)(sizeof(struct AcdFlatPending) + sizeof(struct AcdFlatPlace)));
  if (stacks == NULL) return AcdErrorSet(error, ENOMEM, "out of memory walking a descriptor of %" PRId64 " words", n_words);
  struct AcdFlatWalk w = {words, n_words, 0, strings, n_strings, (struct AcdFlatPending*)stacks, 0,
                          (struct AcdFlatPlace*)((struct AcdFlatPending*)stacks + capacity), 0, capacity, 0};
  struct AcdFlatSize schema_size = {0, 0, 0, 0}, array_size = {0, 0, 0, 0};
  // A schema tree made before from the same words and strings is copied, not checked and laid out again.
  const struct AcdFlatTemplate* template = schema != NULL ? AcdFlatTemplateFind(words, n_words, strings, n_strings) : NULL;
  int code = ACD_OK;
  int64_t schema_bytes = 0;
  if (template != NULL) {
    w.at = AcdFlatTemplateWords(template);
    schema_size.nodes = AcdFlatTemplateNodes(template);
    schema_bytes = AcdFlatTemplateBlockSize(template);
  } else if (schema != NULL) {
    code = AcdFlatSchemasMeasure(&w, &schema_size, error);
    schema_bytes = ACD_TREE_HEAD + schema_size.meta + schema_size.tail;
  }
  // The schema's words and string bytes, for a template of it.
  int64_t schema_words = w.at;
  int64_t schema_strings = w.strings_end;
  if (code == ACD_OK && array != NULL) code = AcdFlatArraysMeasure(&w, &array_size, error);
  if (code == ACD_OK && w.at != n_words) {
    code = AcdErrorSet(error, EINVAL, "descriptor: %" PRId64 " words, %" PRId64 " of them read", n_words, w.at);
  }
  // Both blocks before either tree is made: after this nothing can fail.
  unsigned char* schema_block = NULL;
  unsigned char* array_block = NULL;
  if (code == ACD_OK && schema != NULL) {
    schema_block = AcdTreeBlockNew(ACD_KIND_SCHEMA_TREE, schema_bytes, schema_size.nodes);
    if (schema_block == NULL) {
      code = AcdErrorSet(error, ENOMEM, "could not allocate %" PRId64 " bytes for its %" PRId64 " nodes", schema_bytes,
                         schema_size.nodes);
      AcdFlatPath(&w, "schema", -1, "", error);
    }
  }
  if (code == ACD_OK && array != NULL) {
    int64_t bytes = AcdFlatAlign(ACD_TREE_HEAD + array_size.meta, 64) + array_size.tail;
    array_block = AcdTreeBlockNew(ACD_KIND_ARRAY_TREE, bytes, array_size.nodes);
    if (array_block == NULL) {
      code = AcdErrorSet(error, ENOMEM, "could not allocate %" PRId64 " bytes for its %" PRId64 " nodes and their buffers",
                         bytes, array_size.nodes);
      AcdFlatPath(&w, "array", -1, "", error);
      AcdTreeBlockFree(schema_block);
    }
  }
  if (code == ACD_OK && schema != NULL && template != NULL) AcdFlatTemplateApply(template, schema, schema_block);
  if (code == ACD_OK && schema != NULL && template == NULL) {
    AcdFlatSchemasBuild(&w, &schema_size, schema, schema_block);
    AcdFlatTemplateKeep(words, schema_words, strings, schema_strings, schema, schema_block, schema_bytes, schema_size.nodes);
  }
  if (code == ACD_OK && array != NULL) AcdFlatArraysBuild(&w, &array_size, array, array_block);
  AcdFree(stacks);
  return code;
}
