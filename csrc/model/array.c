// Producing ArrowArray trees: one allocation per node holds its private data,
// the buffer pointer array, the list of buffers it owns, the child pointer
// array, the child structs and the dictionary struct. Children and the
// dictionary are released by their own callbacks, so a consumer may move any
// of them out before releasing the parent.

#include <errno.h>
#include <string.h>

#include "model/model.h"

struct AcdArrayPrivate {
  struct AcdArrayBlock block;  // kind ACD_KIND_ARRAY
  int64_t n_buffers;
  // Buffers allocated by AcdArrayAllocateBuffer, freed on release.
  void** owned;
};

void AcdArrayBlockReleaseChildren(struct AcdArrayBlock* block) {
  for (int64_t i = 0; i < block->n_children; i++) AcdArrayRelease(&block->children[i]);
  AcdArrayRelease(block->dictionary);
}

// Does nothing on a struct whose private_data is not one of our array blocks
// (a corrupted struct pointing its release here); AcdArrayRelease reports it.
void AcdArrayReleaseOwned(struct ArrowArray* array) {
  struct AcdArrayPrivate* private_data = (struct AcdArrayPrivate*)array->private_data;
  if (!AcdPrivateIs(private_data, ACD_KIND_ARRAY)) return;
  AcdArrayBlockReleaseChildren(&private_data->block);
  for (int64_t i = 0; i < private_data->n_buffers; i++) {
    AcdBufferFree(private_data->owned[i]);
  }
  private_data->block.kind = 0;
  AcdFree(private_data);
  array->release = NULL;
}

// Known to abi/callback.c as an array's release only.
ACD_CONSTRUCTOR(AcdArrayRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdArrayReleaseOwned, ACD_ROLE_ARRAY_RELEASE);
}

static int64_t AcdAlignUp(int64_t n) { return (n + 15) / 16 * 16; }

int AcdArrayCheckCounts(int64_t n_buffers, int64_t n_children, struct AcdError* error) {
  const int64_t max_count = INT32_MAX / 256;
  if (n_buffers < 0 || n_buffers > max_count) {
    return AcdErrorSet(error, EINVAL, "n_buffers: expected 0 to %lld, found %lld",
                       (long long)max_count, (long long)n_buffers);
  }
  if (n_children < 0 || n_children > max_count) {
    return AcdErrorSet(error, EINVAL, "n_children: expected 0 to %lld, found %lld",
                       (long long)max_count, (long long)n_children);
  }
  return ACD_OK;
}

int AcdArrayInitBlock(struct ArrowArray* array, int64_t length, int64_t null_count,
                      int64_t offset, int64_t n_buffers, int64_t n_children,
                      int with_dictionary, int64_t private_size, enum AcdPrivateKind kind,
                      void (*release)(struct ArrowArray*), void** private_data, void*** owned,
                      struct AcdError* error) {
  array->release = NULL;
  int code = AcdArrayCheckCounts(n_buffers, n_children, error);
  if (code != ACD_OK) return code;

  // One block: the private data, the buffer pointers, the owned buffers, the
  // child pointers, the child structs and the dictionary struct.
  int64_t at = AcdAlignUp(private_size);
  int64_t buffers_at = at;
  at += AcdAlignUp(n_buffers * (int64_t)sizeof(void*));
  int64_t owned_at = at;
  at += AcdAlignUp(n_buffers * (int64_t)sizeof(void*));
  int64_t children_at = at;
  at += AcdAlignUp(n_children * (int64_t)sizeof(struct ArrowArray*));
  int64_t child_structs_at = at;
  at += n_children * (int64_t)sizeof(struct ArrowArray);
  int64_t dictionary_at = at;
  at += with_dictionary ? (int64_t)sizeof(struct ArrowArray) : 0;

  unsigned char* block = AcdCalloc(1, at);
  if (block == NULL) return AcdErrorSet(error, ENOMEM, "out of memory allocating an array of %lld bytes", (long long)at);
  struct AcdArrayBlock* head = (struct AcdArrayBlock*)block;
  head->kind = kind;
  head->n_children = n_children;
  head->children = (struct ArrowArray*)(block + child_structs_at);
  head->dictionary = with_dictionary ? (struct ArrowArray*)(block + dictionary_at) : NULL;
  struct ArrowArray** children = (struct ArrowArray**)(block + children_at);
  for (int64_t i = 0; i < n_children; i++) {
    children[i] = (struct ArrowArray*)(block + child_structs_at) + i;
  }

  array->length = length;
  array->null_count = null_count;
  array->offset = offset;
  array->n_buffers = n_buffers;
  array->n_children = n_children;
  array->buffers = n_buffers > 0 ? (const void**)(block + buffers_at) : NULL;
  array->children = n_children > 0 ? children : NULL;
  array->dictionary = with_dictionary ? (struct ArrowArray*)(block + dictionary_at) : NULL;
  array->private_data = block;
  array->release = release;
  *private_data = block;
  *owned = (void**)(block + owned_at);
  return ACD_OK;
}

int AcdArrayInit(struct ArrowArray* array, int64_t length, int64_t null_count,
                 int64_t offset, int64_t n_buffers, int64_t n_children,
                 int with_dictionary, struct AcdError* error) {
  void* block;
  void** owned;
  int code = AcdArrayInitBlock(array, length, null_count, offset, n_buffers, n_children,
                               with_dictionary, (int64_t)sizeof(struct AcdArrayPrivate),
                               ACD_KIND_ARRAY, &AcdArrayReleaseOwned, &block, &owned, error);
  if (code != ACD_OK) return code;
  struct AcdArrayPrivate* private_data = (struct AcdArrayPrivate*)block;
  private_data->n_buffers = n_buffers;
  private_data->owned = owned;
  return ACD_OK;
}

void* AcdArrayAllocateBuffer(struct ArrowArray* array, int64_t i, int64_t size) {
  if (array->release != &AcdArrayReleaseOwned) return NULL;
  struct AcdArrayPrivate* private_data = (struct AcdArrayPrivate*)array->private_data;
  if (!AcdPrivateIs(private_data, ACD_KIND_ARRAY)) return NULL;
  if (i < 0 || i >= private_data->n_buffers || private_data->owned[i] != NULL) return NULL;
  void* buffer = AcdBufferAlloc(size);
  if (buffer == NULL) return NULL;
  private_data->owned[i] = buffer;
  array->buffers[i] = buffer;
  return buffer;
}
