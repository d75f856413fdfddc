// The wasm exports of the model (embind): producing schemas and arrays, and
// checking a format string. Failures fill the error lastError() reads
// (abi/bindings.cpp).

#include <emscripten/bind.h>

#include <cstdint>
#include <string>

#include "abi/bindings.h"
#include "model/model.h"

namespace {

int SchemaInit(uintptr_t schema, const std::string& format, bool has_name, const std::string& name,
               bool has_metadata, const std::string& metadata, double flags, double n_children,
               bool with_dictionary) {
  if (format.find('\0') != std::string::npos) {
    return AcdErrorSet(&acd_last_error, EINVAL, "format contains a NUL byte");
  }
  if (has_name && name.find('\0') != std::string::npos) {
    return AcdErrorSet(&acd_last_error, EINVAL, "name '%s' contains a NUL byte", name.c_str());
  }
  return AcdSchemaInit(AcdPtr<ArrowSchema>(schema), format.c_str(), has_name ? name.c_str() : nullptr,
                       has_metadata ? metadata.data() : nullptr, static_cast<int64_t>(flags),
                       static_cast<int64_t>(n_children), with_dictionary ? 1 : 0, &acd_last_error);
}

int ArrayInit(uintptr_t array, double length, double null_count, double offset, double n_buffers,
              double n_children, bool with_dictionary) {
  return AcdArrayInit(AcdPtr<ArrowArray>(array), static_cast<int64_t>(length),
                      static_cast<int64_t>(null_count), static_cast<int64_t>(offset),
                      static_cast<int64_t>(n_buffers), static_cast<int64_t>(n_children),
                      with_dictionary ? 1 : 0, &acd_last_error);
}

uintptr_t ArrayAllocateBuffer(uintptr_t array, double i, double size) {
  void* out = AcdArrayAllocateBuffer(AcdPtr<ArrowArray>(array), static_cast<int64_t>(i),
                                     static_cast<int64_t>(size));
  if (out == nullptr) {
    AcdErrorSet(&acd_last_error, ENOMEM, "buffers[%lld]: could not allocate %.0f bytes",
                static_cast<long long>(i), size);
  }
  return reinterpret_cast<uintptr_t>(out);
}

int FormatCheck(const std::string& format) {
  AcdFormat parsed;
  return AcdFormatParse(format.c_str(), &parsed, &acd_last_error);
}

// Where schemaKey writes when given no buffer: most keys fit, and a static
// buffer is neither an allocation nor a call to make one.
constexpr int64_t kKeyBufferSize = 4096;
alignas(8) uint8_t acd_key_buffer[kKeyBufferSize];

// The key of a validated schema (schema_key.c) into out (0: the static
// buffer) when it fits in capacity bytes; returns its size.
double SchemaKey(uintptr_t schema, uintptr_t out, double capacity) {
  uint8_t* to = out == 0 ? acd_key_buffer : AcdPtr<uint8_t>(out);
  int64_t room = out == 0 ? kKeyBufferSize : static_cast<int64_t>(capacity);
  return static_cast<double>(AcdSchemaKey(AcdPtr<const ArrowSchema>(schema), to, room));
}

uintptr_t SchemaKeyBuffer() { return reinterpret_cast<uintptr_t>(acd_key_buffer); }

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device_model) {
  using emscripten::function;
  function("schemaInit", &SchemaInit);
  function("arrayInit", &ArrayInit);
  function("arrayAllocateBuffer", &ArrayAllocateBuffer);
  function("formatCheck", &FormatCheck);
  function("schemaKey", &SchemaKey);
  function("schemaKeyBuffer", &SchemaKeyBuffer);
}
