// Struct trees that TypeScript writes whole into one block of this memory
// (ts/exchange/foreign-schema.ts, foreign-shadow.ts): copies of another module's trees, which C
// on wasm cannot address. Here are the releases they carry.
//
// A schema tree: every node's private_data is the block, which starts with a
// count of the nodes not released yet; each node's release releases its
// children and dictionary (those not moved out), marks itself released and
// frees the block with the last node. So a consumer may move any node out
// and release it after the root, as the spec allows.
//
// A shadow array tree: the structs the validator checks in place of another
// module's (their buffer pointers are foreign-window addresses). It is never
// handed over: whoever made it frees its block; its release only marks it.

#include "model/model.h"

struct AcdSchemaTree {
  uint32_t kind;  // ACD_KIND_SCHEMA_COPY
  int32_t live;   // nodes not released yet
  uint32_t size;  // bytes of the block, this header included
  uint32_t unused;
};

// Whether [ptr, ptr + size) lies in the tree's block: the nodes and their
// pointer arrays all do; a field a consumer changed to point elsewhere is
// not followed.
static int AcdInTree(const struct AcdSchemaTree* tree, const void* ptr, uint64_t size) {
  uint64_t start = (uint64_t)(uintptr_t)tree;
  uint64_t at = (uint64_t)(uintptr_t)ptr;
  return at >= start && at - start <= tree->size && size <= tree->size - (at - start);
}

void AcdSchemaTreeRelease(struct ArrowSchema* schema) {
  struct AcdSchemaTree* tree = (struct AcdSchemaTree*)schema->private_data;
  // A corrupted struct pointing its release here: AcdSchemaRelease reports it.
  if (!AcdPrivateIs(tree, ACD_KIND_SCHEMA_COPY)) return;
  // Marked first: a child pointer a consumer aimed back at this node ends there.
  schema->release = NULL;
  int64_t n = schema->n_children;
  if (n > 0 && n <= INT32_MAX &&
      AcdInTree(tree, schema->children, (uint64_t)n * sizeof(struct ArrowSchema*))) {
    for (int64_t i = 0; i < n; i++) {
      struct ArrowSchema* child = schema->children[i];
      if (AcdInTree(tree, child, sizeof(*child))) AcdSchemaRelease(child);
    }
  }
  if (AcdInTree(tree, schema->dictionary, sizeof(struct ArrowSchema))) {
    AcdSchemaRelease(schema->dictionary);
  }
  if (--tree->live <= 0) {
    tree->kind = 0;
    AcdFree(tree);
  }
}

void AcdShadowArrayRelease(struct ArrowArray* array) { array->release = NULL; }

// Known to abi/callback.c, each in its one role.
ACD_CONSTRUCTOR(AcdTreeBlockRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdSchemaTreeRelease, ACD_ROLE_SCHEMA_RELEASE);
  ACD_CALLBACK_REGISTER(&AcdShadowArrayRelease, ACD_ROLE_ARRAY_RELEASE);
}
