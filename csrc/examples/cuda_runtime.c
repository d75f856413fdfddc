// The simulated CUDA runtime API (cuda_runtime.h) over the core's devices.

#include "cuda_runtime.h"

#include <errno.h>

static int acd_sim_current_device = 0;
static struct AcdError acd_sim_error = {{0}, {0}};

const char* acdSimLastErrorMessage(void) { return acd_sim_error.message; }

static cudaError_t AcdSimStatus(int code) {
  switch (code) {
    case ACD_OK: return cudaSuccess;
    case ENOMEM: return cudaErrorMemoryAllocation;
    case EBUSY: return cudaErrorNotReady;
    case ENODEV: return cudaErrorInvalidDevice;
    default: return cudaErrorInvalidValue;
  }
}

static int AcdSimCurrent(struct AcdDevice** out) {
  return AcdDeviceResolve(ARROW_DEVICE_CUDA, acd_sim_current_device, out, &acd_sim_error);
}

// The device that owns ptr (unified addressing); the CPU for host memory.
static struct AcdDevice* AcdSimOwner(const void* ptr) {
  ArrowDeviceType type;
  int64_t id;
  struct AcdDevice* device;
  if (AcdDeviceOwnerOf(ptr, &type, &id) != ACD_OK ||
      AcdDeviceResolve(type, id, &device, NULL) != ACD_OK) {
    return AcdDeviceCpu();
  }
  return device;
}

cudaError_t cudaGetDevice(int* device) {
  *device = acd_sim_current_device;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  struct AcdDevice* d;
  int code = AcdDeviceResolve(ARROW_DEVICE_CUDA, device, &d, &acd_sim_error);
  if (code == ACD_OK) acd_sim_current_device = device;
  return AcdSimStatus(code);
}

cudaError_t cudaMalloc(void** ptr, size_t size) {
  struct AcdDevice* device;
  int code = AcdSimCurrent(&device);
  if (code == ACD_OK) code = AcdDeviceAllocate(device, (int64_t)size, ptr, &acd_sim_error);
  return AcdSimStatus(code);
}

cudaError_t cudaFree(void* ptr) {
  return AcdSimStatus(AcdDeviceFree(AcdSimOwner(ptr), ptr, &acd_sim_error));
}

static int AcdSimCheckKind(const struct AcdDevice* dst, const struct AcdDevice* src,
                           enum cudaMemcpyKind kind) {
  int dst_host = dst->host_accessible;
  int src_host = src->host_accessible;
  int ok = kind == cudaMemcpyDefault || (kind == cudaMemcpyHostToHost && dst_host && src_host) ||
           (kind == cudaMemcpyHostToDevice && !dst_host && src_host) ||
           (kind == cudaMemcpyDeviceToHost && dst_host && !src_host) ||
           (kind == cudaMemcpyDeviceToDevice && !dst_host && !src_host);
  if (ok) return ACD_OK;
  return AcdErrorSet(&acd_sim_error, EINVAL, "cudaMemcpyKind %d does not match a copy from %s to %s",
                     (int)kind, src->name, dst->name);
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind) {
  struct AcdDevice* to = AcdSimOwner(dst);
  struct AcdDevice* from = AcdSimOwner(src);
  int code = AcdSimCheckKind(to, from, kind);
  if (code == ACD_OK) code = AcdDeviceCopy(from, src, to, dst, (int64_t)count, &acd_sim_error);
  return AcdSimStatus(code);
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream) {
  struct AcdDevice* to = AcdSimOwner(dst);
  struct AcdDevice* from = AcdSimOwner(src);
  int code = AcdSimCheckKind(to, from, kind);
  if (code == ACD_OK && to != stream) {
    code = AcdErrorSet(&acd_sim_error, EINVAL,
                       "the simulation enqueues copies on the destination's stream: %s, not %s",
                       to->name, stream->name);
  }
  if (code == ACD_OK) {
    code = AcdDeviceCopyAsync(from, src, to, dst, (int64_t)count, &acd_sim_error);
  }
  return AcdSimStatus(code);
}

cudaError_t cudaStreamCreate(cudaStream_t* stream) { return AcdSimStatus(AcdSimCurrent(stream)); }

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  (void)stream;  // the device's one stream lives as long as the device
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  AcdDeviceSynchronize(stream);
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  (void)flags;
  return AcdSimStatus(AcdDeviceStreamWaitEvent(stream, &event, &acd_sim_error));
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  struct AcdDevice* device;
  int code = AcdSimCurrent(&device);
  if (code == ACD_OK) code = AcdEventInit(event, device, &acd_sim_error);
  return AcdSimStatus(code);
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  return AcdSimStatus(AcdEventRecord(&event, stream, &acd_sim_error));
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  return AcdSimStatus(AcdEventQuery(&event, &acd_sim_error));
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return AcdSimStatus(AcdEventSynchronize(&event, &acd_sim_error));
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  AcdEventDestroy(&event);
  return cudaSuccess;
}
