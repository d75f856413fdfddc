// The input format of the native validator fuzzer (validate_fuzz.c) and its
// seed generator (gen_seeds.c): a struct tree laid out in one byte buffer, in
// the native (LP64) layout, every pointer field holding an offset from the
// start of the buffer (0 is NULL). The harness relocates the pointer fields
// it reaches from the roots (each word once, so DAGs and cycles stay as the
// input has them) and hands the roots to the validator. Pointers that land
// outside the buffer stay outside it, and the validator's range check is
// bounded by the buffer, as the wasm memory bounds it in the real build.
#ifndef ACD_FUZZ_IMAGE_H_INCLUDED
#define ACD_FUZZ_IMAGE_H_INCLUDED

#include <stdint.h>

// The array root is an ArrowDeviceArray (else an ArrowArray).
#define ACD_FUZZ_DEVICE_ARRAY 1u

struct AcdFuzzHeader {
  uint64_t schema;  // offset of the root ArrowSchema
  uint64_t array;   // offset of the root ArrowArray or ArrowDeviceArray
  uint64_t flags;   // ACD_FUZZ_*
};

#endif
