// The wasm exports of the simulated devices (embind): moving device arrays
// between devices, validating and synchronizing them, reading device memory
// through the simulation, and the accounting. Pointers cross as unsigned
// 32-bit numbers (device addresses are >= 2^31), ids and sizes as doubles.
// Fallible calls return an errno-style code; the message of the last failure
// is read with deviceLastError(), its path in a struct tree with
// deviceLastErrorPath().

#include <emscripten/bind.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "device/device.h"

namespace {

AcdError device_error = {{0}, {0}};

template <typename T>
T* Ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

std::string DeviceLastError() { return std::string(device_error.message); }
std::string DeviceLastErrorPath() { return std::string(device_error.path); }

void DeviceArrayInitDevice(uintptr_t device_array, int device_type, double device_id) {
  AcdDeviceArrayInitDevice(Ptr<ArrowDeviceArray>(device_array), device_type,
                           static_cast<int64_t>(device_id));
}

int Resolve(int type, double id, AcdDevice** out) {
  return AcdDeviceResolve(type, static_cast<int64_t>(id), out, &device_error);
}

int DeviceCheck(int type, double id) {
  AcdDevice* device;
  return Resolve(type, id, &device);
}

std::string DeviceTypeName(int type) {
  const char* name = AcdDeviceTypeName(type);
  return name == nullptr ? std::string() : std::string(name);
}

int DeviceArrayMoveToDevice(uintptr_t schema, uintptr_t src, int type, double id, uintptr_t out) {
  AcdDevice* device;
  int code = Resolve(type, id, &device);
  if (code != ACD_OK) return code;
  return AcdDeviceArrayMoveToDevice(Ptr<const ArrowSchema>(schema), Ptr<ArrowDeviceArray>(src),
                                    device, Ptr<ArrowDeviceArray>(out), &device_error);
}

int DeviceArrayCopy(uintptr_t schema, uintptr_t src, int type, double id, uintptr_t out) {
  AcdDevice* device;
  int code = Resolve(type, id, &device);
  if (code != ACD_OK) return code;
  return AcdDeviceArrayCopy(Ptr<const ArrowSchema>(schema), Ptr<const ArrowDeviceArray>(src),
                            device, Ptr<ArrowDeviceArray>(out), &device_error);
}

int DeviceArrayValidate(uintptr_t schema, uintptr_t device_array) {
  return AcdDeviceArrayValidate(Ptr<const ArrowSchema>(schema),
                                Ptr<const ArrowDeviceArray>(device_array), &device_error);
}

// A plain ArrowArray checked as a CPU device array would be: its struct tree
// at MINIMAL, and no buffer in device memory (an error naming the device).
int ArrayCheckHost(uintptr_t schema, uintptr_t array) {
  const ArrowArray* a = Ptr<const ArrowArray>(array);
  if (!AcdAddressRangeValid(a, sizeof(*a))) {
    return AcdErrorSet(&device_error, EINVAL,
                       "expected a struct ArrowArray in readable memory, found %p",
                       static_cast<const void*>(a));
  }
  // A bitwise copy that is never released: the caller keeps the array.
  ArrowDeviceArray host;
  std::memcpy(&host.array, a, sizeof(*a));
  AcdDeviceArrayInitDevice(&host, ARROW_DEVICE_CPU, -1);
  return AcdDeviceArrayValidate(Ptr<const ArrowSchema>(schema), &host, &device_error);
}

int DeviceArraySync(uintptr_t device_array) {
  const ArrowDeviceArray* a = Ptr<const ArrowDeviceArray>(device_array);
  if (!AcdAddressRangeValid(a, sizeof(*a))) {
    return AcdErrorSet(&device_error, EINVAL,
                       "expected a struct ArrowDeviceArray in readable memory, found %p",
                       static_cast<const void*>(a));
  }
  return AcdDeviceArraySync(a, &device_error);
}

// ACD_OK when the array's event has completed (or it has none), EBUSY when
// its work is still pending.
int DeviceArrayEventQuery(uintptr_t device_array) {
  const ArrowDeviceArray* a = Ptr<const ArrowDeviceArray>(device_array);
  if (!AcdAddressRangeValid(a, sizeof(*a))) {
    return AcdErrorSet(&device_error, EINVAL,
                       "expected a struct ArrowDeviceArray in readable memory, found %p",
                       static_cast<const void*>(a));
  }
  AcdDevice* device;
  int code = Resolve(a->device_type, static_cast<double>(a->device_id), &device);
  if (code == ACD_OK) code = AcdEventValidate(a->sync_event, device, &device_error);
  if (code != ACD_OK || a->sync_event == nullptr) return code;
  return AcdEventQuery(static_cast<const AcdEvent*>(a->sync_event), &device_error);
}

// "" for host memory that no device allocated; else {"type":2,"id":1}.
std::string DeviceOwnerOf(uintptr_t ptr) {
  ArrowDeviceType type;
  int64_t id;
  if (AcdDeviceOwnerOf(Ptr<const void>(ptr), &type, &id) != ACD_OK) return std::string();
  char out[64];
  std::snprintf(out, sizeof(out), "{\"type\":%d,\"id\":%" PRId64 "}", static_cast<int>(type), id);
  return std::string(out);
}

std::string DeviceDescribeAddress(uintptr_t ptr, double size) {
  char out[256];
  AcdDeviceDescribeAddress(Ptr<const void>(ptr), static_cast<int64_t>(size), out, sizeof(out));
  return std::string(out);
}

// Copies size bytes at `ptr`, memory of whichever device owns it (the CPU for
// plain host memory), into host memory at dst, as a debugger would.
int DeviceRead(uintptr_t ptr, double size, uintptr_t dst) {
  ArrowDeviceType type = ARROW_DEVICE_CPU;
  int64_t id = -1;
  AcdDeviceOwnerOf(Ptr<const void>(ptr), &type, &id);
  AcdDevice* device;
  int code = AcdDeviceResolve(type, id, &device, &device_error);
  if (code != ACD_OK) return code;
  return AcdDeviceCopy(device, Ptr<const void>(ptr), AcdDeviceCpu(), Ptr<void>(dst),
                       static_cast<int64_t>(size), &device_error);
}

int DeviceSynchronize(int type, double id) {
  AcdDevice* device;
  int code = Resolve(type, id, &device);
  if (code == ACD_OK) AcdDeviceSynchronize(device);
  return code;
}

// Every device used so far, with its accounting, as JSON.
std::string DeviceStats() {
  std::string out = "{\"eventsRecorded\":" + std::to_string(AcdEventsRecorded()) +
                    ",\"eventsWaited\":" + std::to_string(AcdEventsWaited()) + ",\"devices\":[";
  for (int64_t i = 0; i < AcdDeviceCount(); i++) {
    const AcdDevice* d = AcdDeviceAt(i);
    int64_t pending = d->stream.enqueued - d->stream.executed;
    if (i > 0) out += ",";
    out += "{\"name\":\"" + std::string(d->name) + "\",\"type\":" + std::to_string(d->device_type) +
           ",\"id\":" + std::to_string(d->device_id) +
           ",\"bytesAllocated\":" + std::to_string(d->bytes_allocated) +
           ",\"allocations\":" + std::to_string(d->allocations) +
           ",\"opsEnqueued\":" + std::to_string(d->ops_enqueued) +
           ",\"opsExecuted\":" + std::to_string(d->ops_executed) +
           ",\"opsPending\":" + std::to_string(pending) +
           ",\"eventsRecorded\":" + std::to_string(d->events_recorded) +
           ",\"eventsWaited\":" + std::to_string(d->events_waited) + "}";
  }
  return out + "]}";
}

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device_devices) {
  using emscripten::function;
  function("deviceArrayInitDevice", &DeviceArrayInitDevice);
  function("deviceLastError", &DeviceLastError);
  function("deviceLastErrorPath", &DeviceLastErrorPath);
  function("deviceCheck", &DeviceCheck);
  function("deviceTypeName", &DeviceTypeName);
  function("deviceArrayMoveToDevice", &DeviceArrayMoveToDevice);
  function("deviceArrayCopy", &DeviceArrayCopy);
  function("deviceArrayValidate", &DeviceArrayValidate);
  function("arrayCheckHost", &ArrayCheckHost);
  function("deviceArraySync", &DeviceArraySync);
  function("deviceArrayEventQuery", &DeviceArrayEventQuery);
  function("deviceOwnerOf", &DeviceOwnerOf);
  function("deviceDescribeAddress", &DeviceDescribeAddress);
  function("deviceRead", &DeviceRead);
  function("deviceSynchronize", &DeviceSynchronize);
  function("deviceStats", &DeviceStats);
}
