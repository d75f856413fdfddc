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

// A level from JS must be checked before it is cast to the enum (a value outside
// the enum's range is undefined behaviour in C++): ACD_OK or EINVAL.
int CheckLevel(int level) {
  if (level >= ACD_VALIDATION_NONE && level <= ACD_VALIDATION_FULL) return ACD_OK;
  return AcdErrorSet(&acd_last_error, EINVAL, "validation level: expected 0 to 3, found %d", level);
}

int ArrayValidate(uintptr_t schema, uintptr_t array, int level, bool schema_valid) {
  if (int code = CheckLevel(level); code != ACD_OK) return code;
  auto validate = schema_valid ? &AcdArrayValidateWithValidSchema : &AcdArrayValidate;
  return validate(AcdPtr<const ArrowSchema>(schema), AcdPtr<const ArrowArray>(array),
                  static_cast<AcdValidationLevel>(level), &acd_last_error);
}

// The imports return the library's own struct, or minus the error code.
double SchemaImport(uintptr_t src) {
  int code = ACD_OK;
  ArrowSchema* own = AcdSchemaImport(AcdPtr<ArrowSchema>(src), &code, &acd_last_error);
  return own != nullptr ? static_cast<double>(reinterpret_cast<uintptr_t>(own)) : -code;
}

double ArrayImport(uintptr_t schema, uintptr_t src, int level, bool schema_valid) {
  int code = CheckLevel(level);
  if (code != ACD_OK) return -code;
  ArrowArray* own = AcdArrayImport(AcdPtr<const ArrowSchema>(schema), AcdPtr<ArrowArray>(src),
                                   static_cast<AcdValidationLevel>(level), schema_valid, &code,
                                   &acd_last_error);
  return own != nullptr ? static_cast<double>(reinterpret_cast<uintptr_t>(own)) : -code;
}

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device_validate) {
  using emscripten::function;
  function("schemaValidate", &SchemaValidate);
  function("arrayValidate", &ArrayValidate);
  function("schemaImport", &SchemaImport);
  function("arrayImport", &ArrayImport);
}
