// The wasm exports of validation (embind): validating, importing (validate,
// move) and schema keys. Failures fill the error lastError() reads
// (abi/bindings.cpp).

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

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
// (ts/exchange/foreign-shadow.ts): `mapped` bytes of that memory from
// address `origin` mapped into the window (abi/window.c) for this one
// validation, with the first `preloaded` entries of the preload table, which
// the caller wrote.
int ArrayValidateForeign(uintptr_t schema, uintptr_t array, int level, double origin, double mapped, int preloaded) {
  if (int code = CheckLevel(level); code != ACD_OK) return code;
  AcdForeignMapJs(static_cast<uint64_t>(origin), static_cast<uint64_t>(mapped));
  AcdForeignPreloaded(preloaded);
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

// The foreign window's preload table (ACD_FOREIGN_PRELOADS entries), which
// the caller of ArrayValidateForeign fills.
uintptr_t ForeignPreloads() { return reinterpret_cast<uintptr_t>(AcdForeignPreloadTable()); }

// Where the imports and schemaKey leave what they return besides their
// result, so that it costs neither an allocation nor a call: six doubles
// (the key's size, or -1; the library's schema and array of a batch import;
// which of its structs failed: 1 the schema, 2 the array; the address of the
// key; the id the key is remembered under, 0 when it is not), read by
// ts/abi/core.ts. The key's buffer is allocated once, with
// malloc: not counted (static memory is not either), and not static, which
// would add its zeros to the archive the package ships; 0 without it.
constexpr int64_t kKeyCapacity = 64 * 1024;
struct alignas(8) ImportOut {
  double key_size;
  double schema;
  double array;
  double failed;
  double key;
  double key_id;
} acd_import_out;

uint8_t* KeyBuffer() {
  if (acd_import_out.key == 0) {
    void* key = std::malloc(kKeyCapacity);
    acd_import_out.key = static_cast<double>(reinterpret_cast<uintptr_t>(key));
    AcdSchemaKeysReserve();  // the validated keys' arena, at the same time
  }
  return reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(acd_import_out.key));
}

int64_t KeyRoom() { return KeyBuffer() == nullptr ? 0 : kKeyCapacity; }

double Address(const void* p) { return static_cast<double>(reinterpret_cast<uintptr_t>(p)); }

// The imports return the library's own struct, or minus the error code.
double SchemaImport(uintptr_t src) {
  int code = ACD_OK;
  int64_t key_size = -1;
  uint32_t key_id = 0;
  ArrowSchema* own = AcdSchemaImport(AcdPtr<ArrowSchema>(src), KeyBuffer(), KeyRoom(), &key_size,
                                     &key_id, &code, &acd_last_error);
  acd_import_out.key_size = static_cast<double>(key_size);
  acd_import_out.key_id = key_id;
  return own != nullptr ? Address(own) : -code;
}

// AcdSchemaCheck of the schema at `schema` (not moved): ACD_OK or the error
// code, the key and its id in acd_import_out as an import leaves them.
int SchemaCheck(uintptr_t schema) {
  int64_t key_size = -1;
  uint32_t key_id = 0;
  int code = AcdSchemaCheck(AcdPtr<const ArrowSchema>(schema), KeyBuffer(), KeyRoom(), &key_size, &key_id,
                            &acd_last_error);
  acd_import_out.key_size = static_cast<double>(key_size);
  acd_import_out.key_id = key_id;
  return code;
}

// A schema and an array in one call: ACD_OK (the structs' addresses in
// acd_import_out) or the error code.
int BatchImport(uintptr_t schema, uintptr_t array, int level) {
  if (int code = CheckLevel(level); code != ACD_OK) return code;
  int64_t key_size = -1;
  uint32_t key_id = 0;
  ArrowSchema* own_schema = nullptr;
  ArrowArray* own_array = nullptr;
  int failed = 0;
  int code = AcdBatchImport(AcdPtr<ArrowSchema>(schema), AcdPtr<ArrowArray>(array),
                            static_cast<AcdValidationLevel>(level), KeyBuffer(), KeyRoom(),
                            &key_size, &key_id, &own_schema, &own_array, &failed,
                            &acd_last_error);
  acd_import_out.key_size = static_cast<double>(key_size);
  acd_import_out.key_id = key_id;
  acd_import_out.failed = failed;
  acd_import_out.schema = Address(own_schema);
  acd_import_out.array = Address(own_array);
  return code;
}

// The key of a schema (schema_key.c) into out (0: acd_import_out's key)
// when it fits in capacity bytes; returns its size, or -1.
double SchemaKey(uintptr_t schema, uintptr_t out, double capacity) {
  uint8_t* to = out == 0 ? KeyBuffer() : AcdPtr<uint8_t>(out);
  int64_t room = out == 0 ? KeyRoom() : static_cast<int64_t>(capacity);
  return static_cast<double>(AcdSchemaKey(AcdPtr<const ArrowSchema>(schema), to, room));
}

uintptr_t ImportOutAddress() { return reinterpret_cast<uintptr_t>(&acd_import_out); }
double KeyCapacity() { return static_cast<double>(KeyRoom()); }

double ArrayImport(uintptr_t schema, uintptr_t src, int level, bool schema_valid) {
  int code = CheckLevel(level);
  if (code != ACD_OK) return -code;
  ArrowArray* own = AcdArrayImport(AcdPtr<const ArrowSchema>(schema), AcdPtr<ArrowArray>(src),
                                   static_cast<AcdValidationLevel>(level), schema_valid, &code,
                                   &acd_last_error);
  return own != nullptr ? static_cast<double>(reinterpret_cast<uintptr_t>(own)) : -code;
}

}  // namespace

// The imports' calls as plain wasm exports too: an import is one or two
// calls, and embind's generic invoker (no code is generated at run time)
// costs about 0.5 us each, as much as the core's work for a small batch
// (ts/abi/core.ts calls these when the module has them).
extern "C" EMSCRIPTEN_KEEPALIVE int acd_batch_import(uintptr_t schema, uintptr_t array, int level) {
  return BatchImport(schema, array, level);
}

extern "C" EMSCRIPTEN_KEEPALIVE int acd_array_validate_foreign(uintptr_t schema, uintptr_t array, int level,
                                                              double origin, double mapped, int preloaded) {
  return ArrayValidateForeign(schema, array, level, origin, mapped, preloaded);
}

extern "C" EMSCRIPTEN_KEEPALIVE double acd_array_import(uintptr_t schema, uintptr_t src, int level,
                                                        int schema_valid) {
  return ArrayImport(schema, src, level, schema_valid != 0);
}

// The slot scans (slots.c), plain wasm exports only: one call per buffer of
// a large array, which ts/validate/raw-shape.ts makes when the module has
// them (its own loops otherwise). The caller has checked the slots' bytes in
// memory and aligned for their width (4 or 8).
extern "C" EMSCRIPTEN_KEEPALIVE int acd_scan_offsets(uintptr_t offsets, int width, int from, int to,
                                                     double limit) {
  return width == 8 ? AcdScanOffsets64(AcdPtr<const int64_t>(offsets), from, to, limit)
                    : AcdScanOffsets32(AcdPtr<const int32_t>(offsets), from, to, limit);
}

extern "C" EMSCRIPTEN_KEEPALIVE int acd_scan_union(uintptr_t ids, uintptr_t offsets, int from, int to) {
  return AcdScanUnion(AcdPtr<const int8_t>(ids), AcdPtr<const int32_t>(offsets), from, to, &acd_scan_table);
}

extern "C" EMSCRIPTEN_KEEPALIVE int acd_scan_views(uintptr_t views, uintptr_t validity, int from, int to,
                                                   uintptr_t lengths, int n_variadic) {
  return AcdScanViews(AcdPtr<const int32_t>(views), AcdPtr<const uint8_t>(validity), from, to,
                      AcdPtr<const double>(lengths), n_variadic);
}

// Where TypeScript writes a union's table (struct AcdScanTable) before acd_scan_union.
extern "C" EMSCRIPTEN_KEEPALIVE uintptr_t acd_scan_table_address() {
  return reinterpret_cast<uintptr_t>(&acd_scan_table);
}

// Where TypeScript copies slots from outside the core's memory to scan them.
extern "C" EMSCRIPTEN_KEEPALIVE uintptr_t acd_scan_scratch_address() {
  return reinterpret_cast<uintptr_t>(acd_scan_scratch);
}

extern "C" EMSCRIPTEN_KEEPALIVE int acd_scan_scratch_bytes() { return ACD_SCAN_SCRATCH_BYTES; }

EMSCRIPTEN_BINDINGS(arrow_c_device_validate) {
  using emscripten::function;
  function("schemaValidate", &SchemaValidate);
  function("arrayValidate", &ArrayValidate);
  function("arrayValidateForeign", &ArrayValidateForeign);
  function("shadowScratch", &ShadowScratch);
  function("shadowScratchBytes", &ShadowScratchBytes);
  function("foreignPreloads", &ForeignPreloads);
  function("schemaImport", &SchemaImport);
  function("arrayImport", &ArrayImport);
  function("batchImport", &BatchImport);
  function("schemaKey", &SchemaKey);
  function("schemaCheck", &SchemaCheck);
  function("importOut", &ImportOutAddress);
  function("keyCapacity", &KeyCapacity);
}
