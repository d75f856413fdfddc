// How many bytes each buffer of an array node holds, from its type, length
// and offset: what a copy between devices must move. Sizes that depend on the
// data (the last offset, variadic buffer sizes) are read from the device the
// node lives on, through the simulation, as nanoarrow's device arrays do.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "acd.h"

// Buffer sizes in bits rather than items.
#define ACD_BITS (-1)

static int AcdSizeOf(struct AcdValidation* v, int64_t i, int64_t count, int64_t item_size,
                     int64_t* out) {
  if (item_size == ACD_BITS) {
    *out = count / 8 + (count % 8 != 0);
    return ACD_OK;
  }
  if (item_size != 0 && count > INT64_MAX / item_size) {
    char field[40];
    snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
    return AcdValidationFail(v, field, EOVERFLOW,
                             "%" PRId64 " items of %" PRId64 " bytes overflow int64", count,
                             item_size);
  }
  *out = count * item_size;
  return ACD_OK;
}

// Element `index` of buffer i, an integer of `width` bytes, read on `device`.
static int AcdReadElement(struct AcdValidation* v, const struct ArrowArray* array, int64_t i,
                          int64_t index, int width, struct AcdDevice* device, int64_t* out) {
  int code = AcdDeviceReadInt(device, array->buffers[i], index, width, out, v->error);
  if (code != ACD_OK) {
    char field[40];
    snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
    AcdErrorPrefix(v->error, "%s", field);
    return AcdValidationPrefix(v, code);
  }
  return ACD_OK;
}

static int AcdNonNegative(struct AcdValidation* v, int64_t i, int64_t value, const char* what) {
  if (value >= 0) return ACD_OK;
  char field[40];
  snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
  return AcdValidationFail(v, field, EINVAL, "expected %s >= 0, found %" PRId64, what, value);
}

// Offsets (extent + 1 of them; none for an empty node) and, for binary and
// utf8, the data they index (the last offset's worth of bytes).
static int AcdOffsetSizes(struct AcdValidation* v, const struct ArrowArray* array,
                          int64_t extent, int width, int with_data, struct AcdDevice* device,
                          int64_t* sizes) {
  if (extent == 0) return ACD_OK;
  if (extent == INT64_MAX) {
    return AcdValidationFail(v, "buffers[1]", EOVERFLOW, "offset + length + 1 overflows int64");
  }
  int code = AcdSizeOf(v, 1, extent + 1, width, &sizes[1]);
  if (code != ACD_OK || !with_data || array->buffers[1] == NULL) return code;
  int64_t last;
  code = AcdReadElement(v, array, 1, extent, width, device, &last);
  if (code != ACD_OK) return code;
  code = AcdNonNegative(v, 1, last, "the last offset");
  if (code == ACD_OK) sizes[2] = last;
  return code;
}

// Views (16 bytes each), the variadic sizes (the last buffer) and the data
// buffers they give the size of.
static int AcdViewSizes(struct AcdValidation* v, const struct ArrowArray* array, int64_t extent,
                        struct AcdDevice* device, int64_t* sizes) {
  if (array->n_buffers < 3) {
    return AcdValidationFail(v, "n_buffers", EINVAL, "expected at least 3 for a view type, found %" PRId64,
                             array->n_buffers);
  }
  int64_t n_variadic = array->n_buffers - 3;
  int64_t last = array->n_buffers - 1;
  int code = AcdSizeOf(v, 1, extent, 16, &sizes[1]);
  if (code == ACD_OK) code = AcdSizeOf(v, last, n_variadic, 8, &sizes[last]);
  if (code != ACD_OK || array->buffers[last] == NULL) return code;
  for (int64_t k = 0; k < n_variadic && code == ACD_OK; k++) {
    code = AcdReadElement(v, array, last, k, 8, device, &sizes[2 + k]);
    if (code == ACD_OK) code = AcdNonNegative(v, last, sizes[2 + k], "variadic buffer sizes");
  }
  return code;
}

int AcdDeviceBufferSizes(struct AcdValidation* v, const struct ArrowSchema* schema,
                         const struct ArrowArray* array, struct AcdDevice* device,
                         int64_t* sizes) {
  struct AcdFormat format;
  int code = AcdFormatParse(schema->format, &format, v->error);
  if (code != ACD_OK) return AcdValidationPrefix(v, code);
  for (int64_t i = 0; i < array->n_buffers; i++) sizes[i] = 0;
  // As the validator: an empty array needs no buffer bytes at all.
  int64_t extent = array->length == 0 ? 0 : array->offset + array->length;

  enum AcdType type = format.type;
  int has_validity = type != ACD_TYPE_NA && type != ACD_TYPE_DENSE_UNION &&
                     type != ACD_TYPE_SPARSE_UNION && type != ACD_TYPE_RUN_END_ENCODED;
  if (has_validity && array->n_buffers > 0) {
    code = AcdSizeOf(v, 0, extent, ACD_BITS, &sizes[0]);
    if (code != ACD_OK) return code;
  }

  switch (type) {
    case ACD_TYPE_NA:
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_FIXED_SIZE_LIST:
    case ACD_TYPE_RUN_END_ENCODED:
      return ACD_OK;
    case ACD_TYPE_BOOL:
      return AcdSizeOf(v, 1, extent, ACD_BITS, &sizes[1]);
    case ACD_TYPE_BINARY:
    case ACD_TYPE_STRING:
      return AcdOffsetSizes(v, array, extent, 4, 1, device, sizes);
    case ACD_TYPE_LARGE_BINARY:
    case ACD_TYPE_LARGE_STRING:
      return AcdOffsetSizes(v, array, extent, 8, 1, device, sizes);
    case ACD_TYPE_LIST:
    case ACD_TYPE_MAP:
      return AcdOffsetSizes(v, array, extent, 4, 0, device, sizes);
    case ACD_TYPE_LARGE_LIST:
      return AcdOffsetSizes(v, array, extent, 8, 0, device, sizes);
    case ACD_TYPE_LIST_VIEW:
    case ACD_TYPE_LARGE_LIST_VIEW: {
      int width = type == ACD_TYPE_LIST_VIEW ? 4 : 8;
      code = AcdSizeOf(v, 1, extent, width, &sizes[1]);
      return code != ACD_OK ? code : AcdSizeOf(v, 2, extent, width, &sizes[2]);
    }
    case ACD_TYPE_BINARY_VIEW:
    case ACD_TYPE_STRING_VIEW:
      return AcdViewSizes(v, array, extent, device, sizes);
    case ACD_TYPE_DENSE_UNION:
      code = AcdSizeOf(v, 0, extent, 1, &sizes[0]);
      return code != ACD_OK ? code : AcdSizeOf(v, 1, extent, 4, &sizes[1]);
    case ACD_TYPE_SPARSE_UNION:
      return AcdSizeOf(v, 0, extent, 1, &sizes[0]);
    default:
      // Every fixed-width type, dictionary indices included.
      return AcdSizeOf(v, 1, extent, format.byte_width, &sizes[1]);
  }
}
