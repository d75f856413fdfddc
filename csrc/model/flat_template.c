// Schema trees made again from a copy (flat.c): exports of one schema (the
// batches of a table or a stream, every export of a wide batch) describe the
// same schema tree again and again, and checking and laying out its nodes
// was about a third of exporting a batch of 1,000 int32 columns (issue 14).
// When a schema tree of ACD_TEMPLATE_MIN_NODES nodes or more is made from a
// descriptor (the second time a schema like it is: below), its block is kept
// with the descriptor words and string bytes it was made from; a later descriptor that starts with the same words and
// strings gets a copy of that block, its pointers moved to where the copy is,
// in place of the check and the layout. The words and strings decide every
// byte of the tree, so the copy is the tree the descriptor describes.
//
// The copies are kept with malloc (not counted in the library's bytes, as the
// schema keys' arena is not: csrc/validate/schema_key.c), at most
// ACD_TEMPLATE_SLOTS of them of at most ACD_TEMPLATE_MAX_BYTES each. A tree is
// kept the second time a schema like it is made (by a cheap signature of the
// last ACD_TEMPLATE_SEEN made), so that an export of a schema seen once does
// not pay for keeping it.

#include <stdlib.h>
#include <string.h>

#include "model/model.h"

#define ACD_TEMPLATE_SLOTS 4
#define ACD_TEMPLATE_MAX_BYTES (1024 * 1024)
#define ACD_TEMPLATE_MIN_NODES 8

struct AcdFlatTemplate {
  // The schema part of the descriptor it was made from, and the string bytes
  // [0, n_strings) that part refers to.
  const double* words;
  int64_t n_words;
  const char* strings;
  int64_t n_strings;
  // The block as made (its head too), where it was then, and its node count.
  const unsigned char* block;
  int64_t block_size;
  uintptr_t base;
  int64_t nodes;
  // The base struct as made.
  struct ArrowSchema root;
  // Offsets in the block of every pointer into the block, and of every node record.
  const uint32_t* moves;
  int64_t n_moves;
  const uint32_t* records;
  int64_t n_records;
};

static struct AcdFlatTemplate* acd_templates[ACD_TEMPLATE_SLOTS];
static int acd_template_next;

// The signatures of the schemas made last (0: none yet).
#define ACD_TEMPLATE_SEEN 8
static uint64_t acd_template_seen[ACD_TEMPLATE_SEEN];
static int acd_template_seen_next;

// A schema part's sizes, first and last words and last string bytes: two
// schemas alike in all of these only get a tree kept one export early.
static uint64_t AcdTemplateSignature(const double* words, int64_t n_words, const char* strings, int64_t n_strings) {
  uint64_t h = ((uint64_t)n_words * 0x9E3779B97F4A7C15ull) ^ (uint64_t)n_strings;
  int64_t k = n_words < 32 ? n_words : 32;
  for (int64_t i = 0; i < k; i++) {
    uint64_t a, b;
    memcpy(&a, &words[i], sizeof(a));
    memcpy(&b, &words[n_words - 1 - i], sizeof(b));
    h = ((h ^ a) * 0x100000001B3ull ^ b) * 0x100000001B3ull;
  }
  for (int64_t i = n_strings < 256 ? 0 : n_strings - 256; i < n_strings; i++) {
    h = (h ^ (uint8_t)strings[i]) * 0x100000001B3ull;
  }
  return h | 1;
}

// Whether a schema like this one was made before; it is remembered either way.
static int AcdTemplateSeen(uint64_t signature) {
  for (int i = 0; i < ACD_TEMPLATE_SEEN; i++) {
    if (acd_template_seen[i] == signature) return 1;
  }
  acd_template_seen[acd_template_seen_next] = signature;
  acd_template_seen_next = (acd_template_seen_next + 1) % ACD_TEMPLATE_SEEN;
  return 0;
}

const struct AcdFlatTemplate* AcdFlatTemplateFind(const double* words, int64_t n_words, const char* strings,
                                                  int64_t n_strings) {
  for (int i = 0; i < ACD_TEMPLATE_SLOTS; i++) {
    const struct AcdFlatTemplate* t = acd_templates[i];
    if (t == NULL || t->n_words > n_words || t->n_strings > n_strings) continue;
    if (AcdBytesSame(t->words, words, t->n_words * (int64_t)sizeof(double)) &&
        AcdBytesSame(t->strings, strings, t->n_strings)) {
      return t;
    }
  }
  return NULL;
}

int64_t AcdFlatTemplateNodes(const struct AcdFlatTemplate* t) { return t->nodes; }
int64_t AcdFlatTemplateWords(const struct AcdFlatTemplate* t) { return t->n_words; }
int64_t AcdFlatTemplateBlockSize(const struct AcdFlatTemplate* t) { return t->block_size; }

// Whether ptr lies in [block, block + size).
static int AcdInBlock(const void* block, int64_t size, const void* ptr) {
  return (uintptr_t)ptr >= (uintptr_t)block && (uintptr_t)ptr - (uintptr_t)block < (uint64_t)size;
}

// The pointer fields of a schema struct that may point into the block.
#define ACD_SCHEMA_POINTERS 6
static void** AcdSchemaPointer(struct ArrowSchema* s, int i) {
  switch (i) {
    case 0: return (void**)&s->format;
    case 1: return (void**)&s->name;
    case 2: return (void**)&s->metadata;
    case 3: return (void**)&s->children;
    case 4: return (void**)&s->dictionary;
    default: return &s->private_data;
  }
}

// Lists, for the tree just made at `root` in `block`, the offsets of its
// pointers into the block and of its node records; -1 when they do not fit
// in the room given (moves: room_moves entries; records: nodes entries).
static int64_t AcdTemplateMap(struct ArrowSchema* root, const unsigned char* block, int64_t size, int64_t nodes,
                              uint32_t* moves, int64_t room_moves, uint32_t* records) {
  int64_t n_moves = 0, n_records = 0;
  // The structs still to map: at most every node is pending at once.
  struct ArrowSchema** stack = malloc((size_t)nodes * sizeof(*stack));
  if (stack == NULL) return -1;
  int64_t top = 0;
  stack[top++] = root;
  int ok = 1;
  while (top > 0 && ok) {
    struct ArrowSchema* s = stack[--top];
    int in_block = AcdInBlock(block, size, s);
    for (int i = 0; i < ACD_SCHEMA_POINTERS && in_block; i++) {
      void** field = AcdSchemaPointer(s, i);
      if (*field == NULL) continue;
      // Every pointer of the tree points into its block; one that does not is not moved: no copy.
      if (n_moves >= room_moves || !AcdInBlock(block, size, *field)) ok = 0;
      else moves[n_moves++] = (uint32_t)((const unsigned char*)field - block);
    }
    struct AcdTreeNode* node = (struct AcdTreeNode*)s->private_data;
    if (!ok || n_records >= nodes || !AcdInBlock(block, size, node)) {
      ok = 0;
      break;
    }
    records[n_records++] = (uint32_t)((const unsigned char*)node - block);
    void** node_pointers[3] = {&node->block, &node->children, &node->dictionary};
    for (int i = 0; i < 3 && ok; i++) {
      if (*node_pointers[i] == NULL) continue;
      if (n_moves >= room_moves || !AcdInBlock(block, size, *node_pointers[i])) ok = 0;
      else moves[n_moves++] = (uint32_t)((const unsigned char*)node_pointers[i] - block);
    }
    for (int64_t i = 0; i < s->n_children && ok; i++) {
      if (n_moves >= room_moves || top >= nodes || !AcdInBlock(block, size, s->children[i])) {
        ok = 0;
        break;
      }
      moves[n_moves++] = (uint32_t)((const unsigned char*)&s->children[i] - block);
      stack[top++] = s->children[i];
    }
    if (ok && s->dictionary != NULL) {
      if (top >= nodes || !AcdInBlock(block, size, s->dictionary)) ok = 0;
      else stack[top++] = s->dictionary;
    }
  }
  free(stack);
  return ok && n_records == nodes ? n_moves : -1;
}

void AcdFlatTemplateKeep(const double* words, int64_t n_words, const char* strings, int64_t n_strings,
                         const struct ArrowSchema* root, const unsigned char* block, int64_t block_size,
                         int64_t nodes) {
  if (nodes < ACD_TEMPLATE_MIN_NODES || !AcdTemplateSeen(AcdTemplateSignature(words, n_words, strings, n_strings))) return;
  // At most: every node's six struct pointers and three record pointers, and
  // one pointer array entry per node but the root.
  int64_t room_moves = nodes * 10;
  int64_t bytes = (int64_t)sizeof(struct AcdFlatTemplate) + n_words * (int64_t)sizeof(double) + block_size +
                  (room_moves + nodes) * (int64_t)sizeof(uint32_t) + n_strings + 16;
  if (n_words <= 0 || block_size <= 0 || bytes > ACD_TEMPLATE_MAX_BYTES) return;
  unsigned char* at = malloc((size_t)bytes);
  if (at == NULL) return;
  struct AcdFlatTemplate* t = (struct AcdFlatTemplate*)at;
  unsigned char* p = at + sizeof(*t);
  // Doubles and uint32s first (aligned), then the bytes.
  p = (unsigned char*)(((uintptr_t)p + 7) & ~(uintptr_t)7);
  double* kept_words = (double*)p;
  p += n_words * (int64_t)sizeof(double);
  uint32_t* moves = (uint32_t*)p;
  p += room_moves * (int64_t)sizeof(uint32_t);
  uint32_t* records = (uint32_t*)p;
  p += nodes * (int64_t)sizeof(uint32_t);
  unsigned char* kept_block = p;
  p += block_size;
  char* kept_strings = (char*)p;
  // The map of the tree as made (its pointers still at `block`).
  struct ArrowSchema root_copy = *root;
  int64_t n_moves = AcdTemplateMap(&root_copy, block, block_size, nodes, moves, room_moves, records);
  if (n_moves < 0) {
    free(at);
    return;
  }
  memcpy(kept_words, words, (size_t)n_words * sizeof(double));
  memcpy(kept_block, block, (size_t)block_size);
  if (n_strings > 0) memcpy(kept_strings, strings, (size_t)n_strings);
  *t = (struct AcdFlatTemplate){kept_words, n_words, kept_strings, n_strings, kept_block, block_size,
                                (uintptr_t)block, nodes, *root, moves, n_moves, records, nodes};
  free(acd_templates[acd_template_next]);
  acd_templates[acd_template_next] = t;
  acd_template_next = (acd_template_next + 1) % ACD_TEMPLATE_SLOTS;
}

void AcdFlatTemplateApply(const struct AcdFlatTemplate* t, struct ArrowSchema* root, unsigned char* block) {
  memcpy(block, t->block, (size_t)t->block_size);
  uintptr_t delta = (uintptr_t)block - t->base;
  for (int64_t i = 0; i < t->n_moves; i++) {
    uintptr_t v;
    memcpy(&v, block + t->moves[i], sizeof(v));
    v += delta;
    memcpy(block + t->moves[i], &v, sizeof(v));
  }
  for (int64_t i = 0; i < t->n_records; i++) {
    AcdTreeNodeRetag((struct AcdTreeNode*)(block + t->records[i]), ACD_KIND_SCHEMA_TREE);
  }
  *root = t->root;
  for (int i = 0; i < ACD_SCHEMA_POINTERS; i++) {
    void** field = AcdSchemaPointer(root, i);
    if (*field != NULL) *field = (void*)((uintptr_t)*field + delta);
  }
}
