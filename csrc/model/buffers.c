// The per-type buffer-size rules (model.h, "buffers"): how many bytes each
// buffer of an array of one type holds for its length and offset. The one
// place that knows them; the validator (validate/array.c) and the device
// copies (device/buffers.c) both ask here.

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "model/model.h"

int64_t AcdReadInt(const void* data, int64_t i, int width) {
  const uint8_t* p = (const uint8_t*)data + i * width;
  switch (width) {
    case 1: {
      int8_t x;
      AcdLoad(p, &x, sizeof(x));
      return x;
    }
    case 2: {
      int16_t x;
      AcdLoad(p, &x, sizeof(x));
      return x;
    }
    case 4: {
      int32_t x;
      AcdLoad(p, &x, sizeof(x));
      return x;
    }
    default: {
      int64_t x;
      AcdLoad(p, &x, sizeof(x));
      return x;
    }
  }
}

int AcdTypeHasValidity(enum AcdType type) {
  return type != ACD_TYPE_NA && type != ACD_TYPE_DENSE_UNION && type != ACD_TYPE_SPARSE_UNION &&
         type != ACD_TYPE_RUN_END_ENCODED;
}

static int AcdIsView(enum AcdType type) {
  return type == ACD_TYPE_BINARY_VIEW || type == ACD_TYPE_STRING_VIEW;
}

// The width of the offsets of binary, utf8, list and map (buffer 1), else 0.
static int AcdOffsetWidth(enum AcdType type) {
  switch (type) {
    case ACD_TYPE_BINARY:
    case ACD_TYPE_STRING:
    case ACD_TYPE_LIST:
    case ACD_TYPE_MAP:
      return 4;
    case ACD_TYPE_LARGE_BINARY:
    case ACD_TYPE_LARGE_STRING:
    case ACD_TYPE_LARGE_LIST:
      return 8;
    default:
      return 0;
  }
}

int AcdBufferDependency(const struct AcdFormat* format, int64_t length, int64_t offset,
                        int64_t n_buffers, int64_t i, struct AcdBufferElement* from) {
  enum AcdType type = format->type;
  int with_data = type == ACD_TYPE_BINARY || type == ACD_TYPE_STRING ||
                  type == ACD_TYPE_LARGE_BINARY || type == ACD_TYPE_LARGE_STRING;
  if (with_data && i == 2 && length > 0) {
    *from = (struct AcdBufferElement){1, offset + length, AcdOffsetWidth(type)};
    return 1;
  }
  if (AcdIsView(type) && i >= 2 && i < n_buffers - 1) {
    *from = (struct AcdBufferElement){n_buffers - 1, i - 2, 8};
    return 1;
  }
  return 0;
}

// count items of item_size bytes (or bits) into out.
static int AcdItems(int64_t count, int64_t item_size, const char* noun,
                    struct AcdBufferSize* out, struct AcdError* error) {
  out->count = count;
  out->item_size = item_size;
  out->noun = noun;
  if (item_size == ACD_BUFFER_BITS) {
    out->bytes = count / 8 + (count % 8 != 0);
  } else if (item_size != 0 && count > INT64_MAX / item_size) {
    out->bytes = 0;
    return AcdErrorSet(error, EOVERFLOW,
                       "expected %" PRId64 " %s of %" PRId64 " bytes, whose size overflows int64",
                       count, noun, item_size);
  } else {
    out->bytes = count * item_size;
  }
  return ACD_OK;
}

int AcdBufferSizeOf(const struct AcdFormat* format, int64_t length, int64_t offset,
                    int64_t n_buffers, int64_t i, int64_t value, struct AcdBufferSize* out,
                    struct AcdError* error) {
  if (i < 0 || i >= n_buffers) {
    AcdItems(0, 1, "bytes", out, NULL);
    return AcdErrorSet(error, EINVAL, "expected a buffer index 0 to %" PRId64 ", found %" PRId64,
                       n_buffers - 1, i);
  }
  enum AcdType type = format->type;
  // The slots the buffers cover: none at all for an empty array.
  int64_t extent = length == 0 ? 0 : offset + length;
  if (i == 0 && AcdTypeHasValidity(type)) return AcdItems(extent, ACD_BUFFER_BITS, "validity bits", out, error);

  int width = AcdOffsetWidth(type);
  if (width != 0) {
    if (i == 1) {
      // offset + length + 1 offsets (none for an empty array).
      if (extent == INT64_MAX) {
        AcdItems(0, width, "offsets", out, NULL);
        return AcdErrorSet(error, EOVERFLOW,
                           "expected offset + length + 1 offsets, which overflows int64");
      }
      return AcdItems(extent == 0 ? 0 : extent + 1, width,
                      width == 4 ? "int32 offsets" : "int64 offsets", out, error);
    }
    if (i == 2 && type != ACD_TYPE_LIST && type != ACD_TYPE_MAP && type != ACD_TYPE_LARGE_LIST) {
      return AcdItems(extent == 0 ? 0 : value, 1, "bytes of data (the last offset)", out, error);
    }
    return AcdItems(0, 1, "bytes", out, error);
  }

  switch (type) {
    case ACD_TYPE_BOOL:
      if (i == 1) return AcdItems(extent, ACD_BUFFER_BITS, "value bits", out, error);
      break;
    case ACD_TYPE_LIST_VIEW:
    case ACD_TYPE_LARGE_LIST_VIEW: {
      int w = type == ACD_TYPE_LIST_VIEW ? 4 : 8;
      if (i == 1) return AcdItems(extent, w, w == 4 ? "int32 offsets" : "int64 offsets", out, error);
      if (i == 2) return AcdItems(extent, w, w == 4 ? "int32 sizes" : "int64 sizes", out, error);
      break;
    }
    case ACD_TYPE_BINARY_VIEW:
    case ACD_TYPE_STRING_VIEW:
      // Validity, views, the data buffers, then their sizes (int64 each);
      // the data sizes do not depend on the length.
      if (i == 1) return AcdItems(extent, 16, "views", out, error);
      if (i == n_buffers - 1) {
        return AcdItems(n_buffers - 3, 8, "variadic buffer sizes", out, error);
      }
      return AcdItems(value, 1, "bytes of data", out, error);
    case ACD_TYPE_DENSE_UNION:
      if (i == 0) return AcdItems(extent, 1, "int8 type ids", out, error);
      if (i == 1) return AcdItems(extent, 4, "int32 offsets", out, error);
      break;
    case ACD_TYPE_SPARSE_UNION:
      if (i == 0) return AcdItems(extent, 1, "int8 type ids", out, error);
      break;
    case ACD_TYPE_NA:
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_FIXED_SIZE_LIST:
    case ACD_TYPE_RUN_END_ENCODED:
      break;
    default:
      // Every fixed-width type: integers, floats, decimals, fixed-size
      // binary, temporal and interval types, dictionary indices.
      if (i == 1) return AcdItems(extent, format->byte_width, "values", out, error);
      break;
  }
  return AcdItems(0, 1, "bytes", out, error);
}
