// Device memory: every allocation of every simulated device, in one registry
// sorted by address. Memory of the device kinds gets addresses in the device
// window (ACD_DEVICE_ADDRESS_BASE) and private host bytes behind them, so the
// only way to its bytes is a copy (copy.c) through AcdDeviceAccess here;
// host-accessible memory is an ordinary host buffer, registered for
// accounting and pending checks. It also tells abi/address.c what a host read
// of these addresses would meet (AcdAddressSetOwner).

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"

// The registry is plain malloc: it outlives every export (see device.c).
static struct AcdDeviceBlock** acd_blocks = NULL;
static int64_t acd_block_count = 0;
static int64_t acd_block_capacity = 0;
// Next-fit cursor in the window (an offset from its base): freed addresses
// are reused as late as possible, so a stale pointer rarely finds new data.
// The first page stays unused, so the base itself is never an allocation.
static uint64_t acd_window_cursor = 4096;

static uint64_t AcdAddr(const void* ptr) { return (uint64_t)(uintptr_t)ptr; }

static int AcdInWindow(uint64_t address) {
  return address >= (uint64_t)ACD_DEVICE_ADDRESS_BASE &&
         address - (uint64_t)ACD_DEVICE_ADDRESS_BASE < (uint64_t)ACD_DEVICE_ADDRESS_SIZE;
}

static int64_t AcdRoundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// Index of the first block whose address is > address.
static int64_t AcdBlockUpperBound(uint64_t address) {
  int64_t lo = 0;
  int64_t hi = acd_block_count;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo) / 2;
    if ((uint64_t)acd_blocks[mid]->address <= address) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

struct AcdDeviceBlock* AcdDeviceBlockFind(const void* ptr) {
  uint64_t address = AcdAddr(ptr);
  int64_t i = AcdBlockUpperBound(address) - 1;
  if (i < 0) return NULL;
  struct AcdDeviceBlock* block = acd_blocks[i];
  // A zero-byte allocation still owns its first address.
  int64_t extent = block->size > 0 ? block->size : 1;
  return address - (uint64_t)block->address < (uint64_t)extent ? block : NULL;
}

static int AcdBlockInsert(struct AcdDeviceBlock* block) {
  if (acd_block_count == acd_block_capacity) {
    int64_t capacity = acd_block_capacity == 0 ? 256 : acd_block_capacity * 2;
    struct AcdDeviceBlock** grown =
        realloc(acd_blocks, (size_t)capacity * sizeof(struct AcdDeviceBlock*));
    if (grown == NULL) return ENOMEM;
    acd_blocks = grown;
    acd_block_capacity = capacity;
  }
  int64_t at = AcdBlockUpperBound((uint64_t)block->address);
  memmove(acd_blocks + at + 1, acd_blocks + at,
          (size_t)(acd_block_count - at) * sizeof(struct AcdDeviceBlock*));
  acd_blocks[at] = block;
  acd_block_count++;
  return ACD_OK;
}

static void AcdBlockRemove(const struct AcdDeviceBlock* block) {
  int64_t at = AcdBlockUpperBound((uint64_t)block->address) - 1;
  if (at < 0 || acd_blocks[at] != block) return;
  memmove(acd_blocks + at, acd_blocks + at + 1,
          (size_t)(acd_block_count - at - 1) * sizeof(struct AcdDeviceBlock*));
  acd_block_count--;
}

// The end of a device block in the window (an offset), its guard included.
static uint64_t AcdWindowEnd(const struct AcdDeviceBlock* block) {
  return block->address - (uint64_t)ACD_DEVICE_ADDRESS_BASE + (uint64_t)block->reserved +
         ACD_DEVICE_ALIGN;
}

// Finds room for `reserved` bytes in the window (next fit, wrapping around
// once), keeping ACD_DEVICE_ALIGN free bytes after every allocation.
static int AcdWindowPlace(int64_t reserved, uint64_t* out) {
  uint64_t base = (uint64_t)ACD_DEVICE_ADDRESS_BASE;
  uint64_t limit = (uint64_t)ACD_DEVICE_ADDRESS_SIZE;
  uint64_t need = (uint64_t)reserved + ACD_DEVICE_ALIGN;
  uint64_t start = acd_window_cursor;
  for (int pass = 0; pass < 2; pass++) {
    int64_t j = AcdBlockUpperBound(base + start);
    if (j > 0 && AcdInWindow(acd_blocks[j - 1]->address)) {
      uint64_t end = AcdWindowEnd(acd_blocks[j - 1]);
      if (end > start) start = end;
    }
    for (; j < acd_block_count; j++) {
      uint64_t at = acd_blocks[j]->address - base;
      if (at >= start && at - start >= need) break;
      uint64_t end = AcdWindowEnd(acd_blocks[j]);
      if (end > start) start = end;
    }
    if (start <= limit && limit - start >= need &&
        (j == acd_block_count || acd_blocks[j]->address - base - start >= need)) {
      *out = base + start;
      acd_window_cursor = start + need;
      return ACD_OK;
    }
    start = 4096;
  }
  return ENOMEM;
}

static int AcdDescribeBlock(const void* ptr, int64_t size, char* out, size_t out_size);

// Tells abi/address.c about device memory, before the first allocation
// (until then no address is in an allocation and nothing is pending).
static void AcdRegisterOwner(void) {
  static int registered = 0;
  if (registered) return;
  static const struct AcdAddressOwner owner = {&AcdDeviceRangeReadable, &AcdDescribeBlock};
  AcdAddressSetOwner(&owner);
  registered = 1;
}

int AcdDeviceAllocate(struct AcdDevice* device, int64_t size, void** out,
                      struct AcdError* error) {
  *out = NULL;
  AcdRegisterOwner();
  if (size < 0 || size > (int64_t)(ACD_DEVICE_ADDRESS_SIZE / 4)) {
    return AcdErrorSet(error, size < 0 ? EINVAL : ENOMEM,
                       "%s: cannot allocate %" PRId64 " bytes (expected 0 to %" PRId64 ")",
                       device->name, size, (int64_t)(ACD_DEVICE_ADDRESS_SIZE / 4));
  }
  struct AcdDeviceBlock* block = AcdMalloc(sizeof(struct AcdDeviceBlock));
  int64_t padded = size == 0 ? 64 : AcdRoundUp(size, 64);
  unsigned char* bytes = device->host_accessible ? AcdBufferAlloc(size) : AcdMalloc(padded);
  if (block == NULL || bytes == NULL) {
    AcdFree(block);
    if (device->host_accessible) AcdBufferFree(bytes); else AcdFree(bytes);
    return AcdErrorSet(error, ENOMEM, "%s: out of memory allocating %" PRId64 " bytes",
                       device->name, size);
  }
  // Fresh memory is uninitialized, as cudaMalloc's is; its padding is zeroed.
  memset(bytes, ACD_DEVICE_POISON, (size_t)size);
  memset(bytes + size, 0, (size_t)(padded - size));

  block->size = size;
  block->device = device;
  block->bytes = bytes;
  block->pending_ops = 0;
  int code;
  if (device->host_accessible) {
    block->address = (uintptr_t)bytes;
    block->reserved = padded;
    code = ACD_OK;
  } else {
    block->reserved = AcdRoundUp(size == 0 ? 1 : size, ACD_DEVICE_ALIGN);
    uint64_t address = 0;
    code = AcdWindowPlace(block->reserved, &address);
    block->address = (uintptr_t)address;
  }
  if (code == ACD_OK) code = AcdBlockInsert(block);
  if (code != ACD_OK) {
    if (device->host_accessible) AcdBufferFree(bytes); else AcdFree(bytes);
    AcdFree(block);
    return AcdErrorSet(error, ENOMEM, "%s: out of %s allocating %" PRId64 " bytes", device->name,
                       device->host_accessible ? "memory" : "device address space", size);
  }
  device->allocations++;
  device->bytes_allocated += block->reserved;
  *out = (void*)block->address;
  return ACD_OK;
}

int AcdDeviceFree(struct AcdDevice* device, void* ptr, struct AcdError* error) {
  if (ptr == NULL) return ACD_OK;
  struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  if (block == NULL || block->address != (uintptr_t)ptr || block->device != device) {
    return AcdErrorSet(error, EINVAL, "%s: %p is not the start of a live allocation of it",
                       device->name, ptr);
  }
  // Pending work writing the block runs first, as cudaFree synchronizes.
  if (block->pending_ops > 0) AcdDeviceSynchronize(device);
  AcdBlockRemove(block);
  device->allocations--;
  device->bytes_allocated -= block->reserved;
  if (device->host_accessible) AcdBufferFree(block->bytes); else AcdFree(block->bytes);
  AcdFree(block);
  return ACD_OK;
}

int AcdDeviceOwnerOf(const void* ptr, ArrowDeviceType* type, int64_t* id) {
  const struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  if (block == NULL) return ENOENT;
  if (type != NULL) *type = block->device->device_type;
  if (id != NULL) *id = block->device->device_id;
  return ACD_OK;
}

int AcdDeviceMemoryRange(const void* ptr, const void** base, int64_t* size) {
  const struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  if (block == NULL) return ENOENT;
  if (base != NULL) *base = (const void*)block->address;
  if (size != NULL) *size = block->size;
  return ACD_OK;
}

static int64_t AcdPendingIn(const struct AcdDeviceBlock* block, const void* ptr, int64_t size) {
  if (block->pending_ops == 0) return 0;
  int64_t offset = (int64_t)(AcdAddr(ptr) - (uint64_t)block->address);
  return AcdDeviceStreamPendingBytes(block, offset, size);
}

int AcdDeviceRangeReadable(const void* ptr, int64_t size) {
  if (size < 0 || AcdAddressInDeviceWindow((uintptr_t)ptr, size)) return 0;
  if (AcdDevicePendingHostOps() == 0) return 1;
  const struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  return block == NULL || AcdPendingIn(block, ptr, size) == 0;
}

// What ptr is when it lies in an allocation: 1 and a message in out (""
// when ordinary and readable host memory); 0 when in none (AcdAddressDescribe
// then says what the device window is).
static int AcdDescribeBlock(const void* ptr, int64_t size, char* out, size_t out_size) {
  out[0] = '\0';
  const struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  if (block == NULL) return 0;
  if (!block->device->host_accessible) {
    snprintf(out, out_size,
             ", which is memory of device %s, not host memory: copy it to the host first "
             "(import policy 'copy') or keep it on the device",
             block->device->name);
  } else {
    int64_t pending = AcdPendingIn(block, ptr, size);
    if (pending > 0) {
      snprintf(out, out_size,
               ": reading %s memory before waiting on its sync event: %" PRId64
               " bytes are not there yet",
               block->device->name, pending);
    }
  }
  return 1;
}

void AcdDeviceDescribeAddress(const void* ptr, int64_t size, char* out, size_t out_size) {
  AcdAddressDescribe(ptr, size, out, out_size);
}

static int AcdPendingError(const struct AcdDeviceBlock* block, const void* ptr, int64_t pending,
                           struct AcdError* error) {
  return AcdErrorSet(error, EBUSY,
                     "reading %s memory at %p before waiting on its sync event: %" PRId64
                     " bytes are not there yet",
                     block->device->name, ptr, pending);
}

// The block a device range lies in (NULL for unregistered host memory), after
// checking that `device` may access [ptr, ptr + size).
static int AcdDeviceRangeBlock(struct AcdDevice* device, const void* ptr, int64_t size,
                               struct AcdDeviceBlock** out, struct AcdError* error) {
  *out = NULL;
  if (size < 0) return AcdErrorSet(error, EINVAL, "%s: negative size %" PRId64, device->name, size);
  if (size == 0) return ACD_OK;
  struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
  char what[256];
  if (device->host_accessible) {
    // Host memory, registered or not; never the device window.
    if (block != NULL && !block->device->host_accessible) {
      return AcdErrorSet(error, EINVAL, "%p is memory of device %s, not host memory (%s)", ptr,
                         block->device->name, device->name);
    }
    if (AcdAddressInDeviceWindow((uintptr_t)ptr, size)) {
      AcdAddressDescribe(ptr, size, what, sizeof(what));
      return AcdErrorSet(error, EINVAL, "%p is not host memory%s", ptr, what);
    }
  } else if (block == NULL || block->device != device) {
    if (block != NULL) {
      return AcdErrorSet(error, EINVAL, "%p is memory of %s, not of %s", ptr,
                         block->device->name, device->name);
    }
    AcdAddressDescribe(ptr, size, what, sizeof(what));
    return AcdErrorSet(error, EINVAL, "%p is not memory of %s%s", ptr, device->name,
                       what[0] != '\0' ? what : ", but host memory");
  }
  if (block != NULL) {
    uint64_t offset = AcdAddr(ptr) - (uint64_t)block->address;
    if ((uint64_t)size > (uint64_t)block->size - offset) {
      return AcdErrorSet(error, EINVAL,
                         "%p (+%" PRId64 " bytes) runs past the end of its %s allocation of "
                         "%" PRId64 " bytes at %p",
                         ptr, size, block->device->name, block->size, (void*)block->address);
    }
  } else if (!AcdAddressRangeValid(ptr, size)) {
    return AcdErrorSet(error, EINVAL, "%p (+%" PRId64 " bytes) is not in readable host memory",
                       ptr, size);
  }
  *out = block;
  return ACD_OK;
}

int AcdDeviceAccess(struct AcdDevice* device, const void* ptr, int64_t size,
                    unsigned char** bytes, struct AcdDeviceBlock** block,
                    struct AcdError* error) {
  int code = AcdDeviceRangeBlock(device, ptr, size, block, error);
  if (code != ACD_OK) return code;
  *bytes = *block == NULL ? (unsigned char*)(uintptr_t)ptr
                          : (*block)->bytes + (AcdAddr(ptr) - (uint64_t)(*block)->address);
  return ACD_OK;
}

int AcdDeviceCheckRange(struct AcdDevice* device, const void* ptr, int64_t size,
                        struct AcdError* error) {
  struct AcdDeviceBlock* block;
  int code = AcdDeviceRangeBlock(device, ptr, size, &block, error);
  if (code != ACD_OK || block == NULL) return code;
  int64_t pending = AcdPendingIn(block, ptr, size);
  return pending > 0 ? AcdPendingError(block, ptr, pending, error) : ACD_OK;
}
