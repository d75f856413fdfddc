// The C Device Data Interface's producer example, "Exporting a simple int32
// device array", as the spec gives it, compiled against the simulated CUDA
// runtime (cuda_runtime.h); then a consumer that waits on the sync event
// before reading, and a main that runs both:
//
//   cc -std=c11 -Icsrc $(find csrc -name '*.c') -o int32_device_array
//
// With -DACD_EXAMPLE_NO_MAIN the functions are linked into test/c/test_device.c.

#include "int32_device_array.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- the spec's example ---------------------------------------------------------

static void release_int32_device_array(struct ArrowArray* array) {
    assert(array->n_buffers == 2);
    // destroy the event
    cudaEvent_t* ev_ptr = (cudaEvent_t*)(array->private_data);
    cudaError_t status = cudaEventDestroy(*ev_ptr);
    assert(status == cudaSuccess);
    free(ev_ptr);

    // free the buffers and the buffers array
    // (the one change to the spec's code: buffers[1] is a const void*, and
    // cudaFree takes a void*, so C compilers want a cast)
    status = cudaFree((void*)array->buffers[1]);
    assert(status == cudaSuccess);
    free(array->buffers);

    // mark released
    array->release = NULL;
}

void export_int32_device_array(void* cudaAllocedPtr,
                               cudaStream_t stream,
                               int64_t length,
                               struct ArrowDeviceArray* array) {
    // get device id
    int device;
    cudaError_t status;
    status = cudaGetDevice(&device);
    assert(status == cudaSuccess);

    cudaEvent_t* ev_ptr = (cudaEvent_t*)malloc(sizeof(cudaEvent_t));
    assert(ev_ptr != NULL);
    status = cudaEventCreate(ev_ptr);
    assert(status == cudaSuccess);

    // record event on the stream, assuming that the passed in
    // stream is where the work to produce the data will be processing.
    status = cudaEventRecord(*ev_ptr, stream);
    assert(status == cudaSuccess);

    memset(array, 0, sizeof(struct ArrowDeviceArray));
    // initialize fields
    *array = (struct ArrowDeviceArray) {
        .array = (struct ArrowArray) {
            .length = length,
            .null_count = 0,
            .offset = 0,
            .n_buffers = 2,
            .n_children = 0,
            .children = NULL,
            .dictionary = NULL,
            // bookkeeping
            .release = &release_int32_device_array,
            // store the event pointer as private data in the array
            // so that we can access it in the release callback.
            .private_data = (void*)(ev_ptr),
        },
        .device_id = (int64_t)(device),
        .device_type = ARROW_DEVICE_CUDA,
        // pass the event pointer to the consumer
        .sync_event = (void*)(ev_ptr),
    };

    // allocate list of buffers
    array->array.buffers = (const void**)malloc(sizeof(void*) * array->array.n_buffers);
    assert(array->array.buffers != NULL);
    array->array.buffers[0] = NULL;
    array->array.buffers[1] = cudaAllocedPtr;
}

// calling the release callback should be done using the array member
// of the device array.
static void release_device_array_helper(struct ArrowDeviceArray* arr) {
    arr->array.release(&arr->array);
}

// ---- a consumer ----------------------------------------------------------------------

int64_t consume_int32_device_array(struct ArrowDeviceArray* array, int32_t* out,
                                   int64_t capacity, struct AcdError* error) {
  if (array->array.release == NULL) {
    AcdErrorSet(error, EINVAL, "the array is released");
    return -1;
  }
  if (array->device_type != ARROW_DEVICE_CUDA) {
    AcdErrorSet(error, EINVAL, "device_type: expected ARROW_DEVICE_CUDA (2), found %" PRId32,
                array->device_type);
    return -1;
  }
  int64_t length = array->array.length;
  if (array->array.n_buffers != 2 || length < 0 || length > capacity) {
    AcdErrorSet(error, EINVAL, "expected an int32 array of at most %" PRId64 " values", capacity);
    return -1;
  }
  // The data is on device `device_id`, and may be read once the event has
  // completed: wait on it first.
  if (cudaSetDevice((int)array->device_id) != cudaSuccess ||
      (array->sync_event != NULL &&
       cudaEventSynchronize(*(cudaEvent_t*)array->sync_event) != cudaSuccess)) {
    AcdErrorSet(error, EINVAL, "%s", acdSimLastErrorMessage());
    return -1;
  }
  const int32_t* values = (const int32_t*)array->array.buffers[1] + array->array.offset;
  if (cudaMemcpy(out, values, (size_t)length * sizeof(int32_t), cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    AcdErrorSet(error, EINVAL, "%s", acdSimLastErrorMessage());
    return -1;
  }
  release_device_array_helper(array);
  return length;
}

#ifndef ACD_EXAMPLE_NO_MAIN

// Produces five int32 values on cuda:1 through the stream, exports them as
// the spec does, shows that reading before waiting fails, then consumes them.
int main(void) {
  int64_t start = AcdBytesAllocated();
  const int32_t values[5] = {1, 2, 3, 4, 5};
  void* data = NULL;
  cudaStream_t stream;
  if (cudaSetDevice(1) != cudaSuccess || cudaMalloc(&data, sizeof(values)) != cudaSuccess ||
      cudaStreamCreate(&stream) != cudaSuccess) {
    fprintf(stderr, "c-example: %s\n", acdSimLastErrorMessage());
    return 1;
  }
  // The work that produces the data, on the stream the event is recorded on.
  cudaMemcpyAsync(data, values, sizeof(values), cudaMemcpyHostToDevice, stream);

  struct ArrowDeviceArray array;
  export_int32_device_array(data, stream, 5, &array);

  int32_t early[5];
  cudaError_t status = cudaMemcpy(early, data, sizeof(early), cudaMemcpyDeviceToHost);
  int failed_early = status == cudaErrorNotReady;
  printf("c-example: a read before waiting on the sync event fails: %s\n",
         acdSimLastErrorMessage());

  int32_t out[5] = {0};
  struct AcdError error;
  int64_t n = consume_int32_device_array(&array, out, 5, &error);
  if (n < 0) {
    fprintf(stderr, "c-example: %s\n", error.message);
    return 1;
  }
  int64_t left = AcdBytesAllocated() - start;
  int same = n == 5 && memcmp(out, values, sizeof(values)) == 0;
  int device = -1;
  cudaGetDevice(&device);
  printf("c-example: cuda:%d: read %" PRId64 " int32 values after waiting: %d %d %d %d %d; "
         "%" PRId64 " bytes left allocated\n",
         device, n, out[0], out[1], out[2], out[3], out[4], left);
  return same && failed_early && left == 0 ? 0 : 1;
}

#endif  // ACD_EXAMPLE_NO_MAIN
