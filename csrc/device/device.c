// Simulated devices: one per device type of the header and id, created on
// first use and kept until the process ends. What each kind is (host memory
// or its own, which event type) follows the spec's tables.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"

struct AcdDeviceKind {
  ArrowDeviceType type;
  const char* name;
  const char* macro;
  int host_accessible;
  uint32_t event_kind;
};

// The spec's synchronization event table; EXT_DEV's event is this
// simulation's own (the spec leaves it to the producer to document).
static const struct AcdDeviceKind kDeviceKinds[] = {
    {ARROW_DEVICE_CPU, "cpu", "ARROW_DEVICE_CPU", 1, ACD_EVENT_NONE},
    {ARROW_DEVICE_CUDA, "cuda", "ARROW_DEVICE_CUDA", 0, ACD_EVENT_CUDA},
    {ARROW_DEVICE_CUDA_HOST, "cuda_host", "ARROW_DEVICE_CUDA_HOST", 1, ACD_EVENT_CUDA},
    {ARROW_DEVICE_OPENCL, "opencl", "ARROW_DEVICE_OPENCL", 0, ACD_EVENT_OPENCL},
    {ARROW_DEVICE_VULKAN, "vulkan", "ARROW_DEVICE_VULKAN", 0, ACD_EVENT_VULKAN},
    {ARROW_DEVICE_METAL, "metal", "ARROW_DEVICE_METAL", 0, ACD_EVENT_METAL},
    {ARROW_DEVICE_VPI, "vpi", "ARROW_DEVICE_VPI", 0, ACD_EVENT_NONE},
    {ARROW_DEVICE_ROCM, "rocm", "ARROW_DEVICE_ROCM", 0, ACD_EVENT_HIP},
    {ARROW_DEVICE_ROCM_HOST, "rocm_host", "ARROW_DEVICE_ROCM_HOST", 1, ACD_EVENT_HIP},
    {ARROW_DEVICE_EXT_DEV, "ext_dev", "ARROW_DEVICE_EXT_DEV", 0, ACD_EVENT_EXT_DEV},
    {ARROW_DEVICE_CUDA_MANAGED, "cuda_managed", "ARROW_DEVICE_CUDA_MANAGED", 1, ACD_EVENT_CUDA},
    {ARROW_DEVICE_ONEAPI, "oneapi", "ARROW_DEVICE_ONEAPI", 0, ACD_EVENT_SYCL},
    {ARROW_DEVICE_WEBGPU, "webgpu", "ARROW_DEVICE_WEBGPU", 0, ACD_EVENT_NONE},
    {ARROW_DEVICE_HEXAGON, "hexagon", "ARROW_DEVICE_HEXAGON", 0, ACD_EVENT_NONE},
};

#define ACD_DEVICE_KIND_COUNT ((int)(sizeof(kDeviceKinds) / sizeof(kDeviceKinds[0])))

static const struct AcdDeviceKind* AcdDeviceKindOf(ArrowDeviceType type) {
  for (int i = 0; i < ACD_DEVICE_KIND_COUNT; i++) {
    if (kDeviceKinds[i].type == type) return &kDeviceKinds[i];
  }
  return NULL;
}

const char* AcdDeviceTypeName(ArrowDeviceType device_type) {
  const struct AcdDeviceKind* kind = AcdDeviceKindOf(device_type);
  return kind == NULL ? NULL : kind->name;
}

const char* AcdDeviceTypeMacro(ArrowDeviceType device_type) {
  const struct AcdDeviceKind* kind = AcdDeviceKindOf(device_type);
  return kind == NULL ? NULL : kind->macro;
}

int AcdDeviceTypeFromName(const char* name, ArrowDeviceType* out) {
  for (int i = 0; i < ACD_DEVICE_KIND_COUNT; i++) {
    if (strcmp(kDeviceKinds[i].name, name) == 0) {
      *out = kDeviceKinds[i].type;
      return ACD_OK;
    }
  }
  return ENODEV;
}

const char* AcdEventKindName(uint32_t kind) {
  switch (kind) {
    case ACD_EVENT_CUDA: return "cudaEvent_t";
    case ACD_EVENT_OPENCL: return "cl_event";
    case ACD_EVENT_VULKAN: return "VkEvent";
    case ACD_EVENT_METAL: return "MTLEvent";
    case ACD_EVENT_HIP: return "hipEvent_t";
    case ACD_EVENT_EXT_DEV: return "AcdEvent (ext_dev)";
    case ACD_EVENT_SYCL: return "sycl::event";
    default: return NULL;
  }
}

// ---- the device table ------------------------------------------------------
// Plain malloc: the table outlives every export, so it is not counted in
// AcdBytesAllocated (whose count must return to its start after releases).

static struct AcdDevice acd_cpu_device;
static struct AcdDevice** acd_devices = NULL;
static int64_t acd_device_count = 0;
static int64_t acd_device_capacity = 0;

static void AcdDeviceSetUp(struct AcdDevice* device, const struct AcdDeviceKind* kind,
                           int64_t id) {
  memset(device, 0, sizeof(*device));
  device->device_type = kind->type;
  device->device_id = id;
  device->host_accessible = kind->host_accessible;
  device->event_kind = kind->event_kind;
  if (kind->type == ARROW_DEVICE_CPU) {
    snprintf(device->name, sizeof(device->name), "cpu");
  } else {
    snprintf(device->name, sizeof(device->name), "%s:%" PRId64, kind->name, id);
  }
}

struct AcdDevice* AcdDeviceCpu(void) {
  if (acd_cpu_device.device_type != ARROW_DEVICE_CPU) {
    AcdDeviceSetUp(&acd_cpu_device, AcdDeviceKindOf(ARROW_DEVICE_CPU), -1);
  }
  return &acd_cpu_device;
}

int AcdDeviceResolve(ArrowDeviceType device_type, int64_t device_id, struct AcdDevice** out,
                     struct AcdError* error) {
  const struct AcdDeviceKind* kind = AcdDeviceKindOf(device_type);
  if (kind == NULL) {
    return AcdErrorSet(error, ENODEV,
                       "device_type: expected a device type of the header (ARROW_DEVICE_CPU 1, "
                       "CUDA 2, CUDA_HOST 3, OPENCL 4, VULKAN 7, METAL 8, VPI 9, ROCM 10, "
                       "ROCM_HOST 11, EXT_DEV 12, CUDA_MANAGED 13, ONEAPI 14, WEBGPU 15, "
                       "HEXAGON 16), found %" PRId32,
                       device_type);
  }
  if (device_type == ARROW_DEVICE_CPU) {
    // One CPU, whatever the id: the spec only recommends -1 (Arrow C++ ignores it too).
    *out = AcdDeviceCpu();
    return ACD_OK;
  }
  if (device_id < 0 || device_id > ACD_DEVICE_MAX_ID) {
    return AcdErrorSet(error, ENODEV,
                       "device_id: expected 0 to %d for %s, found %" PRId64, ACD_DEVICE_MAX_ID,
                       kind->macro, device_id);
  }

  for (int64_t i = 0; i < acd_device_count; i++) {
    struct AcdDevice* d = acd_devices[i];
    if (d->device_type == device_type && d->device_id == device_id) {
      *out = d;
      return ACD_OK;
    }
  }
  if (acd_device_count == acd_device_capacity) {
    int64_t capacity = acd_device_capacity == 0 ? 16 : acd_device_capacity * 2;
    struct AcdDevice** grown =
        realloc(acd_devices, (size_t)capacity * sizeof(struct AcdDevice*));
    if (grown == NULL) return AcdErrorSet(error, ENOMEM, "out of memory creating a device");
    acd_devices = grown;
    acd_device_capacity = capacity;
  }
  struct AcdDevice* device = malloc(sizeof(struct AcdDevice));
  if (device == NULL) return AcdErrorSet(error, ENOMEM, "out of memory creating a device");
  AcdDeviceSetUp(device, kind, device_id);
  acd_devices[acd_device_count++] = device;
  *out = device;
  return ACD_OK;
}

int64_t AcdDeviceCount(void) { return acd_device_count + 1; }

struct AcdDevice* AcdDeviceAt(int64_t i) {
  if (i == 0) return AcdDeviceCpu();
  if (i < 0 || i > acd_device_count) return NULL;
  return acd_devices[i - 1];
}

void AcdDeviceArrayInitDevice(struct ArrowDeviceArray* device_array,
                              ArrowDeviceType device_type, int64_t device_id) {
  device_array->device_id = device_id;
  device_array->device_type = device_type;
  device_array->sync_event = NULL;
  // The spec requires the producer to zero the reserved bytes.
  memset(device_array->reserved, 0, sizeof(device_array->reserved));
}
