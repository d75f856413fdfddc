// The wasm exports of validation (embind). Failures fill the error
// lastError() reads (abi/bindings.cpp).

#include <emscripten/bind.h>

#include <cstdint>

#include "abi/bindings.h"
#include "validate/validate.h"

namespace {

int SchemaValidate(uintptr_t schema) {
  return AcdSchemaValidate(AcdPtr<const ArrowSchema>(schema), &acd_last_error);
}

int ArrayValidate(uintptr_t schema, uintptr_t array, int level, bool schema_valid) {
  if (level < ACD_VALIDATION_NONE || level > ACD_VALIDATION_FULL) {
    return AcdErrorSet(&acd_last_error, EINVAL, "validation level: expected 0 to 3, found %d", level);
  }
  auto validate = schema_valid ? &AcdArrayValidateWithValidSchema : &AcdArrayValidate;
  return validate(AcdPtr<const ArrowSchema>(schema), AcdPtr<const ArrowArray>(array),
                  static_cast<AcdValidationLevel>(level), &acd_last_error);
}

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device_validate) {
  using emscripten::function;
  function("schemaValidate", &SchemaValidate);
  function("arrayValidate", &ArrayValidate);
}
