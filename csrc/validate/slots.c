// The passes over every slot that the TypeScript side makes before it hands
// an array to apache-arrow (ts/validate/raw-shape.ts): offsets ascending and
// inside what they index, union type ids declared and dense offsets inside
// their child, binary views inside their buffers. apache-arrow reads without
// bounds checks, so these run on every conversion the C validator did not
// check at FULL; over a buffer in the core's own memory they run here, where
// they cost a fraction of a typed array loop in JavaScript (1.5 to 2 ns a
// slot; issue 14, the nested set): 0.10 ns a 32-bit offset, 0.17 a dense
// union slot, 0.05 a sparse one (2^20 slots in cache), 1.07 a binary view
// (16 MB of them, from memory). Each returns the first slot that fails, for
// TypeScript to describe, and reads nothing but the slots it is given: the
// caller has checked that they lie inside the memory and are aligned for their
// width. Slots in another memory are copied into acd_scan_scratch a part at a
// time first (ts/abi/slot-scan.ts), which costs less than scanning them in
// JavaScript. FULL validation's fast passes (content_fast.c) use the offsets
// scans and the dictionary indices scan here too.

#include <string.h>

#include "validate/validate.h"

// Built with wasm SIMD (build.sh), the blocks below use its instructions
// directly; anywhere else (the native library, the architecture check) the
// same blocks are plain loops without a branch a slot.
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define ACD_SCAN_SIMD 1
#endif

// The first slot from i (i > from: the slot before it is read) at which blocks
// of 32 offsets stop being good: in a good block every offset is at least the
// one before it and the last is at most lim. Ascending from a first offset in
// [0, lim], no offset of a good block can be outside it, so one comparison with
// lim a block suffices. One function per width: T, its SIMD "less than" and
// its lanes in a v128.
#ifdef ACD_SCAN_SIMD
#define ACD_SCAN_BLOCK_BAD(LT, LANES)                                                     \
  v128_t bad = LT(wasm_v128_load(p), wasm_v128_load(p - 1));                              \
  for (int j = (LANES); j < 32; j += (LANES)) {                                           \
    bad = wasm_v128_or(bad, LT(wasm_v128_load(p + j), wasm_v128_load(p + j - 1)));        \
  }                                                                                       \
  if (wasm_v128_any_true(bad) | (p[31] > lim)) break;
#else
#define ACD_SCAN_BLOCK_BAD(LT, LANES)                      \
  int bad = p[31] > lim;                                   \
  for (int j = 0; j < 32; j++) bad |= p[j] < p[j - 1];     \
  if (bad) break;
#endif
#define ACD_SCAN_BLOCKS(NAME, T, LT, LANES)                               \
  static int32_t NAME(const T* offsets, int32_t i, int32_t to, T lim) {  \
    for (; to + 1 - i >= 32; i += 32) {                                   \
      const T* p = offsets + i;                                           \
      ACD_SCAN_BLOCK_BAD(LT, LANES)                                       \
    }                                                                     \
    return i;                                                             \
  }
ACD_SCAN_BLOCKS(AcdScanBlocks32, int32_t, wasm_i32x4_lt, 4)
ACD_SCAN_BLOCKS(AcdScanBlocks64, int64_t, wasm_i64x2_lt, 2)

// The offsets scan for one width: the first offset checked alone, then the
// good blocks skipped, then the rest (from the block with a bad slot, if any)
// one by one.
#define ACD_SCAN_OFFSETS(T, BLOCKS, offsets, from, to, lim)         \
  do {                                                              \
    if ((from) > (to)) return (from);                               \
    T first = (offsets)[from];                                      \
    if (first < 0 || first > (lim)) return (from);                  \
    int32_t i = BLOCKS((offsets), (from) + 1, (to), (lim));         \
    T previous = (offsets)[i - 1];                                  \
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
  ACD_SCAN_OFFSETS(int32_t, AcdScanBlocks32, offsets, from, to, lim);
}

int32_t AcdScanOffsets64(const int64_t* offsets, int32_t from, int32_t to, double limit) {
  // Up to 2^53 a double is exact: beyond it no child or buffer of this memory reaches.
  int64_t lim = limit >= 9007199254740992.0 ? INT64_MAX : (int64_t)limit;
  ACD_SCAN_OFFSETS(int64_t, AcdScanBlocks64, offsets, from, to, lim);
}

// Whether view i (16 bytes: size, prefix, buffer index, offset) is out of
// its buffer: not inline (size over 12), valid (its bit set, or no bitmap),
// and its index or bytes outside the n_variadic buffers' lengths.
static inline int AcdScanViewBad(const int32_t* views, const uint8_t* validity, int32_t i, const double* lengths,
                                 int32_t n_variadic) {
  const int32_t* view = views + 4 * (int64_t)i;
  int32_t size = view[0];
  if (size <= 12) return 0;
  if (validity != NULL && ((validity[i >> 3] >> (i & 7)) & 1) == 0) return 0;
  int32_t index = view[2];
  int32_t start = view[3];
  // (A double holds start + size exactly: both are 32-bit.)
  return index < 0 || index >= n_variadic || start < 0 || (double)start + size > lengths[index];
}

// The first slot from i (at a byte of the bitmap: i a multiple of 8) at which
// good blocks of 8 views stop, for views over 1 to 4 buffers: each block's
// views transposed into lanes of sizes, indices and offsets, its byte of the
// bitmap spread over the lanes, each lane's buffer length chosen by its
// index. start + size cannot wrap as unsigned: both are below 2^31 where
// start is not negative, and a negative start is wrong anyway.
static int32_t AcdScanViewBlocks(const int32_t* views, const uint8_t* validity, int32_t i, int32_t to,
                                 const double* lengths, int32_t n_variadic) {
#ifdef ACD_SCAN_SIMD
  if (n_variadic < 1 || n_variadic > 4) return i;
  int32_t bounds[4] = {0, 0, 0, 0};
  for (int32_t k = 0; k < n_variadic; k++) {
    double length = lengths[k];
    bounds[k] = (int32_t)(length <= 0 ? 0u : length >= 4294967295.0 ? 4294967295u : (uint32_t)length);
  }
  const v128_t bound0 = wasm_i32x4_splat(bounds[0]), bound1 = wasm_i32x4_splat(bounds[1]);
  const v128_t bound2 = wasm_i32x4_splat(bounds[2]), bound3 = wasm_i32x4_splat(bounds[3]);
  const v128_t buffers = wasm_i32x4_splat(n_variadic);
  const v128_t zero = wasm_i32x4_splat(0);
  const v128_t bits[2] = {wasm_i32x4_make(1, 2, 4, 8), wasm_i32x4_make(16, 32, 64, 128)};
  for (; to - i >= 8; i += 8) {
    v128_t bad = zero;
    v128_t byte = wasm_i32x4_splat(validity == NULL ? 255 : validity[i >> 3]);
    for (int half = 0; half < 2; half++) {
      const int32_t* p = views + 4 * (int64_t)(i + 4 * half);
      v128_t a = wasm_v128_load(p), b = wasm_v128_load(p + 4), c = wasm_v128_load(p + 8), d = wasm_v128_load(p + 12);
      v128_t ab = wasm_i32x4_shuffle(a, b, 0, 4, 2, 6), cd = wasm_i32x4_shuffle(c, d, 0, 4, 2, 6);
      v128_t size = wasm_i32x4_shuffle(ab, cd, 0, 1, 4, 5);
      v128_t index = wasm_i32x4_shuffle(ab, cd, 2, 3, 6, 7);
      v128_t start = wasm_i32x4_shuffle(wasm_i32x4_shuffle(a, b, 3, 7, 3, 7), wasm_i32x4_shuffle(c, d, 3, 7, 3, 7), 0, 1, 4, 5);
      v128_t checked = wasm_v128_and(wasm_i32x4_gt(size, wasm_i32x4_splat(12)), wasm_i32x4_ne(wasm_v128_and(byte, bits[half]), zero));
      v128_t bound = wasm_v128_bitselect(
          bound0,
          wasm_v128_bitselect(bound1, wasm_v128_bitselect(bound2, bound3, wasm_i32x4_eq(index, wasm_i32x4_splat(2))),
                              wasm_i32x4_eq(index, wasm_i32x4_splat(1))),
          wasm_i32x4_eq(index, zero));
      v128_t wrong = wasm_v128_or(wasm_u32x4_ge(index, buffers), wasm_i32x4_lt(start, zero));
      wrong = wasm_v128_or(wrong, wasm_u32x4_gt(wasm_i32x4_add(start, size), bound));
      bad = wasm_v128_or(bad, wasm_v128_and(checked, wrong));
    }
    if (wasm_v128_any_true(bad)) break;
  }
#else
  (void)views;
  (void)validity;
  (void)to;
  (void)lengths;
  (void)n_variadic;
#endif
  return i;
}

int32_t AcdScanViews(const int32_t* views, const uint8_t* validity, int32_t from, int32_t to,
                     const double* lengths, int32_t n_variadic) {
  int32_t i = from;
  // One by one up to a slot at a byte of the bitmap, then the good blocks skipped, then one by one.
  for (; i < to && (i & 7) != 0; i++) {
    if (AcdScanViewBad(views, validity, i, lengths, n_variadic)) return i;
  }
  if (i < to) i = AcdScanViewBlocks(views, validity, i, to, lengths, n_variadic);
  for (; i < to; i++) {
    if (AcdScanViewBad(views, validity, i, lengths, n_variadic)) return i;
  }
  return to;
}

// The indices scan for one element type: blocks of 32 slots with one
// unsigned comparison each and no branch (the compiler makes SIMD of them),
// then slot by slot from the block with a bad one. U is the unsigned type
// of the comparison: a negative index of a signed type becomes a large one.
#define ACD_SCAN_INDICES(T, U, p, from, to, bound)                   \
  do {                                                               \
    int32_t i = (from);                                              \
    for (; (to) - i >= 32; i += 32) {                                \
      uint32_t bad = 0;                                              \
      for (int j = 0; j < 32; j++) bad |= (U)(p)[i + j] >= (bound);  \
      if (bad) break;                                                \
    }                                                                \
    for (; i < (to); i++) {                                          \
      if ((U)(p)[i] >= (bound)) return i;                            \
    }                                                                \
    return (to);                                                     \
  } while (0)

int32_t AcdScanIndices(const void* indices, int width, int is_unsigned, int32_t from, int32_t to, double length) {
  if (length <= 0) return from < to ? from : to;
  // 32-bit comparisons below 64-bit indices: a signed index is in [0, length)
  // when it is below min(length, 2^31) as unsigned; an unsigned one below
  // length, all of them when length passes 2^32 - 1.
  uint32_t bound32 = length >= (is_unsigned ? 4294967295.0 : 2147483648.0) ? (is_unsigned ? UINT32_MAX : 2147483648u)
                                                                           : (uint32_t)length;
  if (is_unsigned && width < 8 && length > 4294967295.0) return to;
  switch (width * (is_unsigned ? -1 : 1)) {
    case 1: ACD_SCAN_INDICES(int8_t, uint32_t, (const int8_t*)indices, from, to, bound32);
    case -1: ACD_SCAN_INDICES(uint8_t, uint32_t, (const uint8_t*)indices, from, to, bound32);
    case 2: ACD_SCAN_INDICES(int16_t, uint32_t, (const int16_t*)indices, from, to, bound32);
    case -2: ACD_SCAN_INDICES(uint16_t, uint32_t, (const uint16_t*)indices, from, to, bound32);
    case 4: ACD_SCAN_INDICES(int32_t, uint32_t, (const int32_t*)indices, from, to, bound32);
    case -4: ACD_SCAN_INDICES(uint32_t, uint32_t, (const uint32_t*)indices, from, to, bound32);
    case 8:
    case -8: {
      // Up to 2^53 a double is exact: no dictionary of this memory is longer.
      uint64_t bound64 = length >= 9007199254740992.0 ? UINT64_MAX : (uint64_t)length;
      ACD_SCAN_INDICES(uint64_t, uint64_t, (const uint64_t*)indices, from, to, bound64);
    }
    default:
      return from;
  }
}

struct AcdScanTable acd_scan_table;
_Alignas(16) uint8_t acd_scan_scratch[ACD_SCAN_SCRATCH_BYTES];

// The first slot from i on at which good blocks of 16 union slots stop, when
// every declared type id is below 16: the bound of each slot's id is looked
// up 16 at a time by byte shuffles (one per byte of the 32-bit bounds, an
// undeclared id, 16 or above or negative, getting 0), then compared with its
// offset (dense) or with 0 (sparse). Elsewhere, or with larger ids, blocks of
// 32 slots with one table lookup each.
static int32_t AcdScanUnionBlocks(const int8_t* ids, const int32_t* offsets, int32_t i, int32_t to,
                                  const uint32_t* bound, int small) {
#ifdef ACD_SCAN_SIMD
  if (small) {
    uint8_t bytes[4][16];
    for (int k = 0; k < 16; k++) {
      for (int b = 0; b < 4; b++) bytes[b][k] = (uint8_t)(bound[k] >> (8 * b));
    }
    v128_t t0 = wasm_v128_load(bytes[0]), t1 = wasm_v128_load(bytes[1]);
    v128_t t2 = wasm_v128_load(bytes[2]), t3 = wasm_v128_load(bytes[3]);
    if (offsets == NULL) {
      // Sparse: a declared id's bound is 1, so its low byte is not 0.
      for (; to - i >= 16; i += 16) {
        if (!wasm_i8x16_all_true(wasm_i8x16_swizzle(t0, wasm_v128_load(ids + i)))) break;
      }
      return i;
    }
    for (; to - i >= 16; i += 16) {
      v128_t id = wasm_v128_load(ids + i);
      v128_t x0 = wasm_i8x16_swizzle(t0, id), x1 = wasm_i8x16_swizzle(t1, id);
      v128_t x2 = wasm_i8x16_swizzle(t2, id), x3 = wasm_i8x16_swizzle(t3, id);
      // The bytes of slot k's bound, b0 b1 b2 b3, into lane k of four i32x4.
      v128_t low0 = wasm_i8x16_shuffle(x0, x1, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      v128_t low1 = wasm_i8x16_shuffle(x0, x1, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      v128_t high0 = wasm_i8x16_shuffle(x2, x3, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
      v128_t high1 = wasm_i8x16_shuffle(x2, x3, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
      const int32_t* o = offsets + i;
      // A negative offset is a large unsigned one: at or above any bound.
      v128_t bad = wasm_u32x4_ge(wasm_v128_load(o), wasm_i16x8_shuffle(low0, high0, 0, 8, 1, 9, 2, 10, 3, 11));
      bad = wasm_v128_or(bad, wasm_u32x4_ge(wasm_v128_load(o + 4), wasm_i16x8_shuffle(low0, high0, 4, 12, 5, 13, 6, 14, 7, 15)));
      bad = wasm_v128_or(bad, wasm_u32x4_ge(wasm_v128_load(o + 8), wasm_i16x8_shuffle(low1, high1, 0, 8, 1, 9, 2, 10, 3, 11)));
      bad = wasm_v128_or(bad, wasm_u32x4_ge(wasm_v128_load(o + 12), wasm_i16x8_shuffle(low1, high1, 4, 12, 5, 13, 6, 14, 7, 15)));
      if (wasm_v128_any_true(bad)) break;
    }
    return i;
  }
#else
  (void)small;
#endif
  if (offsets != NULL) {
    for (; to - i >= 32; i += 32) {
      uint32_t bad = 0;
      for (int j = 0; j < 32; j++) bad |= (uint32_t)offsets[i + j] >= bound[(uint8_t)ids[i + j]];
      if (bad) break;
    }
  } else {
    for (; to - i >= 32; i += 32) {
      uint32_t bad = 0;
      for (int j = 0; j < 32; j++) bad |= bound[(uint8_t)ids[i + j]] == 0;
      if (bad) break;
    }
  }
  return i;
}

int32_t AcdScanUnion(const int8_t* ids, const int32_t* offsets, int32_t from, int32_t to,
                     const struct AcdScanTable* table) {
  // By type id (as a byte): the bound a dense offset must stay below, its
  // child's length (a later child winning a repeated id, as the TypeScript
  // scan's map does); 1 for a sparse union's declared ids, which are read with
  // offset 0; 0 for an undeclared id or a missing child, which nothing is
  // below. One unsigned comparison a slot (a negative offset is a large
  // unsigned one), over blocks without a branch a slot, then slot by slot
  // from the block with a bad one.
  int32_t n = table->n_children;
  if (n < 0 || n > ACD_SCAN_MAX_CHILDREN) return -1;
  uint32_t bound[256];
  memset(bound, 0, sizeof(bound));
  int small = 1;
  for (int32_t k = 0; k < n; k++) {
    double length = table->lengths[k];
    uint32_t b = 1;
    if (offsets != NULL) b = length <= 0 ? 0 : length >= 2147483648.0 ? 2147483648u : (uint32_t)length;
    bound[(uint8_t)table->type_ids[k]] = b;
    if ((uint8_t)table->type_ids[k] >= 16) small = 0;
  }
  int32_t i = AcdScanUnionBlocks(ids, offsets, from, to, bound, small);
  if (offsets != NULL) {
    for (; i < to; i++) {
      if ((uint32_t)offsets[i] >= bound[(uint8_t)ids[i]]) return i;
    }
  } else {
    for (; i < to; i++) {
      if (bound[(uint8_t)ids[i]] == 0) return i;
    }
  }
  return to;
}
