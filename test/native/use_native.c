// A native program that uses the C core built as a library by
// scripts/native/build.sh (linked statically or against the shared library):
// its validator on a struct tree made here, and a simulated device's memory
// (allocate, copy in, a read through the device window refused, copy out).
// Prints "native: N passed, M failed" (test/native.test.ts reads it).

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "device/device.h"

static int passed = 0;
static int failed = 0;

#define CHECK(cond)                                                    \
  do {                                                                 \
    if (cond) {                                                        \
      passed++;                                                        \
    } else {                                                           \
      failed++;                                                        \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                  \
  } while (0)

static void NoRelease(struct ArrowSchema* s) { s->release = NULL; }
static void NoArrayRelease(struct ArrowArray* a) { a->release = NULL; }

int main(void) {
  struct AcdError error;
  // An int32 column of 4 values, the third null, from slot 1 on.
  int32_t values[5] = {0, 10, 20, 30, 40};
  uint8_t validity[1] = {0x1b};  // 11011: slot 2 is null
  const void* buffers[2] = {validity, values};
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  schema.format = "i";
  schema.name = "x";
  schema.flags = ARROW_FLAG_NULLABLE;
  schema.release = NoRelease;
  struct ArrowArray array;
  memset(&array, 0, sizeof array);
  array.length = 4;
  array.offset = 1;
  array.null_count = 1;
  array.n_buffers = 2;
  array.buffers = buffers;
  array.release = NoArrayRelease;

  CHECK(AcdSchemaValidate(&schema, &error) == ACD_OK);
  CHECK(AcdArrayValidate(&schema, &array, ACD_VALIDATION_FULL, &error) == ACD_OK);
  array.null_count = 0;
  CHECK(AcdArrayValidate(&schema, &array, ACD_VALIDATION_FULL, &error) == EINVAL);
  CHECK(strstr(error.message, "root.null_count: expected 1") != NULL);
  array.null_count = 1;
  array.n_buffers = 3;
  CHECK(AcdArrayValidate(&schema, &array, ACD_VALIDATION_MINIMAL, &error) == EINVAL);
  CHECK(strstr(error.message, "n_buffers") != NULL);
  printf("native: validator says: %s\n", error.message);
  array.n_buffers = 2;

  // A simulated CUDA device: its memory is not host memory.
  struct AcdDevice* cuda = NULL;
  CHECK(AcdDeviceResolve(ARROW_DEVICE_CUDA, 1, &cuda, &error) == ACD_OK);
  void* on_device = NULL;
  CHECK(AcdDeviceAllocate(cuda, sizeof values, &on_device, &error) == ACD_OK);
  CHECK(AcdDeviceCopy(AcdDeviceCpu(), values, cuda, on_device, sizeof values, &error) == ACD_OK);
  buffers[1] = on_device;
  CHECK(AcdArrayValidate(&schema, &array, ACD_VALIDATION_DEFAULT, &error) == EINVAL);
  printf("native: a host read of device memory: %s\n", error.message);
  int32_t back[5] = {0};
  CHECK(AcdDeviceCopy(cuda, on_device, AcdDeviceCpu(), back, sizeof back, &error) == ACD_OK);
  CHECK(memcmp(back, values, sizeof values) == 0);
  CHECK(AcdDeviceFree(cuda, on_device, &error) == ACD_OK);
  printf("native: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
