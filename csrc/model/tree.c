// One allocation per exported tree (made by flat.c): every struct of an
// ArrowSchema or ArrowArray tree below its base struct, the pointer arrays,
// each node's private data, the strings (schemas) and every buffer (arrays)
// live in one block, which the last of its nodes to be released frees. The
// spec lets a consumer move children out and release them after their parent,
// so each node holds one reference to the block (Arrow C++ shares its private
// data the same way): the nodes can be released in any order.

#include <string.h>

#include "model/model.h"

// The start of every tree block.
struct AcdTreeBlock {
  uint32_t kind;  // ACD_KIND_SCHEMA_TREE or ACD_KIND_ARRAY_TREE; 0 once freed
  int64_t live;   // nodes not released yet
};

_Static_assert(sizeof(struct AcdTreeBlock) <= ACD_TREE_HEAD, "a tree block's head fits in ACD_TREE_HEAD bytes");

// A node's tag is its kind mixed with its address, so that a copy of a node
// record elsewhere (or bytes that happen to hold the kind) is not taken for one.
static uint32_t AcdTreeTag(enum AcdPrivateKind kind, const void* node) {
  return (uint32_t)kind ^ 0x7E3D1C5Bu ^ (uint32_t)(uintptr_t)node;
}

void* AcdTreeBlockNew(enum AcdPrivateKind kind, int64_t size, int64_t nodes) {
  if (size < ACD_TREE_HEAD || nodes <= 0) return NULL;
  // Array trees hold buffers: 64-byte aligned, as AcdBufferAlloc's are.
  void* block = kind == ACD_KIND_ARRAY_TREE ? AcdBufferAlloc(size) : AcdMalloc(size);
  if (block == NULL) return NULL;
  struct AcdTreeBlock head = {(uint32_t)kind, nodes};
  memcpy(block, &head, sizeof(head));
  return block;
}

void AcdTreeBlockFree(void* block) { AcdFree(block); }

void AcdTreeNodeInit(struct AcdTreeNode* node, void* block, enum AcdPrivateKind kind,
                     int64_t n_children, void* children, void* dictionary) {
  node->tag = AcdTreeTag(kind, node);
  node->n_children = n_children;
  node->block = block;
  node->children = children;
  node->dictionary = dictionary;
}

void AcdTreeNodeRetag(struct AcdTreeNode* node, enum AcdPrivateKind kind) { node->tag = AcdTreeTag(kind, node); }

// The node record private_data points at when it is a live node of a live
// tree block of `kind`, else NULL (a corrupted struct pointing its release
// here, or a node released already): nothing is read outside memory.
static struct AcdTreeNode* AcdTreeNodeOf(void* private_data, enum AcdPrivateKind kind) {
  struct AcdTreeNode* node = (struct AcdTreeNode*)private_data;
  if (!ACD_IS_ALIGNED(node, _Alignof(struct AcdTreeNode)) ||
      !AcdAddressRangeValid(node, (int64_t)sizeof(*node))) {
    return NULL;
  }
  if (node->tag != AcdTreeTag(kind, node)) return NULL;
  struct AcdTreeBlock* block = (struct AcdTreeBlock*)node->block;
  if (!AcdBlockContains(block, node, (int64_t)sizeof(*node)) || block->kind != (uint32_t)kind ||
      block->live <= 0) {
    return NULL;
  }
  return node;
}

// Marks the node released and drops its reference to the block.
static void AcdTreeNodeDrop(struct AcdTreeNode* node) {
  struct AcdTreeBlock* block = (struct AcdTreeBlock*)node->block;
  node->tag = 0;
  if (--block->live == 0) {
    block->kind = 0;
    AcdFree(block);
  }
}

// Does nothing on a struct whose private_data is not a live node of ours;
// AcdSchemaRelease then reports it.
void AcdTreeSchemaRelease(struct ArrowSchema* schema) {
  struct AcdTreeNode* node = AcdTreeNodeOf(schema->private_data, ACD_KIND_SCHEMA_TREE);
  if (node == NULL) return;
  struct ArrowSchema* children = (struct ArrowSchema*)node->children;
  for (int64_t i = 0; i < node->n_children; i++) AcdSchemaRelease(&children[i]);
  AcdSchemaRelease((struct ArrowSchema*)node->dictionary);
  schema->release = NULL;
  AcdTreeNodeDrop(node);
}

void AcdTreeArrayRelease(struct ArrowArray* array) {
  struct AcdTreeNode* node = AcdTreeNodeOf(array->private_data, ACD_KIND_ARRAY_TREE);
  if (node == NULL) return;
  struct ArrowArray* children = (struct ArrowArray*)node->children;
  for (int64_t i = 0; i < node->n_children; i++) AcdArrayRelease(&children[i]);
  AcdArrayRelease((struct ArrowArray*)node->dictionary);
  array->release = NULL;
  AcdTreeNodeDrop(node);
}

// Known to abi/callback.c in their roles only.
ACD_CONSTRUCTOR(AcdTreeRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdTreeSchemaRelease, ACD_ROLE_SCHEMA_RELEASE);
  ACD_CALLBACK_REGISTER(&AcdTreeArrayRelease, ACD_ROLE_ARRAY_RELEASE);
}
