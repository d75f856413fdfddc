// FULL validation: every offset, view, type id and dictionary index
// that a reader would follow, plus UTF-8, null counts, and the values Arrow
// C++ rejects at full validation (date64 not in whole days, decimals wider
// than their precision). Runs after the
// array's buffers were checked readable for their sizes (DEFAULT), so reads
// within offset + length are safe; anything read through a value (an offset,
// a view) is bounds-checked here before it is followed.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "validate/validate.h"

static int AcdSlotValid(const struct AcdArrayNode* node, int64_t i) {
  return node->validity == NULL || ((AcdLoadU8(node->validity + (i >> 3)) >> (i & 7)) & 1);
}

static int64_t AcdPopcount8(uint8_t x) {
  x = (uint8_t)(x - ((x >> 1) & 0x55));
  x = (uint8_t)((x & 0x33) + ((x >> 2) & 0x33));
  return (x + (x >> 4)) & 0x0F;
}

static int AcdValidateNullCount(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  if (node->validity == NULL || a->null_count < 0) return ACD_OK;

  int64_t valid = 0;
  int64_t i = a->offset;
  for (; i < node->end && (i & 7) != 0; i++) valid += AcdSlotValid(node, i);
  for (; node->end - i >= 8; i += 8) valid += AcdPopcount8(AcdLoadU8(node->validity + (i >> 3)));
  for (; i < node->end; i++) valid += AcdSlotValid(node, i);

  int64_t nulls = a->length - valid;
  if (nulls != a->null_count) {
    return AcdValidationFail(v, "null_count", EINVAL,
                             "expected %" PRId64 " (the 0 bits of the validity bitmap), found "
                             "%" PRId64,
                             nulls, a->null_count);
  }
  return ACD_OK;
}

// Offsets never decrease and stay within [first, last]; with utf8, every
// valid slot's bytes are UTF-8.
static int AcdValidateOffsetsContent(struct AcdValidation* v, const struct AcdArrayNode* node,
                                     int width, int utf8) {
  const struct ArrowArray* a = node->array;
  if (a->length == 0) return ACD_OK;
  const void* offsets = a->buffers[1];
  const uint8_t* data = utf8 ? (const uint8_t*)a->buffers[2] : NULL;
  if (AcdOffsetsContentFast(node, width, utf8)) return ACD_OK;

  int64_t start = AcdReadInt(offsets, a->offset, width);
  for (int64_t j = a->offset; j < node->end; j++) {
    int64_t stop = AcdReadInt(offsets, j + 1, width);
    if (stop < start || stop > node->last_offset) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "expected offsets[%" PRId64 "] in %" PRId64 "..%" PRId64
                               " (offsets never decrease and end at the last one), found %" PRId64,
                               j + 1, start, node->last_offset, stop);
    }
    // (An empty value may sit on a NULL data buffer: no pointer arithmetic.)
    if (utf8 && stop > start && AcdSlotValid(node, j)) {
      int64_t bad = AcdUtf8ValidateAt(data + start, stop - start);
      if (bad >= 0) {
        return AcdValidationFail(v, "buffers[2]", EINVAL,
                                 "expected UTF-8 in slot %" PRId64 " (bytes %" PRId64
                                 "..%" PRId64 "), found an invalid sequence at byte %" PRId64,
                                 j - a->offset, start, stop, start + bad);
      }
    }
    start = stop;
  }
  return ACD_OK;
}

// Every list view, null or not, lies within the child.
static int AcdValidateListViews(struct AcdValidation* v, const struct AcdArrayNode* node,
                                int width) {
  const struct ArrowArray* a = node->array;
  int64_t child_length = a->children[0]->length;
  for (int64_t i = a->offset; i < node->end; i++) {
    int64_t offset = AcdReadInt(a->buffers[1], i, width);
    int64_t size = AcdReadInt(a->buffers[2], i, width);
    if (offset < 0 || size < 0 || offset > child_length - size) {
      return AcdValidationFail(v, NULL, EINVAL,
                               "expected offsets[%" PRId64 "] >= 0, sizes[%" PRId64
                               "] >= 0 and their sum <= %" PRId64
                               " (the child's length), found %" PRId64 " and %" PRId64,
                               i, i, child_length, offset, size);
    }
  }
  return ACD_OK;
}

static int AcdValidateOneView(struct AcdValidation* v, const struct AcdArrayNode* node,
                              int64_t i) {
  const struct ArrowArray* a = node->array;
  int64_t n_variadic = a->n_buffers - 3;
  // Read through AcdLoad: the views may be another module's (abi/window.c).
  uint8_t view[16];
  AcdLoad((const uint8_t*)a->buffers[1] + 16 * i, view, sizeof(view));
  int32_t length;
  memcpy(&length, view, sizeof(length));
  if (length < 0) {
    return AcdValidationFail(v, "buffers[1]", EINVAL,
                             "view %" PRId64 ": expected a length >= 0, found %" PRId32, i,
                             length);
  }

  const uint8_t* data = view + 4;
  if (length > 12) {
    int32_t index;
    int32_t offset;
    memcpy(&index, view + 8, sizeof(index));
    memcpy(&offset, view + 12, sizeof(offset));
    if (index < 0 || index >= n_variadic) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "view %" PRId64 ": expected a data buffer index in 0..%" PRId64
                               " (there are %" PRId64 " data buffers), found %" PRId32,
                               i, n_variadic - 1, n_variadic, index);
    }
    int64_t size = AcdReadInt(a->buffers[a->n_buffers - 1], index, 8);
    if (offset < 0 || offset > size - length) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "view %" PRId64 ": expected bytes [offset, offset + %" PRId32
                               ") within data buffer %" PRId32 " of %" PRId64
                               " bytes, found offset %" PRId32,
                               i, length, index, size, offset);
    }
    data = (const uint8_t*)a->buffers[2 + index] + offset;
    uint8_t prefix[4];
    AcdLoad(data, prefix, sizeof(prefix));
    if (memcmp(view + 4, prefix, 4) != 0) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "view %" PRId64 ": expected the prefix to equal the first 4 "
                               "bytes of its data (buffer %" PRId32 ", offset %" PRId32
                               "), found different bytes",
                               i, index, offset);
    }
  }

  if (node->format.type == ACD_TYPE_STRING_VIEW) {
    int64_t bad = length <= 12 ? AcdUtf8Validate(data, length) : AcdUtf8ValidateAt(data, length);
    if (bad >= 0) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "view %" PRId64 ": expected UTF-8, found an invalid sequence "
                               "at byte %" PRId64,
                               i, bad);
    }
  }
  return ACD_OK;
}

// Null slots of a view array are not required to hold anything meaningful.
static int AcdValidateViews(struct AcdValidation* v, const struct AcdArrayNode* node) {
  for (int64_t i = node->array->offset; i < node->end; i++) {
    if (!AcdSlotValid(node, i)) continue;
    int code = AcdValidateOneView(v, node, i);
    if (code != ACD_OK) return code;
  }
  return ACD_OK;
}

// Every slot has a declared type id; dense offsets point into that child.
static int AcdValidateUnion(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int16_t child_of[ACD_MAX_UNION_TYPE_IDS];
  for (int i = 0; i < ACD_MAX_UNION_TYPE_IDS; i++) child_of[i] = -1;
  for (int32_t k = 0; k < node->format.n_type_ids; k++) {
    child_of[node->format.type_ids[k]] = (int16_t)k;
  }

  const void* type_ids = a->buffers[0];
  for (int64_t i = a->offset; i < node->end; i++) {
    int8_t id = (int8_t)AcdReadInt(type_ids, i, 1);
    if (id < 0 || child_of[id] < 0) {
      return AcdValidationFail(v, "buffers[0]", EINVAL,
                               "expected type_ids[%" PRId64 "] to be one of the ids in '%s', "
                               "found %d",
                               i, node->schema->format, (int)id);
    }
    if (node->format.type != ACD_TYPE_DENSE_UNION) continue;

    int64_t offset = AcdReadInt(a->buffers[1], i, 4);
    int64_t child_length = a->children[child_of[id]]->length;
    if (offset < 0 || offset >= child_length) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "expected 0 <= offsets[%" PRId64 "] < %" PRId64
                               " (the length of children[%d]), found %" PRId64,
                               i, child_length, (int)child_of[id], offset);
    }
  }
  return ACD_OK;
}

// Valid slots index into the dictionary.
static int AcdValidateIndices(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int width = node->format.byte_width;
  enum AcdType type = node->format.type;
  int is_unsigned = type == ACD_TYPE_UINT8 || type == ACD_TYPE_UINT16 ||
                    type == ACD_TYPE_UINT32 || type == ACD_TYPE_UINT64;
  int64_t dictionary_length = a->dictionary->length;
  if (AcdIndicesFast(node, width, is_unsigned, dictionary_length)) return ACD_OK;

  for (int64_t i = a->offset; i < node->end; i++) {
    if (!AcdSlotValid(node, i)) continue;
    int64_t index = AcdReadInt(a->buffers[1], i, width);
    if (is_unsigned && width < 8) index &= (INT64_C(1) << (8 * width)) - 1;
    if (index >= 0 && index < dictionary_length) continue;
    // A uint64 index above INT64_MAX reads as negative: print it unsigned.
    if (is_unsigned) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "expected 0 <= indices[%" PRId64 "] < %" PRId64
                               " (the dictionary's length), found %" PRIu64,
                               i, dictionary_length, (uint64_t)index);
    }
    return AcdValidationFail(v, "buffers[1]", EINVAL,
                             "expected 0 <= indices[%" PRId64 "] < %" PRId64
                             " (the dictionary's length), found %" PRId64,
                             i, dictionary_length, index);
  }
  return ACD_OK;
}

#define ACD_MS_PER_DAY INT64_C(86400000)

// A date64 counts days in milliseconds: every valid value is a whole day.
static int AcdValidateDate64(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  for (int64_t i = a->offset; i < node->end; i++) {
    if (!AcdSlotValid(node, i)) continue;
    int64_t ms = AcdReadInt(a->buffers[1], i, 8);
    if (ms % ACD_MS_PER_DAY != 0) {
      return AcdValidationFail(v, NULL, EINVAL,
                               "date64 value %" PRId64 " is %" PRId64
                               " ms, not a whole number of days (a multiple of %" PRId64 ")",
                               i - a->offset, ms, ACD_MS_PER_DAY);
    }
  }
  return ACD_OK;
}

// Decimals as little-endian 32-bit limbs: up to 256 bits, plus one so that
// 10^precision never overflows (precision <= 76 < log10(2^256) anyway).
#define ACD_DECIMAL_LIMBS 9

// |value| of `width` bytes of little-endian two's complement, as limbs.
static void AcdDecimalMagnitude(const uint8_t* at, int width, uint32_t* out) {
  uint8_t value[32];
  AcdLoad(at, value, (size_t)width);
  memset(out, 0, ACD_DECIMAL_LIMBS * sizeof(uint32_t));
  memcpy(out, value, (size_t)width);  // limbs are little-endian on every target
  int n = width / 4;
  if ((value[width - 1] & 0x80) == 0) return;
  uint64_t carry = 1;
  for (int k = 0; k < n; k++) {
    uint64_t x = (uint64_t)(uint32_t)~out[k] + carry;
    out[k] = (uint32_t)x;
    carry = x >> 32;
  }
}

// Whether a >= b, limb by limb from the top.
static int AcdLimbsAtLeast(const uint32_t* a, const uint32_t* b) {
  for (int k = ACD_DECIMAL_LIMBS - 1; k >= 0; k--) {
    if (a[k] != b[k]) return a[k] > b[k];
  }
  return 1;
}

// Every valid value has at most `precision` digits: |value| < 10^precision.
static int AcdValidateDecimals(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int width = node->format.byte_width;
  uint32_t limit[ACD_DECIMAL_LIMBS] = {1};
  for (int32_t d = 0; d < node->format.precision; d++) {
    uint64_t carry = 0;
    for (int k = 0; k < ACD_DECIMAL_LIMBS; k++) {
      uint64_t x = (uint64_t)limit[k] * 10 + carry;
      limit[k] = (uint32_t)x;
      carry = x >> 32;
    }
  }
  uint32_t magnitude[ACD_DECIMAL_LIMBS];
  for (int64_t i = a->offset; i < node->end; i++) {
    if (!AcdSlotValid(node, i)) continue;
    AcdDecimalMagnitude((const uint8_t*)a->buffers[1] + i * width, width, magnitude);
    if (AcdLimbsAtLeast(magnitude, limit)) {
      return AcdValidationFail(v, NULL, EINVAL, "%s(%d, %d) value %" PRId64 " has more than %d digits",
                               AcdTypeName(node->format.type), (int)node->format.precision,
                               (int)node->format.scale, i - a->offset, (int)node->format.precision);
    }
  }
  return ACD_OK;
}

int AcdArrayValidateContent(struct AcdValidation* v, const struct AcdArrayNode* node) {
  int code = AcdValidateNullCount(v, node);
  if (code != ACD_OK) return code;

  switch (node->format.type) {
    case ACD_TYPE_BINARY:
      code = AcdValidateOffsetsContent(v, node, 4, 0);
      break;
    case ACD_TYPE_LARGE_BINARY:
      code = AcdValidateOffsetsContent(v, node, 8, 0);
      break;
    case ACD_TYPE_STRING:
      code = AcdValidateOffsetsContent(v, node, 4, 1);
      break;
    case ACD_TYPE_LARGE_STRING:
      code = AcdValidateOffsetsContent(v, node, 8, 1);
      break;
    case ACD_TYPE_LIST:
    case ACD_TYPE_MAP:
      code = AcdValidateOffsetsContent(v, node, 4, 0);
      break;
    case ACD_TYPE_LARGE_LIST:
      code = AcdValidateOffsetsContent(v, node, 8, 0);
      break;
    case ACD_TYPE_LIST_VIEW:
      code = AcdValidateListViews(v, node, 4);
      break;
    case ACD_TYPE_LARGE_LIST_VIEW:
      code = AcdValidateListViews(v, node, 8);
      break;
    case ACD_TYPE_BINARY_VIEW:
    case ACD_TYPE_STRING_VIEW:
      code = AcdValidateViews(v, node);
      break;
    case ACD_TYPE_DENSE_UNION:
    case ACD_TYPE_SPARSE_UNION:
      code = AcdValidateUnion(v, node);
      break;
    case ACD_TYPE_DATE64:
      code = AcdValidateDate64(v, node);
      break;
    case ACD_TYPE_DECIMAL32:
    case ACD_TYPE_DECIMAL64:
    case ACD_TYPE_DECIMAL128:
    case ACD_TYPE_DECIMAL256:
      code = AcdValidateDecimals(v, node);
      break;
    default:
      break;
  }
  if (code != ACD_OK) return code;

  if (node->schema->dictionary != NULL) return AcdValidateIndices(v, node);
  return ACD_OK;
}
