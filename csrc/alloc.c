// Counting allocator: every byte the core allocates is counted while it is
// live, so tests and the integration protocol can check that releasing an
// export returns the count to where it started.

#include <stdlib.h>
#include <string.h>

#include "acd.h"

#if defined(__wasm__)
#define ACD_WASM_PAGE 65536
#endif

// Bytes kept before every block: its raw start and its total size. 16 keeps
// AcdMalloc blocks aligned to 16 (max_align_t on both wasm32 and LP64).
#define ACD_HEADER 16
#define ACD_BUFFER_ALIGN 64

static int64_t acd_bytes_allocated = 0;

struct AcdBlockHeader {
  void* raw;
  int64_t size;
};

static void* AcdRawAlloc(int64_t payload, int64_t align, int zero) {
  if (payload < 0 || payload > INT64_MAX / 2) return NULL;
  int64_t total = payload + ACD_HEADER + align;
  if ((uint64_t)total > (uint64_t)SIZE_MAX) return NULL;
  unsigned char* raw = zero ? calloc(1, (size_t)total) : malloc((size_t)total);
  if (raw == NULL) return NULL;
  uintptr_t start = (uintptr_t)raw + ACD_HEADER;
  uintptr_t aligned = (start + (uintptr_t)align - 1) & ~((uintptr_t)align - 1);
  struct AcdBlockHeader header = {raw, total};
  memcpy((void*)(aligned - sizeof(header)), &header, sizeof(header));
  acd_bytes_allocated += total;
  return (void*)aligned;
}

void* AcdMalloc(int64_t size) { return AcdRawAlloc(size, ACD_HEADER, 0); }

void* AcdCalloc(int64_t count, int64_t size) {
  if (count < 0 || size < 0 || (size != 0 && count > INT64_MAX / size)) return NULL;
  return AcdRawAlloc(count * size, ACD_HEADER, 1);
}

void AcdFree(void* ptr) {
  if (ptr == NULL) return;
  struct AcdBlockHeader header;
  memcpy(&header, (unsigned char*)ptr - sizeof(header), sizeof(header));
  acd_bytes_allocated -= header.size;
  free(header.raw);
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

int AcdAddressRangeValid(const void* ptr, int64_t size) {
  if (ptr == NULL || size < 0) return 0;
  // Simulated device memory is never host memory, and host-accessible device
  // memory is not readable while a copy into it is pending (device_memory.c).
  if (!AcdDeviceRangeReadable(ptr, size)) return 0;
#if defined(__wasm__)
  uint64_t end = (uint64_t)(uintptr_t)ptr + (uint64_t)size;
  return end <= (uint64_t)__builtin_wasm_memory_size(0) * ACD_WASM_PAGE;
#else
  return 1;
#endif
}
