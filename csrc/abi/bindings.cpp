// The wasm exports of the ABI level (embind): the last error, the allocator's
// accounting, moves and releases of the spec's structs. Each folder's
// bindings.cpp exports its own concept (model/, validate/, device/, stream/);
// embind gathers them into one module, so the names are the TS side's
// whatever file they live in. Pointers cross as unsigned 32-bit numbers,
// lengths as doubles (exact up to 2^53). Fallible calls return an
// errno-style code; the message of the last failure is read with
// lastError() (and its path in a struct tree with lastErrorPath()), which the TypeScript side turns into one error class.

#include <emscripten/bind.h>
#include <emscripten/emscripten.h>

#include <cstdint>
#include <string>

#include "abi/bindings.h"

AcdError acd_last_error = {{0}, {0}};

namespace {

std::string LastError() { return std::string(acd_last_error.message); }
// Where the last failure is in a struct tree ("" when it has no path).
std::string LastErrorPath() { return std::string(acd_last_error.path); }

double BytesAllocated() { return static_cast<double>(AcdBytesAllocated()); }

uintptr_t Alloc(double size) { return reinterpret_cast<uintptr_t>(AcdCalloc(1, static_cast<int64_t>(size))); }

void Free(uintptr_t ptr) { AcdFree(AcdPtr<void>(ptr)); }

double MemorySize() { return static_cast<double>(__builtin_wasm_memory_size(0)) * 65536.0; }

void SchemaMove(uintptr_t src, uintptr_t dst) { AcdSchemaMove(AcdPtr<ArrowSchema>(src), AcdPtr<ArrowSchema>(dst)); }
void ArrayMove(uintptr_t src, uintptr_t dst) { AcdArrayMove(AcdPtr<ArrowArray>(src), AcdPtr<ArrowArray>(dst)); }
void DeviceArrayMove(uintptr_t src, uintptr_t dst) {
  AcdDeviceArrayMove(AcdPtr<ArrowDeviceArray>(src), AcdPtr<ArrowDeviceArray>(dst));
}
// A release that cannot be called is reported (EINVAL, lastError) and the
// struct marked released (AcdSchemaReleaseChecked).
int SchemaRelease(uintptr_t schema) {
  return AcdSchemaReleaseChecked(AcdPtr<ArrowSchema>(schema), &acd_last_error);
}
int ArrayRelease(uintptr_t array) { return AcdArrayReleaseChecked(AcdPtr<ArrowArray>(array), &acd_last_error); }

// Maps another module's memory into the foreign window for a check, or
// unmaps it (size 0): see abi/window.c.
void ForeignMap(double origin, double size) {
  AcdForeignMapJs(static_cast<uint64_t>(origin), static_cast<uint64_t>(size));
}

}  // namespace

// Alloc, Free and the two releases as plain wasm exports too: embind's
// generic invoker costs about 0.2 µs a call, twenty times an allocation,
// and these run for every handle (its structs freed and released), and on
// every import in view mode from a module whose allocator is a core's
// (ts/abi/core.ts calls these when the module has them).
extern "C" EMSCRIPTEN_KEEPALIVE uintptr_t acd_alloc(double size) { return Alloc(size); }
extern "C" EMSCRIPTEN_KEEPALIVE void acd_free(uintptr_t ptr) { Free(ptr); }
extern "C" EMSCRIPTEN_KEEPALIVE int acd_schema_release(uintptr_t schema) { return SchemaRelease(schema); }
extern "C" EMSCRIPTEN_KEEPALIVE int acd_array_release(uintptr_t array) { return ArrayRelease(array); }

EMSCRIPTEN_BINDINGS(arrow_c_device) {
  using emscripten::function;
  function("lastError", &LastError);
  function("lastErrorPath", &LastErrorPath);
  function("bytesAllocated", &BytesAllocated);
  function("memorySize", &MemorySize);
  function("alloc", &Alloc);
  function("free", &Free);
  function("foreignMap", &ForeignMap);
  function("schemaMove", &SchemaMove);
  function("arrayMove", &ArrayMove);
  function("deviceArrayMove", &DeviceArrayMove);
  function("schemaRelease", &SchemaRelease);
  function("arrayRelease", &ArrayRelease);
}
