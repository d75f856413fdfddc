// Taking a producer's struct in one step: validate it, allocate the library's
// own struct and move the producer's into it (the source is then marked
// released). An import used to make each of these a separate call from
// TypeScript; one call each for the schema and the array is what keeps the
// fixed cost of an import small (issue 14). On failure nothing was moved or
// released: the caller still owns the struct.

#include <errno.h>

#include "validate/validate.h"

struct ArrowSchema* AcdSchemaImport(struct ArrowSchema* src, int* code, struct AcdError* error) {
  *code = AcdSchemaValidate(src, error);
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
