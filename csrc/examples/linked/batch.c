// Linked mode's example: C code of a module that links the core's static
// library (dist/lib/libarrow_c_device.a, headers in dist/include) and shares
// its memory with the TypeScript facade (ArrowCDevice.attach), so that
// pointers pass both ways as they are. A consumer that validates a record
// batch with the core's validator and sums an int32 column, and a producer
// that builds a record batch with the core's C API. Built by the README's
// command (test/linked.test.ts runs it):
//
//   emcc -O2 -Idist/include csrc/examples/linked/batch.c \
//     -Wl,--whole-archive dist/lib/libarrow_c_device.a -Wl,--no-whole-archive \
//     --bind -sWASM_BIGINT -sALLOW_TABLE_GROWTH -sALLOW_MEMORY_GROWTH -sMAXIMUM_MEMORY=2GB \
//     -sEXPORTED_RUNTIME_METHODS=addFunction,removeFunction -sMODULARIZE -o batch.cjs

#include <emscripten/emscripten.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "validate/validate.h"

static struct AcdError batch_error;

// The message of the last failure of sum_int32_column or make_int32_batch.
EMSCRIPTEN_KEEPALIVE const char* batch_last_error(void) { return batch_error.message; }

// The sum of the non-null values of int32 column `column` of a record batch
// on the CPU, after validating it (DEFAULT level: structure and buffer
// sizes); the offset of the batch and of the column are honoured. Borrows the
// structs (the caller still owns them). INT64_MIN on failure
// (batch_last_error() says why).
EMSCRIPTEN_KEEPALIVE int64_t sum_int32_column(const struct ArrowSchema* schema,
                                              const struct ArrowDeviceArray* batch,
                                              int64_t column) {
  if (schema == NULL || batch == NULL) {
    AcdErrorSet(&batch_error, EINVAL, "sum_int32_column: NULL struct");
    return INT64_MIN;
  }
  if (batch->device_type != ARROW_DEVICE_CPU) {
    AcdErrorSet(&batch_error, EINVAL, "sum_int32_column: the batch is on device type %d, not the CPU",
                (int)batch->device_type);
    return INT64_MIN;
  }
  const struct ArrowArray* array = &batch->array;
  if (AcdArrayValidate(schema, array, ACD_VALIDATION_DEFAULT, &batch_error) != ACD_OK) return INT64_MIN;
  if (strcmp(schema->format, "+s") != 0 || column < 0 || column >= schema->n_children ||
      strcmp(schema->children[column]->format, "i") != 0 ||
      schema->children[column]->dictionary != NULL) {  // "i" with a dictionary: int32 indices
    AcdErrorSet(&batch_error, EINVAL, "sum_int32_column: column %lld is not an int32 column of a record batch",
                (long long)column);
    return INT64_MIN;
  }
  // A struct array's offset applies to its children on top of their own.
  const struct ArrowArray* values = array->children[column];
  const int64_t start = array->offset + values->offset;
  const uint8_t* validity = (const uint8_t*)values->buffers[0];
  const int32_t* data = (const int32_t*)values->buffers[1];
  int64_t sum = 0;
  for (int64_t i = start; i < start + array->length; i++) {
    if (values->null_count != 0 && validity != NULL && (validity[i / 8] & (1u << (i % 8))) == 0) continue;
    sum += data[i];
  }
  return sum;
}

// A record batch of one nullable int32 column "x" with `length` rows: row i
// is (offset + i) * 10, null when offset + i is a multiple of 3; the column
// is a slice that starts at `offset` of a longer array. Made with the core's
// C API (AcdSchemaInit, AcdArrayInit, AcdArrayAllocateBuffer), so its
// release callbacks and buffers are the core's (counted by its allocator).
// Fills the caller's structs; returns 0 or an errno code.
EMSCRIPTEN_KEEPALIVE int make_int32_batch(struct ArrowSchema* schema, struct ArrowArray* array,
                                          int64_t length, int64_t offset) {
  if (length < 0 || offset < 0 || length > INT32_MAX / 10 - offset) {
    return AcdErrorSet(&batch_error, EINVAL, "make_int32_batch: bad length %lld or offset %lld",
                       (long long)length, (long long)offset);
  }
  int code = AcdSchemaInit(schema, "+s", "", NULL, 0, 1, 0, &batch_error);
  if (code == ACD_OK) code = AcdSchemaInit(schema->children[0], "i", "x", NULL, ARROW_FLAG_NULLABLE, 0, 0, &batch_error);
  if (code != ACD_OK) {
    if (schema->release != NULL) schema->release(schema);
    return code;
  }
  const int64_t total = offset + length;
  int64_t nulls = 0;
  for (int64_t i = offset; i < total; i++) nulls += i % 3 == 0;
  code = AcdArrayInit(array, length, 0, 0, 1, 1, 0, &batch_error);
  if (code == ACD_OK) code = AcdArrayInit(array->children[0], length, nulls, offset, 2, 0, 0, &batch_error);
  uint8_t* validity = NULL;
  int32_t* data = NULL;
  if (code == ACD_OK) {
    validity = AcdArrayAllocateBuffer(array->children[0], 0, (total + 7) / 8);
    data = AcdArrayAllocateBuffer(array->children[0], 1, total * 4);
    if (validity == NULL || data == NULL) code = AcdErrorSet(&batch_error, ENOMEM, "make_int32_batch: out of memory");
  }
  if (code != ACD_OK) {
    if (array->release != NULL) array->release(array);
    schema->release(schema);
    return code;
  }
  memset(validity, 0, (size_t)(total + 7) / 8);
  for (int64_t i = 0; i < total; i++) {
    data[i] = (int32_t)(i * 10);
    if (i % 3 != 0) validity[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  return ACD_OK;
}
