// The passes over every slot that the TypeScript side makes before it hands
// an array to apache-arrow (ts/validate/raw-shape.ts): offsets ascending and
// inside what they index, union type ids declared and dense offsets inside
// their child, binary views inside their buffers. apache-arrow reads without bounds checks, so these run on
// every conversion the C validator did not check at FULL; over a buffer in
// the core's own memory they run here, where the loop costs a fraction of a
// typed array loop in JavaScript (1.5 to 2 ns a slot; issue 14, the nested
// set). Each returns the first slot that fails, for TypeScript to describe,
// and reads nothing but the slots it is given: the caller has checked that
// they lie inside the memory and are aligned for their width. Slots in
// another memory are copied into acd_scan_scratch a part at a time first
// (ts/abi/slot-scan.ts), which costs less than scanning them in JavaScript.

#include <string.h>

#include "validate/validate.h"

// The offsets scan for one width: blocks of 32 slots with no branch a slot
// (which the compiler turns into SIMD comparisons, build.sh), each folded into
// one flag; the block that has a bad slot, and the last few slots, one by one.
#define ACD_SCAN_OFFSETS(T, offsets, from, to, lim)                 \
  do {                                                              \
    if ((from) > (to)) return (from);                               \
    T previous = (offsets)[from];                                   \
    if (previous < 0 || previous > (lim)) return (from);            \
    /* previous >= 0 from here on: o < previous refuses o < 0. */  \
    int32_t i = (from) + 1;                                         \
    for (; (to) + 1 - i >= 32; i += 32) {                           \
      const T* p = (offsets) + i;                                   \
      T before = previous;                                          \
      int bad = 0;                                                  \
      for (int j = 0; j < 32; j++) {                                \
        bad |= (p[j] < before) | (p[j] > (lim));                    \
        before = p[j];                                              \
      }                                                             \
      if (bad) break;                                               \
      previous = before;                                            \
    }                                                               \
    for (; i <= (to); i++) {                                        \
      T o = (offsets)[i];                                           \
      if (o < previous || o > (lim)) return i;                      \
      previous = o;                                                 \
    }                                                               \
    return (to) + 1;                                                \
  } while (0)

int32_t AcdScanOffsets32(const int32_t* offsets, int32_t from, int32_t to, double limit) {
  // Offsets are 32-bit: a limit at or above INT32_MAX bounds none of them.
  int32_t lim = limit >= 2147483647.0 ? INT32_MAX : (int32_t)limit;
  ACD_SCAN_OFFSETS(int32_t, offsets, from, to, lim);
}

int32_t AcdScanOffsets64(const int64_t* offsets, int32_t from, int32_t to, double limit) {
  // Up to 2^53 a double is exact: beyond it no child or buffer of this memory reaches.
  int64_t lim = limit >= 9007199254740992.0 ? INT64_MAX : (int64_t)limit;
  ACD_SCAN_OFFSETS(int64_t, offsets, from, to, lim);
}

int32_t AcdScanViews(const int32_t* views, const uint8_t* validity, int32_t from, int32_t to,
                     const double* lengths, int32_t n_variadic) {
  for (int32_t i = from; i < to; i++) {
    const int32_t* view = views + 4 * (int64_t)i;
    int32_t size = view[0];
    if (size <= 12) continue;
    if (validity != NULL && ((validity[i >> 3] >> (i & 7)) & 1) == 0) continue;
    int32_t index = view[2];
    int32_t start = view[3];
    // (A double holds start + size exactly: both are 32-bit.)
    if (index < 0 || index >= n_variadic || start < 0 || (double)start + size > lengths[index]) return i;
  }
  return to;
}

struct AcdScanTable acd_scan_table;
_Alignas(16) uint8_t acd_scan_scratch[ACD_SCAN_SCRATCH_BYTES];

int32_t AcdScanUnion(const int8_t* ids, const int32_t* offsets, int32_t from, int32_t to,
                     const struct AcdScanTable* table) {
  // By type id (as a byte): the bound a dense offset must stay below, its
  // child's length (a later child winning a repeated id, as the TypeScript
  // scan's map does); 1 for a sparse union's declared ids, which are read with
  // offset 0; 0 for an undeclared id or a missing child, which nothing is
  // below. One table lookup and one unsigned comparison a slot (a negative
  // offset is a large unsigned one), over blocks without a branch a slot.
  int32_t n = table->n_children;
  if (n < 0 || n > ACD_SCAN_MAX_CHILDREN) return -1;
  uint32_t bound[256];
  memset(bound, 0, sizeof(bound));
  for (int32_t k = 0; k < n; k++) {
    double length = table->lengths[k];
    uint32_t b = 1;
    if (offsets != NULL) b = length <= 0 ? 0 : length >= 2147483648.0 ? 2147483648u : (uint32_t)length;
    bound[(uint8_t)table->type_ids[k]] = b;
  }
  int32_t i = from;
  if (offsets != NULL) {
    for (; to - i >= 32; i += 32) {
      uint32_t bad = 0;
      for (int j = 0; j < 32; j++) bad |= (uint32_t)offsets[i + j] >= bound[(uint8_t)ids[i + j]];
      if (bad) break;
    }
    for (; i < to; i++) {
      if ((uint32_t)offsets[i] >= bound[(uint8_t)ids[i]]) return i;
    }
  } else {
    for (; to - i >= 32; i += 32) {
      uint32_t bad = 0;
      for (int j = 0; j < 32; j++) bad |= bound[(uint8_t)ids[i + j]] == 0;
      if (bad) break;
    }
    for (; i < to; i++) {
      if (bound[(uint8_t)ids[i]] == 0) return i;
    }
  }
  return to;
}
