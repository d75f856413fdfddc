// The wasm exports of the model (embind): producing schemas and arrays (node
// by node, or whole trees from a flat descriptor), and
// checking a format string. Failures fill the error lastError() reads
// (abi/bindings.cpp).

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cstddef>
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

// Both trees of an export in one call, from the flat descriptor at `words`
// (model.h, AcdFlatInit); schema or array 0 to make only the other.
int FlatInit(uintptr_t words, double n_words, uintptr_t strings, double n_strings, uintptr_t schema,
             uintptr_t array) {
  return AcdFlatInit(AcdPtr<double>(words), static_cast<int64_t>(n_words), AcdPtr<const char>(strings),
                     static_cast<int64_t>(n_strings), AcdPtr<ArrowSchema>(schema), AcdPtr<ArrowArray>(array),
                     &acd_last_error);
}

// Where the exports' descriptors are written when they fit (ts/model/flat.ts):
// static, so that an export needs no allocation (and no call) for it. The
// descriptor's content is only read within one FlatExport or FlatInit call.
constexpr int kFlatScratchBytes = 256 * 1024;
alignas(16) unsigned char acd_flat_scratch[kFlatScratchBytes];

uintptr_t FlatScratch() { return reinterpret_cast<uintptr_t>(acd_flat_scratch); }
double FlatScratchBytes() { return kFlatScratchBytes; }

static_assert(offsetof(ArrowDeviceArray, array) == 0, "an ArrowDeviceArray starts with its ArrowArray");

// A whole export in one call: allocates a zeroed ArrowSchema and a zeroed
// array struct of array_size bytes (an ArrowArray, or an ArrowDeviceArray,
// whose ArrowArray comes first), makes both trees in them (AcdFlatInit) and
// writes their addresses into words[n_words] and words[n_words + 1]. On
// failure nothing stays allocated.
int FlatExport(uintptr_t words, double n_words, uintptr_t strings, double n_strings, double array_size) {
  double* out = AcdPtr<double>(words);
  int64_t n = static_cast<int64_t>(n_words);
  if (array_size < static_cast<double>(sizeof(ArrowArray))) {
    return AcdErrorSet(&acd_last_error, EINVAL, "array struct: expected at least %d bytes, found %.0f",
                       static_cast<int>(sizeof(ArrowArray)), array_size);
  }
  auto* schema = static_cast<ArrowSchema*>(AcdCalloc(1, sizeof(ArrowSchema)));
  void* array = AcdCalloc(1, static_cast<int64_t>(array_size));
  if (schema == nullptr || array == nullptr) {
    AcdFree(schema);
    AcdFree(array);
    return AcdErrorSet(&acd_last_error, ENOMEM, "out of memory allocating the base structs");
  }
  int code = AcdFlatInit(out, n, AcdPtr<const char>(strings), static_cast<int64_t>(n_strings), schema,
                         static_cast<ArrowArray*>(array), &acd_last_error);
  if (code != ACD_OK) {
    AcdFree(schema);
    AcdFree(array);
    return code;
  }
  out[n] = static_cast<double>(reinterpret_cast<uintptr_t>(schema));
  out[n + 1] = static_cast<double>(reinterpret_cast<uintptr_t>(array));
  return ACD_OK;
}

int FormatCheck(const std::string& format) {
  AcdFormat parsed;
  return AcdFormatParse(format.c_str(), &parsed, &acd_last_error);
}

// The function table indices of the releases that TypeScript writes into
// struct trees it lays out in one block (tree_block.c).
uintptr_t SchemaTreeRelease() { return reinterpret_cast<uintptr_t>(&AcdSchemaTreeRelease); }
uintptr_t ShadowArrayRelease() { return reinterpret_cast<uintptr_t>(&AcdShadowArrayRelease); }

}  // namespace

// FlatExport as a plain wasm export too: an export is one call, and embind's
// generic invoker costs about as much as the core's work for a small batch
// (ts/abi/core.ts calls this one when the module has it).
extern "C" EMSCRIPTEN_KEEPALIVE int acd_flat_export(uintptr_t words, double n_words, uintptr_t strings,
                                                    double n_strings, double array_size) {
  return FlatExport(words, n_words, strings, n_strings, array_size);
}

EMSCRIPTEN_BINDINGS(arrow_c_device_model) {
  using emscripten::function;
  function("schemaInit", &SchemaInit);
  function("arrayInit", &ArrayInit);
  function("arrayAllocateBuffer", &ArrayAllocateBuffer);
  function("flatInit", &FlatInit);
  function("flatExport", &FlatExport);
  function("flatScratch", &FlatScratch);
  function("flatScratchBytes", &FlatScratchBytes);
  function("formatCheck", &FormatCheck);
  function("schemaTreeRelease", &SchemaTreeRelease);
  function("shadowArrayRelease", &ShadowArrayRelease);
}
