// libFuzzer target on the C validator (csrc/validate/, csrc/model/,
// csrc/device/array.c), built natively with ASan and UBSan by
// scripts/fuzz/native.sh. The input is a struct tree image (image.h); it is
// validated at every level through the public entry points of the csrc/ headers
// only. Any crash, sanitizer report or unterminated error message is a
// finding. Reads are bounded by AcdAddressRangeValid, which the build wraps
// (-Wl,--wrap) to mean "inside the input buffer", like the wasm memory bound.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream.h"
#include "image.h"

static const unsigned char* image_base;
static size_t image_size;

int __real_AcdAddressRangeValid(const void* ptr, int64_t size);

int __wrap_AcdAddressRangeValid(const void* ptr, int64_t size) {
  if (!__real_AcdAddressRangeValid(ptr, size)) return 0;
  uintptr_t p = (uintptr_t)ptr, base = (uintptr_t)image_base;
  if (p < base || p - base > image_size) return 0;
  return (uint64_t)size <= image_size - (p - base);
}

// Every 8-byte word relocated so far (a word is relocated at most once).
static uint8_t* relocated;

static int in_image(uint64_t off, uint64_t size) {
  return off != 0 && off <= image_size && size <= image_size - off;
}

// Turns the offset stored at `at` into a pointer; returns the offset it held
// (0 when NULL, outside, or already relocated).
static uint64_t relocate(uint64_t at) {
  if (!in_image(at, sizeof(uint64_t)) || relocated[at]) return 0;
  relocated[at] = 1;
  uint64_t off;
  memcpy(&off, image_base + at, sizeof(off));
  if (off == 0) return 0;
  uintptr_t ptr = (uintptr_t)image_base + (uintptr_t)off;
  memcpy((unsigned char*)image_base + at, &ptr, sizeof(ptr));
  return off;
}

#define FIELD(type, base, field) ((base) + offsetof(type, field))

static void relocate_schema(uint64_t at, int depth) {
  if (depth > 80 || !in_image(at, sizeof(struct ArrowSchema))) return;
  relocate(FIELD(struct ArrowSchema, at, format));
  relocate(FIELD(struct ArrowSchema, at, name));
  relocate(FIELD(struct ArrowSchema, at, metadata));
  relocate(FIELD(struct ArrowSchema, at, release));
  relocate(FIELD(struct ArrowSchema, at, private_data));
  uint64_t children = relocate(FIELD(struct ArrowSchema, at, children));
  uint64_t dictionary = relocate(FIELD(struct ArrowSchema, at, dictionary));
  int64_t n;
  memcpy(&n, image_base + FIELD(struct ArrowSchema, at, n_children), sizeof(n));
  for (int64_t i = 0; children != 0 && i < n && i < 64; i++) {
    relocate_schema(relocate(children + (uint64_t)i * sizeof(void*)), depth + 1);
  }
  relocate_schema(dictionary, depth + 1);
}

static void relocate_array(uint64_t at, int depth) {
  if (depth > 80 || !in_image(at, sizeof(struct ArrowArray))) return;
  relocate(FIELD(struct ArrowArray, at, release));
  relocate(FIELD(struct ArrowArray, at, private_data));
  uint64_t buffers = relocate(FIELD(struct ArrowArray, at, buffers));
  uint64_t children = relocate(FIELD(struct ArrowArray, at, children));
  uint64_t dictionary = relocate(FIELD(struct ArrowArray, at, dictionary));
  int64_t n_buffers, n_children;
  memcpy(&n_buffers, image_base + FIELD(struct ArrowArray, at, n_buffers), sizeof(n_buffers));
  memcpy(&n_children, image_base + FIELD(struct ArrowArray, at, n_children), sizeof(n_children));
  for (int64_t i = 0; buffers != 0 && i < n_buffers && i < 64; i++) relocate(buffers + (uint64_t)i * sizeof(void*));
  for (int64_t i = 0; children != 0 && i < n_children && i < 64; i++) {
    relocate_array(relocate(children + (uint64_t)i * sizeof(void*)), depth + 1);
  }
  relocate_array(dictionary, depth + 1);
}

static int verbose = -1;

static void check_message(int code, const struct AcdError* error) {
  // A failure has a message, always NUL-terminated within the buffer.
  if (code != ACD_OK && (memchr(error->message, 0, sizeof(error->message)) == NULL || error->message[0] == 0)) abort();
  // ACD_FUZZ_VERBOSE=1: print each result (to check that the seeds are valid).
  if (verbose < 0) verbose = getenv("ACD_FUZZ_VERBOSE") != NULL;
  if (verbose) fprintf(stderr, "[validate] %d %s\n", code, code == ACD_OK ? "ok" : error->message);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  struct AcdFuzzHeader header;
  if (size < sizeof(header) || size > (1u << 20)) return 0;
  memcpy(&header, data, sizeof(header));
  // An exact-size copy: ASan reports any read past the input.
  unsigned char* buffer = malloc(size);
  relocated = calloc(size, 1);
  if (buffer == NULL || relocated == NULL) abort();
  memcpy(buffer, data, size);
  image_base = buffer;
  image_size = size;

  const int device = (header.flags & ACD_FUZZ_DEVICE_ARRAY) != 0;
  relocate_schema(header.schema, 0);
  relocate_array(device ? FIELD(struct ArrowDeviceArray, header.array, array) : header.array, 0);
  if (device && in_image(header.array, sizeof(struct ArrowDeviceArray))) {
    relocate(FIELD(struct ArrowDeviceArray, header.array, sync_event));
  }
  const struct ArrowSchema* schema =
      in_image(header.schema, 1) ? (const struct ArrowSchema*)(buffer + header.schema) : NULL;
  const void* root = in_image(header.array, 1) ? (const void*)(buffer + header.array) : NULL;
  const struct ArrowArray* array =
      root == NULL ? NULL : (const struct ArrowArray*)root;  // `array` is at offset 0 of a device array

  struct AcdError error;
  int schema_code = AcdSchemaValidate(schema, &error);
  check_message(schema_code, &error);
  for (int level = ACD_VALIDATION_NONE; level <= ACD_VALIDATION_FULL; level++) {
    int code = AcdArrayValidate(schema, array, (enum AcdValidationLevel)level, &error);
    check_message(code, &error);
    if (schema_code == ACD_OK) {
      code = AcdArrayValidateWithValidSchema(schema, array, (enum AcdValidationLevel)level, &error);
      check_message(code, &error);
    }
  }
  if (device && schema_code == ACD_OK) {
    check_message(AcdDeviceArrayValidate(schema, (const struct ArrowDeviceArray*)root, &error), &error);
  }
  image_base = NULL;
  free(relocated);
  free(buffer);
  return 0;
}
