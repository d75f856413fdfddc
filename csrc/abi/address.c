// What a pointer may be read as (abi.h, "addresses"). Host memory is the
// linear memory on wasm, anything but NULL natively; the window of simulated
// device addresses is never host memory. The simulated devices (device/),
// which live above this folder, register an owner hook to say which host
// ranges a pending operation is still writing and what an address of theirs
// is: a hook rather than a call, so that abi/ depends on nothing above it.

#include <stdio.h>
#include <string.h>

#include "abi/abi.h"

#if defined(__wasm__)
#define ACD_WASM_PAGE 65536
#endif

static struct AcdAddressOwner acd_owner = {NULL, NULL};

void AcdAddressSetOwner(const struct AcdAddressOwner* owner) { acd_owner = *owner; }

int AcdAddressInDeviceWindow(uintptr_t address, int64_t size) {
  uint64_t at = (uint64_t)address;
  uint64_t base = (uint64_t)ACD_DEVICE_ADDRESS_BASE;
  uint64_t end = at + (uint64_t)(size > 0 ? size : 1);
  if (end < at) return 1;  // wraps around: never readable
  return at < base + (uint64_t)ACD_DEVICE_ADDRESS_SIZE && end > base;
}

int AcdAddressRangeValid(const void* ptr, int64_t size) {
  if (ptr == NULL || size < 0) return 0;
  // Another module's memory, mapped for a check (window.c): its own bounds.
  if (AcdAddressInForeignWindow((uintptr_t)ptr, size)) {
    return AcdForeignRangeReadable((uintptr_t)ptr, size);
  }
  // Simulated device memory is never host memory, and host-accessible device
  // memory is not readable while a copy into it is pending (device/memory.c).
  if (AcdAddressInDeviceWindow((uintptr_t)ptr, size)) return 0;
  if (acd_owner.readable != NULL && !acd_owner.readable(ptr, size)) return 0;
#if defined(__wasm__)
  uint64_t end = (uint64_t)(uintptr_t)ptr + (uint64_t)size;
  return end <= (uint64_t)__builtin_wasm_memory_size(0) * ACD_WASM_PAGE;
#else
  return 1;
#endif
}

void AcdAddressDescribe(const void* ptr, int64_t size, char* out, size_t out_size) {
  out[0] = '\0';
  if (acd_owner.describe != NULL && acd_owner.describe(ptr, size, out, out_size)) return;
  // Only a range that starts there stands for the other module's memory (one
  // that runs into the window from below is simply too long).
  if (AcdIsForeignAddress(ptr)) {
    snprintf(out, out_size,
             " (address %llu of the other module's memory, whose checked part ends at %llu)",
             (unsigned long long)AcdForeignAddressOf((uintptr_t)ptr),
             (unsigned long long)AcdForeignEnd());
    return;
  }
  if (AcdAddressInDeviceWindow((uintptr_t)ptr, size)) {
    snprintf(out, out_size,
             ", which is in the simulated device address space but in no live device "
             "allocation (freed, or never allocated)");
  }
}

int AcdBytesSame(const void* a, const void* b, int64_t size) {
  const unsigned char* x = a;
  const unsigned char* y = b;
  int64_t i = 0;
  for (; i + 8 <= size; i += 8) {
    uint64_t p, q;
    memcpy(&p, x + i, 8);
    memcpy(&q, y + i, 8);
    if (p != q) return 0;
  }
  for (; i < size; i++) {
    if (x[i] != y[i]) return 0;
  }
  return 1;
}
