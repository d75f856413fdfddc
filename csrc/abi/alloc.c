// Counting allocator: every byte the core allocates is counted while it is
// live, so tests and the integration protocol can check that releasing an
// export returns the count to where it started.

#include <stdlib.h>
#include <string.h>

#include "abi/abi.h"

#if defined(__wasm__)
#define ACD_WASM_PAGE 65536
#endif

// Bytes kept before every block: its total size, a magic tied to its address
// (so that a pointer into the middle of a block, a freed block or foreign
// memory is told apart from a live block) and its distance from the raw
// start. 16 keeps AcdMalloc blocks aligned to 16 (max_align_t on both wasm32
// and LP64).
#define ACD_HEADER 16
#define ACD_BUFFER_ALIGN 64

static int64_t acd_bytes_allocated = 0;

struct AcdBlockHeader {
  int64_t size;
  uint32_t magic;
  uint32_t raw_offset;
};

_Static_assert(sizeof(struct AcdBlockHeader) == ACD_HEADER, "the block header is 16 bytes");

static uint32_t AcdBlockMagic(const void* ptr) {
  return 0xAC0DB10Cu ^ (uint32_t)(uintptr_t)ptr ^ (uint32_t)((uint64_t)(uintptr_t)ptr >> 32);
}

// The header of ptr when ptr is a live block (*header filled), else 0.
static int AcdBlockHeaderRead(const void* ptr, struct AcdBlockHeader* header) {
  if (ptr == NULL || (uintptr_t)ptr % 16 != 0 || (uintptr_t)ptr < ACD_HEADER) return 0;
  const unsigned char* at = (const unsigned char*)ptr - ACD_HEADER;
#if defined(__wasm__)
  // Inside the linear memory (device windows do not matter for a header).
  if ((uint64_t)(uintptr_t)ptr > (uint64_t)__builtin_wasm_memory_size(0) * ACD_WASM_PAGE) return 0;
#endif
  memcpy(header, at, sizeof(*header));
  return header->magic == AcdBlockMagic(ptr) && header->size > 0;
}

int AcdBlockLive(const void* ptr) {
  struct AcdBlockHeader header;
  return AcdBlockHeaderRead(ptr, &header);
}

int AcdBlockContains(const void* block, const void* ptr, int64_t size) {
  struct AcdBlockHeader header;
  if (size < 0 || !AcdBlockHeaderRead(block, &header)) return 0;
  // The raw allocation runs from block - raw_offset for header.size bytes.
  uintptr_t end = (uintptr_t)block - header.raw_offset + (uintptr_t)header.size;
  return (uintptr_t)ptr >= (uintptr_t)block && (uintptr_t)ptr <= end && (uint64_t)size <= (uint64_t)(end - (uintptr_t)ptr);
}

int AcdPrivateIs(const void* private_data, enum AcdPrivateKind kind) {
  uint32_t tag;
  if (!AcdBlockLive(private_data)) return 0;
  memcpy(&tag, private_data, sizeof(tag));
  return tag == (uint32_t)kind;
}

static void* AcdRawAlloc(int64_t payload, int64_t align, int zero) {
  if (payload < 0 || payload > INT64_MAX / 2) return NULL;
  int64_t total = payload + ACD_HEADER + align;
  if ((uint64_t)total > (uint64_t)SIZE_MAX) return NULL;
  unsigned char* raw = zero ? calloc(1, (size_t)total) : malloc((size_t)total);
  if (raw == NULL) return NULL;
  uintptr_t start = (uintptr_t)raw + ACD_HEADER;
  uintptr_t aligned = (start + (uintptr_t)align - 1) & ~((uintptr_t)align - 1);
  struct AcdBlockHeader header = {total, AcdBlockMagic((void*)aligned),
                                  (uint32_t)(aligned - (uintptr_t)raw)};
  memcpy((void*)(aligned - sizeof(header)), &header, sizeof(header));
  acd_bytes_allocated += total;
  return (void*)aligned;
}

void* AcdMalloc(int64_t size) { return AcdRawAlloc(size, ACD_HEADER, 0); }

void* AcdCalloc(int64_t count, int64_t size) {
  if (count < 0 || size < 0 || (size != 0 && count > INT64_MAX / size)) return NULL;
  return AcdRawAlloc(count * size, ACD_HEADER, 1);
}

// A pointer that is not a live block is refused (a double free, or a
// corrupted struct's private_data reaching one of our releases), never freed.
void AcdFree(void* ptr) {
  struct AcdBlockHeader header;
  if (!AcdBlockHeaderRead(ptr, &header)) return;
  unsigned char* at = (unsigned char*)ptr - ACD_HEADER;
  uint32_t dead = 0;
  memcpy(at + offsetof(struct AcdBlockHeader, magic), &dead, sizeof(dead));
  acd_bytes_allocated -= header.size;
  free((unsigned char*)ptr - header.raw_offset);
}

void* AcdBufferAlloc(int64_t size) {
  if (size < 0 || size > INT64_MAX - ACD_BUFFER_ALIGN) return NULL;
  // Pad to a multiple of 64 bytes, zero-filled, as Arrow recommends; an empty
  // buffer still gets a real block so that no consumer sees NULL data.
  int64_t padded = (size + ACD_BUFFER_ALIGN - 1) / ACD_BUFFER_ALIGN * ACD_BUFFER_ALIGN;
  if (padded == 0) padded = ACD_BUFFER_ALIGN;
  unsigned char* out = AcdRawAlloc(padded, ACD_BUFFER_ALIGN, 0);
  if (out != NULL) memset(out + size, 0, (size_t)(padded - size));
  return out;
}

void AcdBufferFree(void* ptr) { AcdFree(ptr); }

int64_t AcdBytesAllocated(void) { return acd_bytes_allocated; }
