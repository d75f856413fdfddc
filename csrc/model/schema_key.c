// The identity of a schema tree as bytes: every node's format, name, flags,
// child count, whether it has a dictionary, and its metadata, in the
// validators' order (the node, its children, its dictionary). Two trees with
// the same key read as the same field, so an importer can cache what it built
// for one (ts/exchange/schema-cache.ts) and skip reading the next: a stream or
// a run of batches sends the same schema again and again.

#include <string.h>

#include "model/model.h"

struct AcdKeyWriter {
  uint8_t* out;
  int64_t capacity;
  int64_t size;  // what the key needs, also past capacity
};

static void AcdKeyPut(struct AcdKeyWriter* w, const void* bytes, int64_t n) {
  if (w->size + n <= w->capacity) memcpy(w->out + w->size, bytes, (size_t)n);
  w->size += n;
}

static void AcdKeyString(struct AcdKeyWriter* w, const char* s) {
  // A NULL name reads as "": the same key. The terminator keeps strings apart.
  int64_t n = s == NULL ? 0 : (int64_t)strlen(s);
  AcdKeyPut(w, s, n);
  AcdKeyPut(w, "", 1);
}

static void AcdKeyNode(struct AcdKeyWriter* w, const struct ArrowSchema* schema) {
  AcdKeyString(w, schema->format);
  AcdKeyString(w, schema->name);
  AcdKeyPut(w, &schema->flags, 8);
  AcdKeyPut(w, &schema->n_children, 8);
  uint8_t has_dictionary = schema->dictionary != NULL;
  AcdKeyPut(w, &has_dictionary, 1);
  int64_t metadata = AcdMetadataSize(schema->metadata, -1, NULL);
  if (metadata < 0) metadata = 0;  // validated: does not happen
  AcdKeyPut(w, &metadata, 8);
  AcdKeyPut(w, schema->metadata, metadata);
  for (int64_t i = 0; i < schema->n_children; i++) AcdKeyNode(w, schema->children[i]);
  if (schema->dictionary != NULL) AcdKeyNode(w, schema->dictionary);
}

int64_t AcdSchemaKey(const struct ArrowSchema* schema, uint8_t* out, int64_t capacity) {
  struct AcdKeyWriter w = {out, capacity < 0 ? 0 : capacity, 0};
  AcdKeyNode(&w, schema);
  // Zeros up to a multiple of 4 bytes: a reader compares and hashes 32-bit words.
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  AcdKeyPut(&w, zeros, (4 - w.size % 4) % 4);
  return w.size;
}
