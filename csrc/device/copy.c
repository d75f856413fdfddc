// Copies between and within devices: synchronous copies (as cudaMemcpy),
// reading one integer from device memory, and the asynchronous copies and
// fills that are enqueued on a device's stream (queue.c).

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "device/device.h"

int AcdDeviceCopy(struct AcdDevice* src_device, const void* src, struct AcdDevice* dst_device,
                  void* dst, int64_t size, struct AcdError* error) {
  struct AcdDeviceBlock* src_block;
  struct AcdDeviceBlock* dst_block;
  unsigned char* from;
  unsigned char* to;
  int code = AcdDeviceCheckRange(src_device, src, size, error);
  if (code == ACD_OK) code = AcdDeviceAccess(src_device, src, size, &from, &src_block, error);
  if (code == ACD_OK) code = AcdDeviceAccess(dst_device, dst, size, &to, &dst_block, error);
  if (code != ACD_OK || size == 0) return code;
  // Pending writes to the destination land first, so that they do not
  // overwrite this copy later.
  if (dst_block != NULL && dst_block->pending_ops > 0) AcdDeviceSynchronize(dst_block->device);
  memmove(to, from, (size_t)size);
  return ACD_OK;
}

int AcdDeviceReadInt(struct AcdDevice* device, const void* data, int64_t i, int width,
                     int64_t* out, struct AcdError* error) {
  if (i < 0 || i > INT64_MAX / 8) {
    return AcdErrorSet(error, EINVAL, "element %" PRId64 " is out of range", i);
  }
  unsigned char local[8];
  const void* at = (const void*)((uintptr_t)data + (uintptr_t)(i * width));
  int code = AcdDeviceCopy(device, at, AcdDeviceCpu(), local, width, error);
  if (code != ACD_OK) return code;
  *out = AcdReadInt(local, 0, width);
  return ACD_OK;
}

int AcdDeviceCopyAsync(struct AcdDevice* src_device, const void* src,
                       struct AcdDevice* dst_device, void* dst, int64_t size,
                       struct AcdError* error) {
  if (dst_device->device_type == ARROW_DEVICE_CPU) {
    return AcdErrorSet(error, EINVAL,
                       "the CPU has no stream: copy to host memory with AcdDeviceCopy");
  }
  unsigned char* from;
  unsigned char* to;
  struct AcdDeviceBlock* src_block;
  struct AcdDeviceBlock* dst_block;
  int code = AcdDeviceCheckRange(src_device, src, size, error);
  if (code == ACD_OK) code = AcdDeviceAccess(src_device, src, size, &from, &src_block, error);
  if (code == ACD_OK) code = AcdDeviceAccess(dst_device, dst, size, &to, &dst_block, error);
  if (code != ACD_OK || size == 0) return code;
  if (dst_block == NULL || dst_block->device != dst_device) {
    return AcdErrorSet(error, EINVAL,
                       "%p is not an allocation of %s: asynchronous copies write device "
                       "allocations only",
                       dst, dst_device->name);
  }
  return AcdDeviceEnqueue(dst_device, dst_block, (int64_t)(to - dst_block->bytes), size, from, 0,
                    error);
}

int AcdDeviceMemsetAsync(struct AcdDevice* device, void* dst, int value, int64_t size,
                         struct AcdError* error) {
  unsigned char* to;
  struct AcdDeviceBlock* block;
  int code = AcdDeviceAccess(device, dst, size, &to, &block, error);
  if (code != ACD_OK || size == 0) return code;
  if (block == NULL || block->device != device || device->device_type == ARROW_DEVICE_CPU) {
    return AcdErrorSet(error, EINVAL, "%p is not an allocation of %s with a stream", dst,
                       device->name);
  }
  return AcdDeviceEnqueue(device, block, (int64_t)(to - block->bytes), size, NULL, value & 0xFF,
                    error);
}
