// A simulated CUDA runtime API: the subset that the C Device Data Interface's
// producer example calls, over arrow-c-device's simulated devices (device/device.h), so
// that the spec's example compiles and runs unchanged without a GPU.
//
// cudaMalloc hands out memory of the simulated device cuda:N (N set by
// cudaSetDevice, 0 by default): its addresses are never host pointers, and
// only cudaMemcpy* reach its bytes. Each device has one stream; cudaStreamCreate
// gives it. The streams behave as cudaStreamNonBlocking ones: a plain
// cudaMemcpy does not wait for them, so a consumer that reads before waiting
// on the producer's event gets cudaErrorNotReady and a message saying so.

#ifndef ACD_EXAMPLES_CUDA_RUNTIME_H_INCLUDED
#define ACD_EXAMPLES_CUDA_RUNTIME_H_INCLUDED

#include <stddef.h>

#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudaError {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorInvalidDevice = 101,
  cudaErrorNotReady = 600
} cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4
};

// A handle passed by value, as CUDA's: copies share the event. What an
// ArrowDeviceArray's sync_event points at (a cudaEvent_t*, per the spec).
typedef struct AcdEvent cudaEvent_t;
// The device's one stream.
typedef struct AcdDevice* cudaStream_t;

cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaMalloc(void** ptr, size_t size);
cudaError_t cudaFree(void* ptr);
// Copies between host and device memory; which is which comes from the
// addresses (unified addressing), the kind is checked against them.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind);
// Enqueues a host-to-device or device-to-device copy on the stream.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, enum cudaMemcpyKind kind,
                            cudaStream_t stream);
cudaError_t cudaStreamCreate(cudaStream_t* stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags);
cudaError_t cudaEventCreate(cudaEvent_t* event);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream);
cudaError_t cudaEventQuery(cudaEvent_t event);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);

// The simulation's message for the last call that failed.
const char* acdSimLastErrorMessage(void);

#ifdef __cplusplus
}
#endif

#endif  // ACD_EXAMPLES_CUDA_RUNTIME_H_INCLUDED
