// Every export of the wasm core, in one place (embind). Pointers cross as
// unsigned 32-bit numbers, lengths as doubles (exact up to 2^53). Fallible
// calls return an errno-style code; the message of the last failure is read
// with lastError(), which the TypeScript side turns into one error class.

#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "abi/abi.h"

namespace {

AcdError last_error = {{0}};

template <typename T>
T* Ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}


std::string LastError() { return std::string(last_error.message); }

double BytesAllocated() { return static_cast<double>(AcdBytesAllocated()); }

uintptr_t Alloc(double size) { return reinterpret_cast<uintptr_t>(AcdCalloc(1, static_cast<int64_t>(size))); }

void Free(uintptr_t ptr) { AcdFree(Ptr<void>(ptr)); }

double MemorySize() { return static_cast<double>(__builtin_wasm_memory_size(0)) * 65536.0; }

int SchemaInit(uintptr_t schema, const std::string& format, bool has_name, const std::string& name,
               bool has_metadata, const std::string& metadata, double flags, double n_children,
               bool with_dictionary) {
  if (format.find('\0') != std::string::npos) {
    return AcdErrorSet(&last_error, EINVAL, "format contains a NUL byte");
  }
  if (has_name && name.find('\0') != std::string::npos) {
    return AcdErrorSet(&last_error, EINVAL, "name '%s' contains a NUL byte", name.c_str());
  }
  return AcdSchemaInit(Ptr<ArrowSchema>(schema), format.c_str(), has_name ? name.c_str() : nullptr,
                       has_metadata ? metadata.data() : nullptr, static_cast<int64_t>(flags),
                       static_cast<int64_t>(n_children), with_dictionary ? 1 : 0, &last_error);
}

int ArrayInit(uintptr_t array, double length, double null_count, double offset, double n_buffers,
              double n_children, bool with_dictionary) {
  return AcdArrayInit(Ptr<ArrowArray>(array), static_cast<int64_t>(length),
                      static_cast<int64_t>(null_count), static_cast<int64_t>(offset),
                      static_cast<int64_t>(n_buffers), static_cast<int64_t>(n_children),
                      with_dictionary ? 1 : 0, &last_error);
}

uintptr_t ArrayAllocateBuffer(uintptr_t array, double i, double size) {
  void* out = AcdArrayAllocateBuffer(Ptr<ArrowArray>(array), static_cast<int64_t>(i),
                                     static_cast<int64_t>(size));
  if (out == nullptr) {
    AcdErrorSet(&last_error, ENOMEM, "buffers[%lld]: could not allocate %.0f bytes",
                static_cast<long long>(i), size);
  }
  return reinterpret_cast<uintptr_t>(out);
}

void DeviceArrayInitDevice(uintptr_t device_array, int device_type, double device_id) {
  AcdDeviceArrayInitDevice(Ptr<ArrowDeviceArray>(device_array), device_type,
                           static_cast<int64_t>(device_id));
}

void SchemaMove(uintptr_t src, uintptr_t dst) { AcdSchemaMove(Ptr<ArrowSchema>(src), Ptr<ArrowSchema>(dst)); }
void ArrayMove(uintptr_t src, uintptr_t dst) { AcdArrayMove(Ptr<ArrowArray>(src), Ptr<ArrowArray>(dst)); }
void DeviceArrayMove(uintptr_t src, uintptr_t dst) {
  AcdDeviceArrayMove(Ptr<ArrowDeviceArray>(src), Ptr<ArrowDeviceArray>(dst));
}
// A release that cannot be called is reported (EINVAL, lastError) and the
// struct marked released (AcdSchemaReleaseChecked).
int SchemaRelease(uintptr_t schema) {
  return AcdSchemaReleaseChecked(Ptr<ArrowSchema>(schema), &last_error);
}
int ArrayRelease(uintptr_t array) { return AcdArrayReleaseChecked(Ptr<ArrowArray>(array), &last_error); }

int SchemaValidate(uintptr_t schema) { return AcdSchemaValidate(Ptr<const ArrowSchema>(schema), &last_error); }

int ArrayValidate(uintptr_t schema, uintptr_t array, int level, bool schema_valid) {
  if (level < ACD_VALIDATION_NONE || level > ACD_VALIDATION_FULL) {
    return AcdErrorSet(&last_error, EINVAL, "validation level: expected 0 to 3, found %d", level);
  }
  auto validate = schema_valid ? &AcdArrayValidateWithValidSchema : &AcdArrayValidate;
  return validate(Ptr<const ArrowSchema>(schema), Ptr<const ArrowArray>(array),
                          static_cast<AcdValidationLevel>(level), &last_error);
}

int FormatCheck(const std::string& format) {
  AcdFormat parsed;
  return AcdFormatParse(format.c_str(), &parsed, &last_error);
}

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device) {
  using emscripten::function;
  function("lastError", &LastError);
  function("bytesAllocated", &BytesAllocated);
  function("memorySize", &MemorySize);
  function("alloc", &Alloc);
  function("free", &Free);
  function("schemaInit", &SchemaInit);
  function("arrayInit", &ArrayInit);
  function("arrayAllocateBuffer", &ArrayAllocateBuffer);
  function("deviceArrayInitDevice", &DeviceArrayInitDevice);
  function("schemaMove", &SchemaMove);
  function("arrayMove", &ArrayMove);
  function("deviceArrayMove", &DeviceArrayMove);
  function("schemaRelease", &SchemaRelease);
  function("arrayRelease", &ArrayRelease);
  function("schemaValidate", &SchemaValidate);
  function("arrayValidate", &ArrayValidate);
  function("formatCheck", &FormatCheck);
}
