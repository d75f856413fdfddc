// The struct layout tables of the ABI, taken from the compiler: built into the
// core (its asserts check every build) and, with ACD_LAYOUT_MAIN, as a small
// program that prints them as JSON. build.sh runs it compiled by emcc
// (wasm32) and by the native compiler (LP64) and generates the TypeScript
// layout tables from the output, so no offset is ever written by hand.

#include <stddef.h>
#include <stdio.h>

#include "arrow_c_device.h"

// X(struct, field, kind): kind says how TypeScript reads the field.
#define ACD_LAYOUT_FIELDS(X)                                              \
  X(ArrowSchema, format, ptr)                                             \
  X(ArrowSchema, name, ptr)                                               \
  X(ArrowSchema, metadata, ptr)                                           \
  X(ArrowSchema, flags, i64)                                              \
  X(ArrowSchema, n_children, i64)                                         \
  X(ArrowSchema, children, ptr)                                           \
  X(ArrowSchema, dictionary, ptr)                                         \
  X(ArrowSchema, release, fnptr)                                          \
  X(ArrowSchema, private_data, ptr)                                       \
  X(ArrowArray, length, i64)                                              \
  X(ArrowArray, null_count, i64)                                          \
  X(ArrowArray, offset, i64)                                              \
  X(ArrowArray, n_buffers, i64)                                           \
  X(ArrowArray, n_children, i64)                                          \
  X(ArrowArray, buffers, ptr)                                             \
  X(ArrowArray, children, ptr)                                            \
  X(ArrowArray, dictionary, ptr)                                          \
  X(ArrowArray, release, fnptr)                                           \
  X(ArrowArray, private_data, ptr)                                        \
  X(ArrowDeviceArray, array, struct)                                      \
  X(ArrowDeviceArray, device_id, i64)                                     \
  X(ArrowDeviceArray, device_type, i32)                                   \
  X(ArrowDeviceArray, sync_event, ptr)                                    \
  X(ArrowDeviceArray, reserved, i64x3)                                    \
  X(ArrowArrayStream, get_schema, fnptr)                                  \
  X(ArrowArrayStream, get_next, fnptr)                                    \
  X(ArrowArrayStream, get_last_error, fnptr)                              \
  X(ArrowArrayStream, release, fnptr)                                     \
  X(ArrowArrayStream, private_data, ptr)                                  \
  X(ArrowDeviceArrayStream, device_type, i32)                             \
  X(ArrowDeviceArrayStream, get_schema, fnptr)                            \
  X(ArrowDeviceArrayStream, get_next, fnptr)                              \
  X(ArrowDeviceArrayStream, get_last_error, fnptr)                        \
  X(ArrowDeviceArrayStream, release, fnptr)                               \
  X(ArrowDeviceArrayStream, private_data, ptr)                            \
  X(ArrowAsyncTask, extract_data, fnptr)                                  \
  X(ArrowAsyncTask, private_data, ptr)                                    \
  X(ArrowAsyncProducer, device_type, i32)                                 \
  X(ArrowAsyncProducer, request, fnptr)                                   \
  X(ArrowAsyncProducer, cancel, fnptr)                                    \
  X(ArrowAsyncProducer, additional_metadata, ptr)                         \
  X(ArrowAsyncProducer, private_data, ptr)                                \
  X(ArrowAsyncDeviceStreamHandler, on_schema, fnptr)                      \
  X(ArrowAsyncDeviceStreamHandler, on_next_task, fnptr)                   \
  X(ArrowAsyncDeviceStreamHandler, on_error, fnptr)                       \
  X(ArrowAsyncDeviceStreamHandler, release, fnptr)                        \
  X(ArrowAsyncDeviceStreamHandler, producer, ptr)                         \
  X(ArrowAsyncDeviceStreamHandler, private_data, ptr)

#define ACD_LAYOUT_STRUCTS(X)        \
  X(ArrowSchema)                     \
  X(ArrowArray)                      \
  X(ArrowDeviceArray)                \
  X(ArrowArrayStream)                \
  X(ArrowDeviceArrayStream)          \
  X(ArrowAsyncTask)                  \
  X(ArrowAsyncProducer)              \
  X(ArrowAsyncDeviceStreamHandler)

#define ACD_LAYOUT_CONSTANTS(X)      \
  X(ARROW_FLAG_DICTIONARY_ORDERED)   \
  X(ARROW_FLAG_NULLABLE)             \
  X(ARROW_FLAG_MAP_KEYS_SORTED)      \
  X(ARROW_DEVICE_CPU)                \
  X(ARROW_DEVICE_CUDA)               \
  X(ARROW_DEVICE_CUDA_HOST)          \
  X(ARROW_DEVICE_OPENCL)             \
  X(ARROW_DEVICE_VULKAN)             \
  X(ARROW_DEVICE_METAL)              \
  X(ARROW_DEVICE_VPI)                \
  X(ARROW_DEVICE_ROCM)               \
  X(ARROW_DEVICE_ROCM_HOST)          \
  X(ARROW_DEVICE_EXT_DEV)            \
  X(ARROW_DEVICE_CUDA_MANAGED)       \
  X(ARROW_DEVICE_ONEAPI)             \
  X(ARROW_DEVICE_WEBGPU)             \
  X(ARROW_DEVICE_HEXAGON)

// Each field's size matches its declared kind.
#define ACD_KIND_SIZE_ptr sizeof(void*)
#define ACD_KIND_SIZE_fnptr sizeof(void (*)(void))
#define ACD_KIND_SIZE_i64 8
#define ACD_KIND_SIZE_i32 4
#define ACD_KIND_SIZE_i64x3 24
#define ACD_KIND_SIZE_struct sizeof(struct ArrowArray)
#define ACD_ASSERT_KIND(s, f, k)                                          \
  _Static_assert(sizeof(((struct s*)0)->f) == ACD_KIND_SIZE_##k, #s "." #f " is not " #k);
ACD_LAYOUT_FIELDS(ACD_ASSERT_KIND)

// The sizes Arrow's own header has on the two pointer widths (see
// shared/spec/NOTES.md); a build on any other ABI fails here.
#define ACD_BY_WIDTH(w32, w64) (sizeof(void*) == 4 ? (w32) : (w64))
_Static_assert(sizeof(struct ArrowSchema) == ACD_BY_WIDTH(48, 72), "ArrowSchema size");
_Static_assert(sizeof(struct ArrowArray) == ACD_BY_WIDTH(64, 80), "ArrowArray size");
_Static_assert(sizeof(struct ArrowDeviceArray) == ACD_BY_WIDTH(104, 128), "ArrowDeviceArray size");
_Static_assert(offsetof(struct ArrowDeviceArray, device_id) == ACD_BY_WIDTH(64, 80), "device_id");
_Static_assert(offsetof(struct ArrowDeviceArray, device_type) == ACD_BY_WIDTH(72, 88), "device_type");
_Static_assert(offsetof(struct ArrowDeviceArray, sync_event) == ACD_BY_WIDTH(76, 96), "sync_event");
_Static_assert(offsetof(struct ArrowDeviceArray, reserved) == ACD_BY_WIDTH(80, 104), "reserved");
_Static_assert(sizeof(struct ArrowArrayStream) == ACD_BY_WIDTH(20, 40), "ArrowArrayStream size");
_Static_assert(sizeof(struct ArrowDeviceArrayStream) == ACD_BY_WIDTH(24, 48), "ArrowDeviceArrayStream size");
_Static_assert(sizeof(struct ArrowAsyncTask) == ACD_BY_WIDTH(8, 16), "ArrowAsyncTask size");
_Static_assert(sizeof(struct ArrowAsyncProducer) == ACD_BY_WIDTH(20, 40), "ArrowAsyncProducer size");
_Static_assert(offsetof(struct ArrowAsyncProducer, additional_metadata) == ACD_BY_WIDTH(12, 24),
               "ArrowAsyncProducer.additional_metadata (no release member, as in the header)");
_Static_assert(sizeof(struct ArrowAsyncDeviceStreamHandler) == ACD_BY_WIDTH(24, 48),
               "ArrowAsyncDeviceStreamHandler size");

#ifdef ACD_LAYOUT_MAIN

#include <string.h>

struct AcdLayoutField {
  const char* owner;
  const char* name;
  int offset;
  int size;
  const char* kind;
};

struct AcdLayoutStruct {
  const char* name;
  int size;
  int align;
};

#define ACD_FIELD_ROW(s, f, k) {#s, #f, (int)offsetof(struct s, f), (int)sizeof(((struct s*)0)->f), #k},
#define ACD_STRUCT_ROW(s) {#s, (int)sizeof(struct s), (int)_Alignof(struct s)},
#define ACD_CONSTANT_ROW(c) {#c, c},

static const struct AcdLayoutField kFields[] = {ACD_LAYOUT_FIELDS(ACD_FIELD_ROW)};
static const struct AcdLayoutStruct kStructs[] = {ACD_LAYOUT_STRUCTS(ACD_STRUCT_ROW)};
static const struct {
  const char* name;
  int value;
} kConstants[] = {ACD_LAYOUT_CONSTANTS(ACD_CONSTANT_ROW)};

#define ACD_COUNT(a) (sizeof(a) / sizeof((a)[0]))

int main(void) {
  printf("{\n  \"pointerSize\": %d,\n  \"structs\": {", (int)sizeof(void*));
  for (size_t s = 0; s < ACD_COUNT(kStructs); s++) {
    printf("%s\n    \"%s\": {\"size\": %d, \"align\": %d, \"fields\": {", s ? "," : "",
           kStructs[s].name, kStructs[s].size, kStructs[s].align);
    const char* sep = "";
    for (size_t f = 0; f < ACD_COUNT(kFields); f++) {
      if (strcmp(kFields[f].owner, kStructs[s].name) != 0) continue;
      printf("%s\n      \"%s\": {\"offset\": %d, \"size\": %d, \"kind\": \"%s\"}", sep,
             kFields[f].name, kFields[f].offset, kFields[f].size, kFields[f].kind);
      sep = ",";
    }
    printf("\n    }}");
  }
  printf("\n  },\n  \"constants\": {");
  for (size_t c = 0; c < ACD_COUNT(kConstants); c++) {
    printf("%s\n    \"%s\": %d", c ? "," : "", kConstants[c].name, kConstants[c].value);
  }
  printf("\n  }\n}\n");
  return 0;
}

#endif  // ACD_LAYOUT_MAIN
