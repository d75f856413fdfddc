// arrow-c-device, the C core's own API, part 4 of 5: the simulated devices
// (memory, streams of work, events) and device arrays. Depends on validate/,
// model/ and abi/ only.

#ifndef ACD_DEVICE_H_INCLUDED
#define ACD_DEVICE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "validate/validate.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- devices (device.c) ------------------------------------------------
//
// Simulated devices: the ABI is real, only the hardware is simulated. Every
// ArrowDeviceType of the header is a device kind with any number of ids.
//
// Memory. The CPU and the host-accessible kinds (CUDA_HOST, ROCM_HOST,
// CUDA_MANAGED, as on real hardware) hand out host memory. Every other kind
// has memory of its own: its addresses lie in a window that no host pointer
// can be in (ACD_DEVICE_ADDRESS_BASE, abi.h), and its bytes are reachable
// only through AcdDeviceCopy and
// AcdDeviceCopyAsync, so a host read of them fails (AcdAddressRangeValid
// rejects the window) instead of reading some other buffer. All devices share
// that window as CUDA's unified virtual addressing does, so an address names
// its device (AcdDeviceOwnerOf).
//
// Work. Each device has one stream: a FIFO of pending operations (copies and
// fills). An event records the stream's tail; waiting on it executes the
// stream up to there. Until then the destination bytes hold ACD_DEVICE_POISON
// and any read of them through the simulation fails with EBUSY, naming the
// device and how many bytes are not there yet. The streams behave like CUDA's
// non-blocking streams: a synchronous copy does not wait for them.

// Device allocations are aligned to this (as cudaMalloc's are) and separated
// by at least this many unallocated bytes, so an overrun hits no allocation.
#define ACD_DEVICE_ALIGN 256
// What bytes hold before the operation that writes them has executed (and
// what fresh device memory holds).
#define ACD_DEVICE_POISON 0xA5
#define ACD_DEVICE_MAX_ID INT32_MAX

// Event kinds: the first member of every simulated event, naming what it
// stands in for. The spec's table maps each device type to one; the
// extension device (EXT_DEV) leaves it to the producer, and this simulation
// documents its own kind (ACD_EVENT_EXT_DEV) for it.
#define ACD_EVENT_NONE 0u
#define ACD_EVENT_CUDA 0xACDE0002u      // cudaEvent_t: CUDA, CUDA_HOST, CUDA_MANAGED
#define ACD_EVENT_OPENCL 0xACDE0004u    // cl_event: OPENCL
#define ACD_EVENT_VULKAN 0xACDE0007u    // VkEvent: VULKAN
#define ACD_EVENT_METAL 0xACDE0008u     // MTLEvent: METAL
#define ACD_EVENT_HIP 0xACDE000Au       // hipEvent_t: ROCM, ROCM_HOST
#define ACD_EVENT_EXT_DEV 0xACDE000Cu   // this simulation's EXT_DEV event
#define ACD_EVENT_SYCL 0xACDE000Eu      // sycl::event: ONEAPI

struct AcdDeviceOp;

// A device's stream of asynchronous work; operations are numbered from 1.
struct AcdDeviceStream {
  struct AcdDeviceOp* head;
  struct AcdDeviceOp* tail;
  int64_t enqueued;  // number of the last operation enqueued
  int64_t executed;  // number of the last operation executed
};

// A simulated device. Owned by the simulation and valid until the process
// ends: callers never free it.
struct AcdDevice {
  ArrowDeviceType device_type;
  int64_t device_id;
  // "cuda:1"; "cpu" for the CPU.
  char name[32];
  // Whether the host reads its memory directly.
  int host_accessible;
  // What its sync events are (ACD_EVENT_NONE: sync_event is always NULL).
  uint32_t event_kind;
  // Live allocations and their bytes (as reserved, padding included).
  int64_t allocations;
  int64_t bytes_allocated;
  // Work done: operations enqueued and executed, events recorded and waited on.
  int64_t ops_enqueued;
  int64_t ops_executed;
  int64_t events_recorded;
  int64_t events_waited;
  struct AcdDeviceStream stream;
};

// The simulated device (type, id), created on first use. CPU: id -1 only;
// others: 0 to ACD_DEVICE_MAX_ID. ENODEV for an unknown type or id.
int AcdDeviceResolve(ArrowDeviceType device_type, int64_t device_id, struct AcdDevice** out,
                     struct AcdError* error);
struct AcdDevice* AcdDeviceCpu(void);
// Every device used so far (the CPU first), for accounting.
int64_t AcdDeviceCount(void);
struct AcdDevice* AcdDeviceAt(int64_t i);

// "cuda", "cuda_host", ...; NULL for a value that is not a device type of the
// header. The macro name: "ARROW_DEVICE_CUDA".
const char* AcdDeviceTypeName(ArrowDeviceType device_type);
const char* AcdDeviceTypeMacro(ArrowDeviceType device_type);
// ENODEV when name is not one of the names above.
int AcdDeviceTypeFromName(const char* name, ArrowDeviceType* out);
// "cudaEvent_t", ...; NULL for ACD_EVENT_NONE and unknown kinds.
const char* AcdEventKindName(uint32_t kind);

// Sets device_id, device_type, a NULL sync_event and zeroed reserved bytes;
// `array` itself is initialized separately.
void AcdDeviceArrayInitDevice(struct ArrowDeviceArray* device_array,
                              ArrowDeviceType device_type, int64_t device_id);

// ---- device memory (memory.c, copy.c) ----

// Allocates size bytes (ACD_DEVICE_POISON-filled; padding to 64 bytes zeroed)
// on `device`, owned by the caller until AcdDeviceFree.
int AcdDeviceAllocate(struct AcdDevice* device, int64_t size, void** out,
                      struct AcdError* error);
// Frees an allocation of `device` (NULL: nothing), after executing the
// stream's pending work, as cudaFree synchronizes. EINVAL when ptr is not the
// start of a live allocation of `device` (nothing is freed then).
int AcdDeviceFree(struct AcdDevice* device, void* ptr, struct AcdError* error);

// When ptr lies in a live allocation made by AcdDeviceAllocate (any device,
// the host-accessible ones and the CPU included), sets *type and *id (either
// may be NULL) and returns ACD_OK; else ENOENT.
int AcdDeviceOwnerOf(const void* ptr, ArrowDeviceType* type, int64_t* id);
// The allocation containing ptr (as cuMemGetAddressRange): ENOENT when none.
int AcdDeviceMemoryRange(const void* ptr, const void** base, int64_t* size);
// Whether the host may read [ptr, ptr + size): not in the device window, and
// not host-accessible device memory that a pending operation is writing.
// AcdAddressRangeValid calls it (memory.c registers it, AcdAddressSetOwner).
int AcdDeviceRangeReadable(const void* ptr, int64_t size);
// AcdAddressDescribe under the device API's name: what ptr is, for a message
// about a failed host read; "" when it is ordinary host memory.
void AcdDeviceDescribeAddress(const void* ptr, int64_t size, char* out, size_t out_size);

// Whether `device` may read [ptr, ptr + size) now: inside one allocation of
// that device (or readable host memory, for the host kinds), and no pending
// operation writing it (EBUSY).
int AcdDeviceCheckRange(struct AcdDevice* device, const void* ptr, int64_t size,
                        struct AcdError* error);
// Copies size bytes from src (memory of src_device) to dst (memory of
// dst_device) at once. EBUSY when a pending operation writes the source.
int AcdDeviceCopy(struct AcdDevice* src_device, const void* src, struct AcdDevice* dst_device,
                  void* dst, int64_t size, struct AcdError* error);
// Reads element i of width (1, 2, 4 or 8) bytes, signed, from device memory.
int AcdDeviceReadInt(struct AcdDevice* device, const void* data, int64_t i, int width,
                     int64_t* out, struct AcdError* error);

// ---- streams (queue.c, copy.c) and events (event.c) ----

// Enqueues on dst_device's stream a copy of size bytes from src (memory of
// src_device, read now, as a staging copy) into dst, an allocation of
// dst_device (not the CPU). Until it executes, dst holds ACD_DEVICE_POISON.
int AcdDeviceCopyAsync(struct AcdDevice* src_device, const void* src,
                       struct AcdDevice* dst_device, void* dst, int64_t size,
                       struct AcdError* error);
// Enqueues a kernel-like fill of size bytes of dst with `value`.
int AcdDeviceMemsetAsync(struct AcdDevice* device, void* dst, int value, int64_t size,
                         struct AcdError* error);
// Executes all pending work of the device's stream.
void AcdDeviceSynchronize(struct AcdDevice* device);

struct AcdEventState;

// A simulated event: what a sync_event points at. The kind comes first, so a
// consumer can check what it was given; `state` is shared by copies of the
// struct (a cudaEvent_t is a handle passed by value).
struct AcdEvent {
  uint32_t kind;
  struct AcdEventState* state;
};

// Creates an event of device's kind on `device` (as cudaEventCreate); the
// caller destroys it with AcdEventDestroy. Never recorded, it is complete.
int AcdEventInit(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error);
// Records the tail of the stream of `device`, the event's own device.
int AcdEventRecord(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error);
// ACD_OK when the recorded work is done, EBUSY when not, EINVAL when the
// event is not live.
int AcdEventQuery(const struct AcdEvent* event, struct AcdError* error);
// The host waits: executes the event's stream up to the recorded position.
int AcdEventSynchronize(const struct AcdEvent* event, struct AcdError* error);
// The stream of `device` waits on the event. Streams are simulated on one
// thread, so the event's work executes now.
int AcdDeviceStreamWaitEvent(struct AcdDevice* device, const struct AcdEvent* event,
                             struct AcdError* error);
// Destroys the event's state (copies of the struct then dangle, as with CUDA).
void AcdEventDestroy(struct AcdEvent* event);
// Checks a sync_event given with an array on `device`: NULL, or a readable
// struct AcdEvent of the device's kind, live, created on `device`. Types
// without an event type require NULL.
int AcdEventValidate(const void* sync_event, const struct AcdDevice* device,
                     struct AcdError* error);
// Events recorded and waited on over all devices.
int64_t AcdEventsRecorded(void);
int64_t AcdEventsWaited(void);

// ---- device arrays (array.c, buffers.c) ----

// Checks a device array without reading its buffers: the struct is readable
// and live, device_type and device_id name a device, sync_event is valid for
// it, reserved is zeroed, the array validates against schema at MINIMAL, and
// every buffer of every child lies on that one device.
int AcdDeviceArrayValidate(const struct ArrowSchema* schema,
                           const struct ArrowDeviceArray* device_array, struct AcdError* error);
// Waits on the array's sync_event (nothing when NULL); the array is still the
// caller's.
int AcdDeviceArraySync(const struct ArrowDeviceArray* device_array, struct AcdError* error);
// Copies a device array (validated first) onto `device`: waits on its event,
// allocates every buffer of every child on `device`, copies (enqueued on the
// device's stream unless it is the CPU), and gives `out` a new array whose
// release frees those buffers and its event. On device kinds with an event
// type a new event is recorded after the copies; on the others the stream is
// synchronized first, since their sync_event must be NULL. `src` stays the
// caller's; on failure nothing is allocated and out->array.release is NULL.
int AcdDeviceArrayCopy(const struct ArrowSchema* schema, const struct ArrowDeviceArray* src,
                       struct AcdDevice* device, struct ArrowDeviceArray* out,
                       struct AcdError* error);
// Like AcdDeviceArrayCopy, then releases `src`: if ACD_OK is returned, src's
// data now lives on `device` in `out` and src is released (moved, when it
// already was on `device`). On failure the caller keeps src.
int AcdDeviceArrayMoveToDevice(const struct ArrowSchema* schema, struct ArrowDeviceArray* src,
                               struct AcdDevice* device, struct ArrowDeviceArray* out,
                               struct AcdError* error);

// The byte size of each buffer of one node of `schema`'s type (sizes has
// array->n_buffers entries) from its length and offset, by the model's rules
// (AcdBufferSizeOf), reading the offsets and variadic sizes they depend on
// from `device` memory. The node was validated at MINIMAL. Errors are
// prefixed with v's path.
int AcdDeviceBufferSizes(struct AcdValidation* v, const struct ArrowSchema* schema,
                         const struct ArrowArray* array, struct AcdDevice* device,
                         int64_t* sizes);

// Internals shared by the files of device/.

// One allocation. Device memory lives at `bytes`, a private host block;
// host-accessible memory is at `address` itself (bytes == address).
struct AcdDeviceBlock {
  uintptr_t address;
  int64_t size;
  int64_t reserved;
  struct AcdDevice* device;
  unsigned char* bytes;
  // Enqueued operations that write this block.
  int64_t pending_ops;
};

// The live allocation containing ptr, or NULL.
struct AcdDeviceBlock* AcdDeviceBlockFind(const void* ptr);
// Checks that `device` may access [ptr, ptr + size) as AcdDeviceCheckRange
// does, pending writes aside, and gives the host bytes behind it and its
// block (NULL for host memory that no device allocated).
int AcdDeviceAccess(struct AcdDevice* device, const void* ptr, int64_t size,
                    unsigned char** bytes, struct AcdDeviceBlock** block,
                    struct AcdError* error);
// How many operations on host-accessible memory are pending, over all devices
// (AcdDeviceRangeReadable looks up blocks only while there are some).
int64_t AcdDevicePendingHostOps(void);
// Enqueues on device's stream a write of size bytes at offset of block: a
// copy of `staged` (copied now), or a fill with `value` when staged is NULL.
// The bytes hold ACD_DEVICE_POISON until it executes.
int AcdDeviceEnqueue(struct AcdDevice* device, struct AcdDeviceBlock* block, int64_t offset,
                     int64_t size, const unsigned char* staged, int value,
                     struct AcdError* error);
// How many bytes of [offset, offset + size) of the block pending operations
// still have to write.
int64_t AcdDeviceStreamPendingBytes(const struct AcdDeviceBlock* block, int64_t offset,
                                    int64_t size);
// Executes the device's stream up to operation number `upto`.
void AcdDeviceStreamExecute(struct AcdDevice* device, int64_t upto);

// The release of the arrays AcdDeviceArrayCopy makes (registered with its role).
void AcdDeviceArrayReleaseNode(struct ArrowArray* array);

#ifdef __cplusplus
}
#endif

#endif  // ACD_DEVICE_H_INCLUDED
