// Shared by the embind bindings of abi/, model/ and validate/ (C++, wasm
// only): the error that lastError() reads, which their exports fill on
// failure, and the cast of a wasm32 address to a pointer.

#ifndef ACD_ABI_BINDINGS_H_INCLUDED
#define ACD_ABI_BINDINGS_H_INCLUDED

#include <cstdint>

#include "abi/abi.h"

// Defined in abi/bindings.cpp.
extern AcdError acd_last_error;

template <typename T>
T* AcdPtr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

#endif  // ACD_ABI_BINDINGS_H_INCLUDED
