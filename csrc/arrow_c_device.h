// Licensed under the Apache License, Version 2.0.
//
// The Apache Arrow C Data Interface, C Device Data Interface, C Stream
// Interface, C Device Stream Interface and (experimental) C Async Device
// Stream Interface: the five ABI blocks, each behind its canonical guard.
//
// These definitions are ABI-identical to Apache Arrow's canonical header
// (cpp/src/arrow/c/abi.h). The guards must be kept exactly as they are, so
// that a translation unit that also includes Arrow's, nanoarrow's or another
// project's copy of these blocks sees each definition once.
//
// Where the specification's prose differs from the canonical header, this
// file follows the header: ArrowAsyncProducer has no `release` member,
// ArrowAsyncTask::extract_data takes `struct ArrowAsyncTask*`, and
// ArrowAsyncProducer::request takes `int64_t n`.
//
// Specification: https://arrow.apache.org/docs/format/CDeviceDataInterface.html

#ifndef ARROW_C_DEVICE_H_INCLUDED
#define ARROW_C_DEVICE_H_INCLUDED

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  // Array type description
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;

  // Release callback
  void (*release)(struct ArrowSchema*);
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowArray {
  // Array data description
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;

  // Release callback
  void (*release)(struct ArrowArray*);
  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

// Device type of the memory the buffers live in (values as DLPack's DLDeviceType).
typedef int32_t ArrowDeviceType;

// CPU device, same as using ArrowArray directly
#define ARROW_DEVICE_CPU 1
// CUDA GPU device
#define ARROW_DEVICE_CUDA 2
// Pinned CUDA CPU memory by cudaMallocHost
#define ARROW_DEVICE_CUDA_HOST 3
// OpenCL device
#define ARROW_DEVICE_OPENCL 4
// Vulkan buffer for next-gen graphics
#define ARROW_DEVICE_VULKAN 7
// Metal for Apple GPU
#define ARROW_DEVICE_METAL 8
// Verilog simulator buffer
#define ARROW_DEVICE_VPI 9
// ROCm GPUs for AMD GPUs
#define ARROW_DEVICE_ROCM 10
// Pinned ROCm CPU memory allocated by hipMallocHost
#define ARROW_DEVICE_ROCM_HOST 11
// Reserved for extension
#define ARROW_DEVICE_EXT_DEV 12
// CUDA managed/unified memory allocated by cudaMallocManaged
#define ARROW_DEVICE_CUDA_MANAGED 13
// Unified shared memory allocated on a oneAPI non-partitioned device
#define ARROW_DEVICE_ONEAPI 14
// GPU support for next-gen WebGPU standard
#define ARROW_DEVICE_WEBGPU 15
// Qualcomm Hexagon DSP
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
  // The allocated array: its buffers (and its children's) live on the device.
  struct ArrowArray array;
  // The device id to identify a specific device (-1 where there is none, as for the CPU)
  int64_t device_id;
  // The type of device which can access this memory
  ArrowDeviceType device_type;
  // An event-like object to synchronize on if needed
  void* sync_event;
  // Reserved bytes for future expansion: zeroed by the producer
  int64_t reserved[3];
};

#endif  // ARROW_C_DEVICE_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  // Get the stream's schema (the same for every array). 0 or an errno code.
  // On success the schema is released independently of the stream.
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);

  // Get the next array; a released array with 0 means the end of the stream.
  // On success the array is released independently of the stream.
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);

  // Description of the last error, valid until the next call on the stream,
  // or NULL. Only to be called after a call that returned non-zero.
  const char* (*get_last_error)(struct ArrowArrayStream*);

  // Release the stream's own resources
  void (*release)(struct ArrowArrayStream*);

  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_STREAM_INTERFACE

#ifndef ARROW_C_DEVICE_STREAM_INTERFACE
#define ARROW_C_DEVICE_STREAM_INTERFACE

// Equivalent to ArrowArrayStream, but for ArrowDeviceArrays on one device type.
struct ArrowDeviceArrayStream {
  // The device type that every array of this stream is on
  ArrowDeviceType device_type;

  // Get the stream's schema (CPU memory). 0 or an errno code.
  int (*get_schema)(struct ArrowDeviceArrayStream* self, struct ArrowSchema* out);

  // Get the next device array; a released array with 0 means the end of the stream.
  int (*get_next)(struct ArrowDeviceArrayStream* self, struct ArrowDeviceArray* out);

  // Description of the last error, valid until the next call on the stream, or NULL.
  const char* (*get_last_error)(struct ArrowDeviceArrayStream* self);

  // Release the stream's own resources
  void (*release)(struct ArrowDeviceArrayStream* self);

  // Opaque producer-specific data
  void* private_data;
};

#endif  // ARROW_C_DEVICE_STREAM_INTERFACE

#ifndef ARROW_C_ASYNC_STREAM_INTERFACE
#define ARROW_C_ASYNC_STREAM_INTERFACE

// EXPERIMENTAL: a push-style stream with back-pressure.

struct ArrowAsyncTask {
  // Move the task's data into `out` (or, with out == NULL, let the producer
  // clean it up). Called exactly once per task. 0 or an errno code.
  int (*extract_data)(struct ArrowAsyncTask* self, struct ArrowDeviceArray* out);

  // Opaque producer-specific data
  void* private_data;
};

struct ArrowAsyncProducer {
  // The device type that every array from this producer is on
  ArrowDeviceType device_type;

  // Ask for n (> 0) more calls of on_next_task. Never calls a handler synchronously.
  void (*request)(struct ArrowAsyncProducer* self, int64_t n);
  // Ask the producer to stop eventually. Idempotent.
  void (*cancel)(struct ArrowAsyncProducer* self);

  // NULL, or metadata encoded as ArrowSchema.metadata, valid as long as this object
  const char* additional_metadata;
  // Opaque producer-specific data
  void* private_data;
};

struct ArrowAsyncDeviceStreamHandler {
  // consumer-specific handlers
  int (*on_schema)(struct ArrowAsyncDeviceStreamHandler* self,
                   struct ArrowSchema* stream_schema);
  int (*on_next_task)(struct ArrowAsyncDeviceStreamHandler* self,
                      struct ArrowAsyncTask* task, const char* metadata);
  void (*on_error)(struct ArrowAsyncDeviceStreamHandler* self, int code,
                   const char* message, const char* metadata);

  // release callback
  void (*release)(struct ArrowAsyncDeviceStreamHandler* self);

  // populated by the producer before it calls any callback
  struct ArrowAsyncProducer* producer;

  // opaque handler-specific data
  void* private_data;
};

#endif  // ARROW_C_ASYNC_STREAM_INTERFACE

#ifdef __cplusplus
}
#endif

#endif  // ARROW_C_DEVICE_H_INCLUDED
