// FULL validation's fast passes (content.c tries each before its slot-by-slot
// loop): over buffers in this memory, with the scans of slots.c, they accept
// an array whose every slot is certainly right, and say nothing otherwise.
// Each only ever accepts what the loop would: false sends the array to the
// loop, which decides and names the slot.

#include <stdint.h>

#include "validate/validate.h"

// Whether the offsets certainly never decrease and stay within [first,
// last], and with utf8 every slot's bytes are UTF-8: true only when the
// buffers are in this memory, the offsets pass the slot scan (slots.c: SIMD
// blocks), the bytes from the first offset to the last are UTF-8 as a whole
// and every offset inside them starts a character (so that each slot is
// whole characters of valid UTF-8). False says nothing: the slot-by-slot
// loop of content.c then decides, and names the slot (invalid bytes under a
// null slot, for one, fail the whole but not that loop).
int AcdOffsetsContentFast(const struct AcdArrayNode* node, int width, int utf8) {
  const struct ArrowArray* a = node->array;
  const uint8_t* offsets = (const uint8_t*)a->buffers[1];
  int64_t first = a->offset;
  int64_t last = node->end;
  if (last >= INT32_MAX || ((uintptr_t)offsets % (uintptr_t)width) != 0 ||
      AcdAddressInForeignWindow((uintptr_t)(offsets + first * width), (last - first + 1) * width)) {
    return 0;
  }
  double limit = (double)node->last_offset;
  int32_t bad = width == 4 ? AcdScanOffsets32((const int32_t*)offsets, (int32_t)first, (int32_t)last, limit)
                           : AcdScanOffsets64((const int64_t*)offsets, (int32_t)first, (int32_t)last, limit);
  if (bad != (int32_t)last + 1) return 0;
  if (!utf8) return 1;
  int64_t from = AcdReadInt(offsets, first, width);
  int64_t to = node->last_offset;
  if (to == from) return 1;
  const uint8_t* data = (const uint8_t*)a->buffers[2];
  if (AcdAddressInForeignWindow((uintptr_t)(data + from), to - from) || AcdUtf8Validate(data + from, to - from) >= 0) {
    return 0;
  }
  for (int64_t j = first + 1; j < last; j++) {
    int64_t at = width == 4 ? ((const int32_t*)offsets)[j] : ((const int64_t*)offsets)[j];
    // A continuation byte (10xxxxxx) starts no character.
    if (at < to && (data[at] & 0xC0) == 0x80) return 0;
  }
  return 1;
}

// Whether every index, of a valid slot or not, certainly lies in the
// dictionary: only for indices in this memory, aligned, scanned by slots.c.
// False says nothing: the loop of content.c decides (an index under a null
// slot may be anything).
int AcdIndicesFast(const struct AcdArrayNode* node, int width, int is_unsigned, int64_t length) {
  const struct ArrowArray* a = node->array;
  const uint8_t* indices = (const uint8_t*)a->buffers[1];
  if (node->end >= INT32_MAX || node->end <= a->offset || ((uintptr_t)indices % (uintptr_t)width) != 0 ||
      AcdAddressInForeignWindow((uintptr_t)(indices + a->offset * width), (node->end - a->offset) * width)) {
    return 0;
  }
  return AcdScanIndices(indices, width, is_unsigned, (int32_t)a->offset, (int32_t)node->end, (double)length) ==
         (int32_t)node->end;
}
