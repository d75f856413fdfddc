// The identity of a schema tree as bytes: every node's format, name, flags,
// child count, whether it has a dictionary, and its metadata, in the
// validators' order (the node, its children, its dictionary). Two trees with
// the same key read as the same field, so an importer can cache what it built
// for one (ts/exchange/schema-cache.ts) and skip reading the next: a stream or
// a run of batches sends the same schema again and again.
//
// The walk that writes a key checks what any reader of a struct must (each
// struct aligned and in readable memory, reached once, live with a callable
// release; strings, metadata and child pointers readable), so it can run
// before validation. Everything else the validator checks of a schema
// (format strings, UTF-8, flags, child counts, map and run-end rules) depends
// on the key's bytes alone: a key equal to that of a schema validated before
// is a valid schema, and its import skips those checks (AcdSchemaValidated).

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate.h"

struct AcdKeyWriter {
  uint8_t* out;
  int64_t capacity;
  int64_t size;  // what the key needs, also past capacity
  struct AcdValidation v;  // the structs reached, and the node budget
};

static void AcdKeyPut(struct AcdKeyWriter* w, const void* bytes, int64_t n) {
  if (w->size + n <= w->capacity) memcpy(w->out + w->size, bytes, (size_t)n);
  w->size += n;
}

// ACD_OK, or EINVAL where a reader could not go on (the validator names it).
static int AcdKeyNode(struct AcdKeyWriter* w, const struct ArrowSchema* schema, int depth) {
  if (schema == NULL || depth >= ACD_VALIDATION_MAX_DEPTH ||
      !ACD_IS_ALIGNED(schema, _Alignof(struct ArrowSchema)) ||
      !AcdValidationReadable(schema, sizeof(*schema)) || AcdValidationVisit(&w->v) != ACD_OK ||
      AcdValidationVisitStruct(&w->v, w->v.root, schema, ACD_TREE_SCHEMA) != ACD_OK ||
      schema->release == NULL || !ACD_CALLBACK_VALID(schema->release, ACD_ROLE_SCHEMA_RELEASE)) {
    return EINVAL;
  }
  int64_t format = AcdStringLength(schema->format);
  int64_t name = schema->name == NULL ? 0 : AcdStringLength(schema->name);
  int64_t metadata = AcdMetadataSize(schema->metadata, -1, NULL);
  int64_t n = schema->n_children;
  if (format < 0 || name < 0 || metadata < 0 || n < 0) return EINVAL;
  if (n > 0 && (schema->children == NULL ||
                !ACD_IS_ALIGNED(schema->children, _Alignof(struct ArrowSchema*)) ||
                n > INT64_MAX / (int64_t)sizeof(void*) ||
                !AcdValidationReadable(schema->children, n * (int64_t)sizeof(void*)))) {
    return EINVAL;
  }
  // Strings with their terminator, which keeps them apart; a NULL name reads as "".
  AcdKeyPut(w, schema->format, format + 1);
  AcdKeyPut(w, schema->name == NULL ? "" : schema->name, name + 1);
  AcdKeyPut(w, &schema->flags, 8);
  AcdKeyPut(w, &schema->n_children, 8);
  uint8_t has_dictionary = schema->dictionary != NULL;
  AcdKeyPut(w, &has_dictionary, 1);
  AcdKeyPut(w, &metadata, 8);
  AcdKeyPut(w, schema->metadata, metadata);
  for (int64_t i = 0; i < n; i++) {
    if (AcdKeyNode(w, schema->children[i], depth + 1) != ACD_OK) return EINVAL;
  }
  return schema->dictionary == NULL ? ACD_OK : AcdKeyNode(w, schema->dictionary, depth + 1);
}

int64_t AcdSchemaKey(const struct ArrowSchema* schema, uint8_t* out, int64_t capacity) {
  struct AcdKeyWriter w;
  w.out = out;
  w.capacity = capacity < 0 ? 0 : capacity;
  w.size = 0;
  AcdValidationInit(&w.v, NULL);
  w.v.root = schema;
  int code = AcdKeyNode(&w, schema, 0);
  AcdValidationEnd(&w.v);
  if (code != ACD_OK) return -1;
  // Zeros up to a multiple of 4 bytes: a reader compares and hashes 32-bit words.
  static const uint8_t zeros[4] = {0, 0, 0, 0};
  AcdKeyPut(&w, zeros, (4 - w.size % 4) % 4);
  return w.size;
}

// ---- the keys of schemas validated before ----------------------------------------
// Up to ACD_KEY_SLOTS keys by hash, their bytes in one arena that starts over
// when full; a key of more than a quarter of the arena is not kept. The arena
// is allocated once, with malloc: not counted in the library's bytes (static
// memory is not either), and not static, which would add its zeros to the
// archive the package ships. Without it, nothing is remembered.

#define ACD_KEY_SLOTS 64
#define ACD_KEY_ARENA (256 * 1024)

static uint8_t* acd_key_arena;
static int64_t acd_key_arena_used;
static uint32_t acd_key_last_id;
static struct {
  uint32_t hash;
  uint32_t id;
  int64_t at;
  int64_t size;  // 0: empty
} acd_key_slots[ACD_KEY_SLOTS];

void AcdSchemaKeysReserve(void) {
  if (acd_key_arena == NULL) acd_key_arena = malloc(ACD_KEY_ARENA);
}

// A word at a time (a key's size is a multiple of 4): a wide batch's key is
// tens of KB, hashed on every import of it; byte by byte (FNV-1a) that was
// about 5% of an import of 1,000 columns (issue 14).
static uint32_t AcdKeyHash(const uint8_t* key, int64_t size) {
  uint32_t h = (uint32_t)size;
  int64_t i = 0;
  for (; i + 4 <= size; i += 4) {
    uint32_t word;
    memcpy(&word, key + i, 4);
    h = (h ^ word) * 0x9e3779b1u;
    h ^= h >> 15;
  }
  for (; i < size; i++) h = (h ^ key[i]) * 16777619u;
  return h;
}

// The slot the last lookup found or the last key was remembered in: a
// producer sends one schema batch after batch, and that key is compared
// first, without hashing it (a wide batch's key is tens of KB).
static int64_t acd_key_last_slot;

uint32_t AcdSchemaValidated(const uint8_t* key, int64_t size) {
  if (acd_key_arena == NULL) return 0;
  const int64_t last = acd_key_last_slot;
  if (acd_key_slots[last].size == size && AcdBytesSame(acd_key_arena + acd_key_slots[last].at, key, size)) {
    return acd_key_slots[last].id;
  }
  uint32_t h = AcdKeyHash(key, size);
  const int64_t slot = h % ACD_KEY_SLOTS;
  int same = acd_key_slots[slot].size == size && acd_key_slots[slot].hash == h &&
             AcdBytesSame(acd_key_arena + acd_key_slots[slot].at, key, size);
  if (!same) return 0;
  acd_key_last_slot = slot;
  return acd_key_slots[slot].id;
}

uint32_t AcdSchemaRememberValid(const uint8_t* key, int64_t size) {
  // 2^32 - 1 keys remembered in one instance: none is kept after that.
  if (size <= 0 || size > ACD_KEY_ARENA / 4 || acd_key_last_id == UINT32_MAX) return 0;
  AcdSchemaKeysReserve();
  if (acd_key_arena == NULL) return 0;
  if (acd_key_arena_used + size > ACD_KEY_ARENA) {
    memset(acd_key_slots, 0, sizeof(acd_key_slots));
    acd_key_arena_used = 0;
  }
  uint32_t h = AcdKeyHash(key, size);
  const int64_t slot = h % ACD_KEY_SLOTS;
  memcpy(acd_key_arena + acd_key_arena_used, key, (size_t)size);
  acd_key_slots[slot].hash = h;
  acd_key_slots[slot].at = acd_key_arena_used;
  acd_key_slots[slot].size = size;
  acd_key_slots[slot].id = ++acd_key_last_id;
  acd_key_arena_used += size;
  acd_key_last_slot = slot;
  return acd_key_last_id;
}
