// Taking a producer's struct in one step: validate it, allocate the library's
// own struct and move the producer's into it (the source is then marked
// released). An import used to make each of these a separate call from
// TypeScript; one call for the schema, the array, or both, is what keeps the
// fixed cost of an import small (issue 14). A schema's key is written first
// (schema_key.c): it is what the importer's cache looks up, and a schema whose
// key was validated before is not checked again. On failure nothing was moved
// or released: the caller still owns the struct.

#include <errno.h>

#include "validate/validate.h"

int AcdSchemaCheck(const struct ArrowSchema* src, uint8_t* key, int64_t capacity,
                   int64_t* key_size, uint32_t* key_id, struct AcdError* error) {
  int64_t size = AcdSchemaKey(src, key, capacity);
  *key_size = size;
  *key_id = 0;
  int whole = size >= 0 && size <= capacity;
  if (whole && (*key_id = AcdSchemaValidated(key, size)) != 0) return ACD_OK;
  int code = AcdSchemaValidate(src, error);
  if (code == ACD_OK && whole) *key_id = AcdSchemaRememberValid(key, size);
  return code;
}

struct ArrowSchema* AcdSchemaImport(struct ArrowSchema* src, uint8_t* key, int64_t capacity,
                                    int64_t* key_size, uint32_t* key_id, int* code,
                                    struct AcdError* error) {
  *code = AcdSchemaCheck(src, key, capacity, key_size, key_id, error);
  if (*code != ACD_OK) return NULL;
  struct ArrowSchema* own = AcdCalloc(1, (int64_t)sizeof(struct ArrowSchema));
  if (own == NULL) {
    *code = AcdErrorSet(error, ENOMEM, "out of memory allocating a struct ArrowSchema");
    return NULL;
  }
  AcdSchemaMove(src, own);
  return own;
}

struct ArrowArray* AcdArrayImport(const struct ArrowSchema* schema, struct ArrowArray* src,
                                  enum AcdValidationLevel level, int schema_valid, int* code,
                                  struct AcdError* error) {
  *code = schema_valid ? AcdArrayValidateWithValidSchema(schema, src, level, error)
                       : AcdArrayValidate(schema, src, level, error);
  if (*code != ACD_OK) return NULL;
  struct ArrowArray* own = AcdCalloc(1, (int64_t)sizeof(struct ArrowArray));
  if (own == NULL) {
    *code = AcdErrorSet(error, ENOMEM, "out of memory allocating a struct ArrowArray");
    return NULL;
  }
  AcdArrayMove(src, own);
  return own;
}

int AcdBatchImport(struct ArrowSchema* schema, struct ArrowArray* array,
                   enum AcdValidationLevel level, uint8_t* key, int64_t capacity,
                   int64_t* key_size, uint32_t* key_id, struct ArrowSchema** schema_out,
                   struct ArrowArray** array_out, int* failed, struct AcdError* error) {
  // Both validated before either is moved.
  *failed = 1;
  int code = AcdSchemaCheck(schema, key, capacity, key_size, key_id, error);
  if (code != ACD_OK) return code;
  *failed = 2;
  code = AcdArrayValidateWithValidSchema(schema, array, level, error);
  if (code != ACD_OK) return code;
  *failed = 0;
  struct ArrowSchema* own_schema = AcdCalloc(1, (int64_t)sizeof(struct ArrowSchema));
  struct ArrowArray* own_array = AcdCalloc(1, (int64_t)sizeof(struct ArrowArray));
  if (own_schema == NULL || own_array == NULL) {
    AcdFree(own_schema);
    AcdFree(own_array);
    return AcdErrorSet(error, ENOMEM, "out of memory allocating the library's structs");
  }
  AcdSchemaMove(schema, own_schema);
  AcdArrayMove(array, own_array);
  *schema_out = own_schema;
  *array_out = own_array;
  return ACD_OK;
}
