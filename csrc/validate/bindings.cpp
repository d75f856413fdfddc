// The wasm exports of validation (embind). Failures fill the error
// lastError() reads (abi/bindings.cpp).

#include <emscripten/bind.h>

#include <cstdint>
#include <cstdlib>

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

// An array whose buffers are in another module's memory, checked through a
// shadow whose buffer pointers are foreign-window addresses
// (ts/exchange/foreign-shadow.ts): the first `mapped` bytes of that memory
// mapped into the window (abi/window.c) for this one validation.
int ArrayValidateForeign(uintptr_t schema, uintptr_t array, int level, double mapped) {
  if (int code = CheckLevel(level); code != ACD_OK) return code;
  AcdForeignMapJs(0, static_cast<uint64_t>(mapped));
  int code = AcdArrayValidateWithValidSchema(AcdPtr<const ArrowSchema>(schema), AcdPtr<const ArrowArray>(array),
                                             static_cast<AcdValidationLevel>(level), &acd_last_error);
  AcdForeignMapJs(0, 0);
  return code;
}

// Where the shadows are written when they fit: allocated once (not counted,
// as static memory is not; not static, which would add its zeros to the
// archive the package ships), so that a validation through the window needs
// no allocation (nor a call to make one). Its content is only read within
// one ArrayValidateForeign call. 0 bytes when it could not be allocated.
constexpr int kShadowScratchBytes = 256 * 1024;
unsigned char* acd_shadow_scratch = nullptr;

uintptr_t ShadowScratch() {
  if (acd_shadow_scratch == nullptr) acd_shadow_scratch = static_cast<unsigned char*>(std::malloc(kShadowScratchBytes));
  return reinterpret_cast<uintptr_t>(acd_shadow_scratch);
}
double ShadowScratchBytes() { return ShadowScratch() == 0 ? 0 : kShadowScratchBytes; }

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
  function("arrayValidateForeign", &ArrayValidateForeign);
  function("shadowScratch", &ShadowScratch);
  function("shadowScratchBytes", &ShadowScratchBytes);
  function("schemaImport", &SchemaImport);
  function("arrayImport", &ArrayImport);
}
