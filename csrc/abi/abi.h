// arrow-c-device, the C core's own API (prefix Acd), part 1 of 5: the ABI
// level. Errors, the counting allocator, addresses, callbacks checked before
// they are called, moves and releases of the spec's structs. Depends on
// nothing but the spec's header (csrc/arrow_c_device.h).
//
// The core's folders and their headers, each including only the one below:
//   abi/abi.h < model/model.h < validate/validate.h < device/device.h < stream/stream.h
//
// Every fallible function returns ACD_OK (0) or an errno code (EINVAL,
// ENOMEM, ERANGE, ...) and, when `error` is not NULL, fills it with a message
// that says where, what was expected and what was found.

#ifndef ACD_ABI_H_INCLUDED
#define ACD_ABI_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "arrow_c_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACD_OK 0

// ---- errors (error.c) ---------------------------------------------------

struct AcdError {
  char message[1024];
  // Where in a struct tree the failure is ("root.children[1].buffers[2]"),
  // kept apart from the message so that callers need not parse it: set by
  // the validator's walk (validate/walk.c), "" when the failure has no path.
  char path[512];
};

// Formats into error->message (when error is not NULL), clears error->path
// and returns code.
int AcdErrorSet(struct AcdError* error, int code, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

// Prepends "prefix: " to the message already in error (NULL allowed).
void AcdErrorPrefix(struct AcdError* error, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

// ---- allocation (alloc.c) -----------------------------------------------
// Every allocation of the core goes through these, so that the live byte
// count returns to its start value once everything exported is released.

void* AcdMalloc(int64_t size);
void* AcdCalloc(int64_t count, int64_t size);
void AcdFree(void* ptr);
// 64-byte aligned and padded to a multiple of 64 bytes (at least 64), the
// padding zero-filled (Arrow's recommendation); the payload is the caller's
// to fill.
void* AcdBufferAlloc(int64_t size);
void AcdBufferFree(void* ptr);
int64_t AcdBytesAllocated(void);

// Whether ptr is the start of a live block of AcdMalloc/AcdCalloc/
// AcdBufferAlloc (each block carries a magic tied to its address, cleared on
// free). AcdFree refuses any other pointer instead of corrupting the heap.
int AcdBlockLive(const void* ptr);

// Whether [ptr, ptr + size) lies inside the live block that starts at `block`
// (for private data that points into a block shared by several structs).
int AcdBlockContains(const void* block, const void* ptr, int64_t size);

// The private data of this library's callbacks starts with one of these
// tags, checked before use: a corrupted struct may point its release at our
// function with another struct's private_data.
enum AcdPrivateKind {
  ACD_KIND_SCHEMA = 0x53434831,       // "SCH1"
  ACD_KIND_ARRAY = 0x41525231,        // "ARR1"
  ACD_KIND_DEVICE_ARRAY = 0x44415231, // "DAR1"
  ACD_KIND_SOURCE_STREAM = 0x53545231, // "STR1"
  ACD_KIND_SCHEMA_COPY = 0x53424b31,  // "SBK1": a schema tree TypeScript wrote in one block (model/tree_block.c)
  ACD_KIND_SCHEMA_TREE = 0x53434854,  // "SCHT": an exported schema tree in one block (model/tree.c)
  ACD_KIND_ARRAY_TREE = 0x41525254    // "ARRT": an exported array tree in one block
};

// Whether private_data is a live block of ours tagged `kind`.
int AcdPrivateIs(const void* private_data, enum AcdPrivateKind kind);

// ---- callbacks (callback.c) ------------------------------------------------
// Every call of a function pointer read from a struct is checked first: on
// wasm an index out of the table, NULL, or of another signature traps.

// The wasm signatures of the spec's callbacks (Emscripten notation; pointers
// are i32 on wasm32, int64_t is i64). The TS side uses the same numbers.
enum AcdSignature {
  ACD_SIG_V_P = 1,    // 'vi':    void(T*)
  ACD_SIG_I_PP = 2,   // 'iii':   int(T*, U*)
  ACD_SIG_P_P = 3,    // 'ii':    const char*(T*)
  ACD_SIG_V_PJ = 4,   // 'vij':   void(T*, int64_t)
  ACD_SIG_I_PPP = 5,  // 'iiii':  int(T*, U*, const char*)
  ACD_SIG_V_PIPP = 6  // 'viiii': void(T*, int, const char*, const char*)
};

// The member a callback is called as.
enum AcdCallbackRole {
  ACD_ROLE_SCHEMA_RELEASE,
  ACD_ROLE_ARRAY_RELEASE,
  ACD_ROLE_ARRAY_STREAM_GET_SCHEMA,
  ACD_ROLE_ARRAY_STREAM_GET_NEXT,
  ACD_ROLE_ARRAY_STREAM_GET_LAST_ERROR,
  ACD_ROLE_ARRAY_STREAM_RELEASE,
  ACD_ROLE_DEVICE_STREAM_GET_SCHEMA,
  ACD_ROLE_DEVICE_STREAM_GET_NEXT,
  ACD_ROLE_DEVICE_STREAM_GET_LAST_ERROR,
  ACD_ROLE_DEVICE_STREAM_RELEASE,
  ACD_ROLE_HANDLER_ON_SCHEMA,
  ACD_ROLE_HANDLER_ON_NEXT_TASK,
  ACD_ROLE_HANDLER_ON_ERROR,
  ACD_ROLE_HANDLER_RELEASE,
  ACD_ROLE_PRODUCER_REQUEST,
  ACD_ROLE_PRODUCER_CANCEL,
  ACD_ROLE_TASK_EXTRACT_DATA,
  ACD_ROLE_COUNT
};

// Whether fn may be called as `role`: not NULL; in the function table with
// the role's exact signature (natively: not NULL); and, when it is one of
// this library's callbacks, one made for that role.
int AcdCallbackValid(void (*fn)(void), enum AcdCallbackRole role);
#define ACD_CALLBACK_VALID(fn, role) AcdCallbackValid((void (*)(void))(fn), (role))

// "expected a function void(struct ArrowArray*) ..., found ..." into out.
const char* AcdCallbackDescribe(void (*fn)(void), enum AcdCallbackRole role, char* out,
                                size_t size);

// ACD_OK, or EINVAL with "<where>: expected ..., found ..." in error.
int AcdCallbackCheck(void (*fn)(void), enum AcdCallbackRole role, const char* where,
                     struct AcdError* error);
#define ACD_CALLBACK_CHECK(fn, role, where, error) \
  AcdCallbackCheck((void (*)(void))(fn), (role), (where), (error))

// The body of Acd<Struct>ReleaseChecked, for the four structs that have a
// release: a misaligned struct is refused unread; a release that cannot be
// called, or that returns without marking the struct released, is not called
// (again): the struct is marked released and what it holds leaks.
#define ACD_RELEASE_CHECKED(ptr, type, role, noun, error)                                      \
  do {                                                                                         \
    if ((ptr) == NULL) return ACD_OK;                                                          \
    if (!ACD_IS_ALIGNED((ptr), _Alignof(struct type))) {                                       \
      return AcdErrorSet((error), EINVAL, "release: the struct " #type " at %p is misaligned", \
                         (void*)(ptr));                                                        \
    }                                                                                          \
    if ((ptr)->release == NULL) return ACD_OK;                                                 \
    int code_ = ACD_CALLBACK_CHECK((ptr)->release, (role), "release", (error));                \
    if (code_ == ACD_OK) {                                                                     \
      (ptr)->release(ptr);                                                                     \
      if ((ptr)->release == NULL) return ACD_OK;                                               \
      code_ = AcdErrorSet((error), EINVAL,                                                     \
                          "release: the callback returned without marking the " noun          \
                          " released");                                                        \
    }                                                                                          \
    (ptr)->release = NULL;                                                                     \
    return code_;                                                                              \
  } while (0)

// Records fn as one of this library's callbacks, made for `role` only, so
// that AcdCallbackValid refuses it in any other role (a stream's release in an
// array's release, although both are void(T*)). The files that define such
// callbacks call it from an ACD_CONSTRUCTOR, so that the table is complete
// before any struct is checked, whichever folder the callback lives in.
void AcdCallbackRegister(void (*fn)(void), enum AcdCallbackRole role);
#define ACD_CALLBACK_REGISTER(fn, role) AcdCallbackRegister((void (*)(void))(fn), (role))

// A function run once before main (natively) or when the wasm module starts
// (emcc runs constructors from __wasm_call_ctors). GCC and clang (emcc too).
#define ACD_CONSTRUCTOR(name)                            \
  static void name(void) __attribute__((constructor)); \
  static void name(void)

// Whether ptr is aligned to `alignment` bytes (a struct's, or a pointer's).
#define ACD_IS_ALIGNED(ptr, alignment) (((uintptr_t)(ptr) % (uintptr_t)(alignment)) == 0)

// ---- addresses (address.c) -----------------------------------------------
// What a pointer may be read as. Host memory is the linear memory on wasm
// (everything but NULL natively); the simulated devices (device/) own a window
// of addresses that is never host memory, and tell, through the hooks they
// register, which other host ranges a pending operation is still writing.

#if UINTPTR_MAX > 0xFFFFFFFFu
// LP64: non-canonical addresses on x86-64 and aarch64, never host pointers.
#define ACD_DEVICE_ADDRESS_BASE ((uintptr_t)0x7F00000000000000ull)
#define ACD_FOREIGN_ADDRESS_BASE ((uintptr_t)0x7E00000000000000ull)
#else
// wasm32: build.sh caps the linear memory at 2 GiB, so [2^31, 2^32) is never
// host memory: its lower half is the device window, its upper half the
// foreign window (window.c).
#define ACD_DEVICE_ADDRESS_BASE ((uintptr_t)0x80000000u)
#define ACD_FOREIGN_ADDRESS_BASE ((uintptr_t)0xC0000000u)
#endif
#define ACD_DEVICE_ADDRESS_SIZE ((uintptr_t)0x40000000u)
#define ACD_FOREIGN_ADDRESS_SIZE ((uintptr_t)0x40000000u)

// Whether [ptr, ptr + size) lies in readable memory. On wasm this is the
// linear memory's current size; natively only NULL is rejected. Both reject
// the device window and, through the registered hook, pending host-accessible
// device memory (AcdDeviceRangeReadable). A foreign-window range is readable
// when it lies within the mapped size (window.c).
int AcdAddressRangeValid(const void* ptr, int64_t size);

// Whether the size bytes at a and at b are the same (both readable), 8 at a
// time: wasm's libc memcmp goes a byte at a time, and the schema keys and
// the kept schema trees' descriptors are compared on every import and export.
int AcdBytesSame(const void* a, const void* b, int64_t size);

// Fills `out` with what ptr is, for a message about a failed host read
// (", which is memory of device cuda:1, not host memory: ..."); "" when it is
// ordinary host memory.
void AcdAddressDescribe(const void* ptr, int64_t size, char* out, size_t out_size);

// Whether [address, address + size) (at least one byte) meets the device window.
int AcdAddressInDeviceWindow(uintptr_t address, int64_t size);

// What the owner of the device window says about a host range: `readable`
// answers 0 while a pending operation writes it; `describe` fills out and
// returns 1 when ptr lies in one of its allocations, else returns 0. Set once
// by device/memory.c, before its first allocation (until then no range is its).
struct AcdAddressOwner {
  int (*readable)(const void* ptr, int64_t size);
  int (*describe)(const void* ptr, int64_t size, char* out, size_t out_size);
};
void AcdAddressSetOwner(const struct AcdAddressOwner* owner);

// ---- the foreign window (window.c) ----------------------------------------
// Addresses that stand for the bytes of another memory: another wasm module's
// linear memory, which C on wasm cannot address. The validator checks an
// array that lives there through shadow structs in this memory whose buffer
// pointers are foreign-window addresses (ACD_FOREIGN_ADDRESS_BASE + offset):
// range checks compare with the mapped size, and every read of buffer content
// goes through AcdLoad, which fetches the bytes with the mapped reader (a
// small cache of lines keeps sequential scans to one fetch per line).

// Fills dst with the n bytes at `address` of the foreign memory; nonzero when
// the range is outside it.
typedef int (*AcdForeignRead)(uint64_t address, void* dst, size_t n);

// Maps `size` bytes of the foreign memory from address `origin` (window
// offset 0 is foreign address origin), at most ACD_FOREIGN_ADDRESS_SIZE - 1,
// read through `read`; a NULL read or size 0 unmaps. Either way the cache and
// the preloaded entries are dropped.
void AcdForeignMap(AcdForeignRead read, uint64_t origin, uint64_t size);

#if defined(__EMSCRIPTEN__)
// AcdForeignMap with the reader that asks Module.acdForeignRead (wasm only).
void AcdForeignMapJs(uint64_t origin, uint64_t size);
#endif

// Whether [address, address + size) (at least one byte) meets the foreign window.
int AcdAddressInForeignWindow(uintptr_t address, int64_t size);

// Whether [address, address + size) lies in the mapped part of the window.
int AcdForeignRangeReadable(uintptr_t address, int64_t size);

// The foreign address a window address stands for (origin + offset), and the
// end of the mapped part (origin + size).
uint64_t AcdForeignAddressOf(uintptr_t address);
uint64_t AcdForeignEnd(void);

// Bytes of the mapped memory handed in before a validation by an embedder
// that knows which reads the validator makes (at 'default', an offsets
// buffer's first and last entries): a read that falls within one is served
// from it, without a call of the reader. Up to ACD_FOREIGN_PRELOADS entries
// of up to 8 bytes each, every one a copy of the mapped memory's bytes at
// `at` (a window offset) when it is handed in; AcdForeignMap drops them.
#define ACD_FOREIGN_PRELOADS 64
struct AcdForeignPreload {
  uint64_t at;
  uint32_t size;
  uint32_t unused;
  uint8_t bytes[8];
};

// Adds one entry (a copy of the n bytes at `at`); nonzero, and nothing
// added, when the table is full, n is 0 or above 8, or the range is not
// within the mapped size.
int AcdForeignPreload(uint64_t at, const void* bytes, size_t n);

// The table itself, for an embedder that writes its entries in place (the
// TypeScript side, ts/exchange/foreign-shadow.ts), then declares how many
// with AcdForeignPreloaded after AcdForeignMap. Entries whose range is not
// within the mapped size, or whose size is 0 or above 8, are never used.
struct AcdForeignPreload* AcdForeignPreloadTable(void);
void AcdForeignPreloaded(int count);

// A read of n bytes at a foreign-window address (AcdLoad's slow path).
void AcdForeignLoad(const void* ptr, void* dst, size_t n);

static inline int AcdIsForeignAddress(const void* ptr) {
  return (uintptr_t)ptr - ACD_FOREIGN_ADDRESS_BASE < ACD_FOREIGN_ADDRESS_SIZE;
}

// Copies n bytes at ptr into dst: a plain copy for host memory, a read
// through the mapped reader for a foreign-window address. ptr must have been
// checked readable (AcdAddressRangeValid) for those bytes.
static inline void AcdLoad(const void* ptr, void* dst, size_t n) {
  if (AcdIsForeignAddress(ptr)) {
    AcdForeignLoad(ptr, dst, n);
  } else {
    memcpy(dst, ptr, n);
  }
}

// AcdLoad of one byte.
static inline uint8_t AcdLoadU8(const void* ptr) {
  if (!AcdIsForeignAddress(ptr)) return *(const uint8_t*)ptr;
  uint8_t x;
  AcdForeignLoad(ptr, &x, 1);
  return x;
}

// ---- moves and releases (move.c) ----------------------------------------

// Bitwise move: dst takes src's content and src is marked released without
// its release callback being called.
void AcdSchemaMove(struct ArrowSchema* src, struct ArrowSchema* dst);
void AcdArrayMove(struct ArrowArray* src, struct ArrowArray* dst);
void AcdDeviceArrayMove(struct ArrowDeviceArray* src, struct ArrowDeviceArray* dst);

// Calls the release callback when the struct is not released yet. A release
// that is not a callable function of the right kind (ACD_CALLBACK_VALID) is
// never called: the struct is marked released (release = NULL) and what it
// holds is leaked, the only safe outcome, and EINVAL says so in error (NULL
// allowed). So is a release that returned without marking the struct
// released, as the spec requires. Either way the caller owns nothing after.
int AcdSchemaReleaseChecked(struct ArrowSchema* schema, struct AcdError* error);
int AcdArrayReleaseChecked(struct ArrowArray* array, struct AcdError* error);
void AcdSchemaRelease(struct ArrowSchema* schema);
void AcdArrayRelease(struct ArrowArray* array);

#ifdef __cplusplus
}
#endif

#endif  // ACD_ABI_H_INCLUDED
