// How many bytes each buffer of an array node on a device holds: what a copy
// between devices must move. The per-type rules are the model's
// (AcdBufferSizeOf, model/buffers.c); the values they depend on (the last
// offset, variadic buffer sizes) are read here from the device the node lives
// on, through the simulation, as nanoarrow's device arrays do.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "device/device.h"

// Element `index` of buffer i, an integer of `width` bytes, read on `device`.
static int AcdReadElement(struct AcdValidation* v, const struct ArrowArray* array,
                          const struct AcdBufferElement* at, struct AcdDevice* device,
                          int64_t* out) {
  int code = AcdDeviceReadInt(device, array->buffers[at->buffer], at->index, at->width, out,
                              v->error);
  if (code != ACD_OK) {
    char field[40];
    snprintf(field, sizeof(field), "buffers[%" PRId64 "]", at->buffer);
    return AcdValidationPrefixField(v, field, code);
  }
  return ACD_OK;
}

int AcdDeviceBufferSizes(struct AcdValidation* v, const struct ArrowSchema* schema,
                         const struct ArrowArray* array, struct AcdDevice* device,
                         int64_t* sizes) {
  struct AcdFormat format;
  int code = AcdFormatParse(schema->format, &format, v->error);
  if (code != ACD_OK) return AcdValidationPrefix(v, code);
  for (int64_t i = 0; i < array->n_buffers; i++) sizes[i] = 0;
  for (int64_t i = 0; i < array->n_buffers; i++) {
    char field[40];
    snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
    // A size read from the data: 0 when the buffer holding it is NULL (the
    // validator has checked that it may be).
    int64_t value = 0;
    struct AcdBufferElement from;
    if (AcdBufferDependency(&format, array->length, array->offset, array->n_buffers, i, &from) &&
        array->buffers[from.buffer] != NULL) {
      code = AcdReadElement(v, array, &from, device, &value);
      if (code != ACD_OK) return code;
      if (value < 0) {
        snprintf(field, sizeof(field), "buffers[%" PRId64 "]", from.buffer);
        return AcdValidationFail(v, field, EINVAL, "expected %s >= 0, found %" PRId64,
                                 from.buffer == 1 ? "the last offset" : "variadic buffer sizes",
                                 value);
      }
    }
    struct AcdBufferSize size;
    struct AcdError rule_error;
    code = AcdBufferSizeOf(&format, array->length, array->offset, array->n_buffers, i, value,
                           &size, v->error == NULL ? NULL : &rule_error);
    if (code != ACD_OK) return AcdValidationFail(v, field, code, "%s", rule_error.message);
    sizes[i] = size.bytes;
  }
  return ACD_OK;
}
