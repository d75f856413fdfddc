// arrow-c-device: the C core's own API (prefix Acd).
//
// Every fallible function returns ACD_OK (0) or an errno code (EINVAL,
// ENOMEM, ERANGE, ...) and, when `error` is not NULL, fills it with a message
// that says where, what was expected and what was found.

#ifndef ACD_H_INCLUDED
#define ACD_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "arrow_c_device.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ACD_OK 0

// ---- errors (error.c) ---------------------------------------------------

struct AcdError {
  char message[1024];
};

// Formats into error->message (when error is not NULL) and returns code.
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

// Whether [ptr, ptr + size) lies in readable memory. On wasm this is the
// linear memory's current size; natively only NULL is rejected.
int AcdAddressRangeValid(const void* ptr, int64_t size);

// ---- format strings (format.c) ------------------------------------------

enum AcdType {
  ACD_TYPE_UNINITIALIZED = 0,
  ACD_TYPE_NA,
  ACD_TYPE_BOOL,
  ACD_TYPE_INT8,
  ACD_TYPE_UINT8,
  ACD_TYPE_INT16,
  ACD_TYPE_UINT16,
  ACD_TYPE_INT32,
  ACD_TYPE_UINT32,
  ACD_TYPE_INT64,
  ACD_TYPE_UINT64,
  ACD_TYPE_HALF_FLOAT,
  ACD_TYPE_FLOAT,
  ACD_TYPE_DOUBLE,
  ACD_TYPE_BINARY,
  ACD_TYPE_LARGE_BINARY,
  ACD_TYPE_BINARY_VIEW,
  ACD_TYPE_STRING,
  ACD_TYPE_LARGE_STRING,
  ACD_TYPE_STRING_VIEW,
  ACD_TYPE_DECIMAL32,
  ACD_TYPE_DECIMAL64,
  ACD_TYPE_DECIMAL128,
  ACD_TYPE_DECIMAL256,
  ACD_TYPE_FIXED_SIZE_BINARY,
  ACD_TYPE_DATE32,
  ACD_TYPE_DATE64,
  ACD_TYPE_TIME32,
  ACD_TYPE_TIME64,
  ACD_TYPE_TIMESTAMP,
  ACD_TYPE_DURATION,
  ACD_TYPE_INTERVAL_MONTHS,
  ACD_TYPE_INTERVAL_DAY_TIME,
  ACD_TYPE_INTERVAL_MONTH_DAY_NANO,
  ACD_TYPE_LIST,
  ACD_TYPE_LARGE_LIST,
  ACD_TYPE_LIST_VIEW,
  ACD_TYPE_LARGE_LIST_VIEW,
  ACD_TYPE_FIXED_SIZE_LIST,
  ACD_TYPE_STRUCT,
  ACD_TYPE_MAP,
  ACD_TYPE_DENSE_UNION,
  ACD_TYPE_SPARSE_UNION,
  ACD_TYPE_RUN_END_ENCODED,
  ACD_TYPE_COUNT
};

enum AcdTimeUnit {
  ACD_TIME_UNIT_NONE = 0,
  ACD_TIME_UNIT_SECOND,
  ACD_TIME_UNIT_MILLI,
  ACD_TIME_UNIT_MICRO,
  ACD_TIME_UNIT_NANO
};

#define ACD_MAX_UNION_TYPE_IDS 128

// The parsed form of one format string. `timezone` points into the parsed
// string, so it lives as long as that string.
struct AcdFormat {
  enum AcdType type;
  enum AcdTimeUnit unit;
  // Bytes per value for fixed-width types (0 for bool, variable and nested).
  int32_t byte_width;
  // Decimals.
  int32_t precision;
  int32_t scale;
  // Fixed-size binary width in bytes; fixed-size list size.
  int64_t fixed_size;
  // Timestamps: NULL-terminated suffix after "ts?:" ("" when none).
  const char* timezone;
  // Unions.
  int32_t n_type_ids;
  int8_t type_ids[ACD_MAX_UNION_TYPE_IDS];
};

// Parses and checks a NULL-terminated format string. On error the message
// quotes the format string and says what was expected.
int AcdFormatParse(const char* format, struct AcdFormat* out, struct AcdError* error);

// A short lower-case name ("int32", "large_list_view", ...).
const char* AcdTypeName(enum AcdType type);

// The number of buffers an ArrowArray of this type has (binary/utf8 view:
// the minimum, 3 = validity, views, variadic sizes); the number of children
// a schema of this type has, or -1 when any number is allowed.
int64_t AcdTypeBufferCount(enum AcdType type);
int64_t AcdTypeChildCount(enum AcdType type);

// ---- metadata (metadata.c) ----------------------------------------------

// Byte size of an encoded metadata string (0 for NULL), after checking that
// it is well formed within `limit` bytes (-1: up to the end of readable
// memory). Returns -1 and fills error when it is not.
int64_t AcdMetadataSize(const char* metadata, int64_t limit, struct AcdError* error);

// ---- producing schemas (schema.c) ---------------------------------------

// Initializes `schema` (its previous content is ignored) with copies of
// format, name (NULL allowed) and metadata (NULL allowed; must be well formed),
// `flags`, and `n_children` zeroed child structs plus, when with_dictionary
// is non-zero, a zeroed dictionary struct, all owned by `schema`. The
// children and dictionary are released (when initialized) by schema's release.
// On failure nothing is allocated and schema->release is NULL.
int AcdSchemaInit(struct ArrowSchema* schema, const char* format, const char* name,
                  const char* metadata, int64_t flags, int64_t n_children,
                  int with_dictionary, struct AcdError* error);

// ---- producing arrays (array.c) -----------------------------------------

// Initializes `array` (its previous content is ignored) with the given
// fields, a NULL-filled buffers array of n_buffers pointers, n_children zeroed
// child structs and, when with_dictionary is non-zero, a zeroed dictionary
// struct. Buffers set with AcdArrayAllocateBuffer are owned by `array`.
// On failure nothing is allocated and array->release is NULL.
int AcdArrayInit(struct ArrowArray* array, int64_t length, int64_t null_count,
                 int64_t offset, int64_t n_buffers, int64_t n_children,
                 int with_dictionary, struct AcdError* error);

// Allocates buffer i (AcdBufferAlloc: aligned, padded; even for size 0, so
// that no consumer sees a NULL data buffer) owned by `array`, an array
// initialized by AcdArrayInit, and returns it: NULL when out of memory, when
// i is out of range or when buffer i is already set.
void* AcdArrayAllocateBuffer(struct ArrowArray* array, int64_t i, int64_t size);

// ---- moves and releases (move.c) ----------------------------------------

// Bitwise move: dst takes src's content and src is marked released without
// its release callback being called.
void AcdSchemaMove(struct ArrowSchema* src, struct ArrowSchema* dst);
void AcdArrayMove(struct ArrowArray* src, struct ArrowArray* dst);
void AcdDeviceArrayMove(struct ArrowDeviceArray* src, struct ArrowDeviceArray* dst);

// Calls the release callback when the struct is not released yet.
void AcdSchemaRelease(struct ArrowSchema* schema);
void AcdArrayRelease(struct ArrowArray* array);

// ---- device arrays (device.c) -------------------------------------------

// Sets device_id, device_type, a NULL sync_event and zeroed reserved bytes;
// `array` itself is initialized separately.
void AcdDeviceArrayInitDevice(struct ArrowDeviceArray* device_array,
                              ArrowDeviceType device_type, int64_t device_id);

// ---- validation (validate.c, validate_array.c, validate_content.c) -----

enum AcdValidationLevel {
  // Nothing but that the struct is not released.
  ACD_VALIDATION_NONE = 0,
  // Struct fields, pointers and buffer counts; no buffer sizes.
  ACD_VALIDATION_MINIMAL = 1,
  // Also buffer sizes from length + offset, reading the last offsets.
  ACD_VALIDATION_DEFAULT = 2,
  // Also every offset, UTF-8, union ids, run ends, dictionary indices.
  ACD_VALIDATION_FULL = 3
};

// Checks a schema tree: not released, every format parses, child counts match
// the type, metadata well formed, names and formats within readable memory,
// no cycles. Errors name the path ("root.children[1].dictionary: ...").
int AcdSchemaValidate(const struct ArrowSchema* schema, struct AcdError* error);

// Checks an array tree against its schema at `level`. From MINIMAL on, the
// schema is validated first (its errors are prefixed "schema: ").
int AcdArrayValidate(const struct ArrowSchema* schema, const struct ArrowArray* array,
                     enum AcdValidationLevel level, struct AcdError* error);

// -1 when the `size` bytes at `data` are valid UTF-8, else the offset of the
// first invalid sequence (utf8.c; shared by metadata.c and validation).
int64_t AcdUtf8Validate(const void* data, int64_t size);

// Internals shared by the validate*.c files: the path from the root
// ("root.children[2].dictionary") kept while walking a tree, so that every
// failure says where it happened.

#define ACD_VALIDATION_MAX_DEPTH 64
// Bounds the work of one validation: a tree that reuses the same child struct
// in many places would otherwise take time exponential in its depth.
#define ACD_VALIDATION_MAX_NODES (1 << 20)

struct AcdValidation {
  struct AcdError* error;
  int64_t nodes_left;
  size_t path_length;
  char path[1024];
};

void AcdValidationInit(struct AcdValidation* v, struct AcdError* error);

// Counts one visited node; fails once ACD_VALIDATION_MAX_NODES were visited.
int AcdValidationVisit(struct AcdValidation* v);

// Appends a path component; returns the mark that AcdValidationPop restores.
size_t AcdValidationPush(struct AcdValidation* v, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
void AcdValidationPop(struct AcdValidation* v, size_t mark);

// Fills the error with "<path>[.<field>]: <message>" (field may be NULL) and
// returns code.
int AcdValidationFail(struct AcdValidation* v, const char* field, int code, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

// Prefixes the message that a callee already put into the error with the
// path, and returns code.
int AcdValidationPrefix(struct AcdValidation* v, int code);

// Whether `size` bytes at ptr may be read (always when size is 0).
int AcdValidationReadable(const void* ptr, int64_t size);

// One array of the walk, with the facts derived from it once
// (validate_array.c; the FULL checks are in validate_content.c).
struct AcdArrayNode {
  const struct ArrowSchema* schema;
  const struct ArrowArray* array;
  enum AcdValidationLevel level;
  struct AcdFormat format;
  // offset + length, and the slots the buffers must cover (0 when empty).
  int64_t end;
  int64_t extent;
  // The validity bitmap; NULL when absent or when the type has none.
  const uint8_t* validity;
  // Binary, utf8, list and map, from DEFAULT on: offsets[end].
  int64_t last_offset;
};

// Element i of a buffer of signed integers of `width` bytes (1, 2, 4, 8),
// read with memcpy because buffers need not be aligned.
int64_t AcdReadInt(const void* data, int64_t i, int width);

// The FULL checks of one array whose buffers, children and dictionary were
// validated at DEFAULT and above.
int AcdArrayValidateContent(struct AcdValidation* v, const struct AcdArrayNode* node);

#ifdef __cplusplus
}
#endif

#endif  // ACD_H_INCLUDED
