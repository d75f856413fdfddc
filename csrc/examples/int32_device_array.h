// The C Device Data Interface's producer example ("Exporting a simple int32
// device array"), and a consumer for it, against the simulated CUDA runtime.

#ifndef ACD_EXAMPLES_INT32_DEVICE_ARRAY_H_INCLUDED
#define ACD_EXAMPLES_INT32_DEVICE_ARRAY_H_INCLUDED

#include "cuda_runtime.h"

// The spec's producer: takes ownership of cudaAllocedPtr (length int32
// values on the current device, produced by work enqueued on `stream`) and
// fills `array`, whose release frees the buffer and the event.
void export_int32_device_array(void* cudaAllocedPtr, cudaStream_t stream, int64_t length,
                               struct ArrowDeviceArray* array);

// A consumer that honours device_type, device_id and sync_event: it waits on
// the event, copies the values to `out` (capacity int32 values) and releases
// the array. Returns the number of values read, or -1 (the array is then
// still the caller's) with a message in `error`.
int64_t consume_int32_device_array(struct ArrowDeviceArray* array, int32_t* out,
                                   int64_t capacity, struct AcdError* error);

#endif  // ACD_EXAMPLES_INT32_DEVICE_ARRAY_H_INCLUDED
