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

// Whether ptr is the start of a live block of AcdMalloc/AcdCalloc/
// AcdBufferAlloc (each block carries a magic tied to its address, cleared on
// free). AcdFree refuses any other pointer instead of corrupting the heap.
int AcdBlockLive(const void* ptr);

// The private data of this library's callbacks starts with one of these
// tags, checked before use: a corrupted struct may point its release at our
// function with another struct's private_data.
enum AcdPrivateKind {
  ACD_KIND_SCHEMA = 0x53434831,       // "SCH1"
  ACD_KIND_ARRAY = 0x41525231,        // "ARR1"
  ACD_KIND_DEVICE_ARRAY = 0x44415231, // "DAR1"
  ACD_KIND_SOURCE_STREAM = 0x53545231 // "STR1"
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

// This library's callbacks (known to callback.c with their roles).
void AcdSchemaReleaseOwned(struct ArrowSchema* schema);
void AcdArrayReleaseOwned(struct ArrowArray* array);
void AcdDeviceArrayReleaseNode(struct ArrowArray* array);
int AcdArraySourceGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out);
int AcdArraySourceGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out);
const char* AcdArraySourceGetLastError(struct ArrowArrayStream* stream);
void AcdArraySourceRelease(struct ArrowArrayStream* stream);
int AcdDeviceSourceGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out);
int AcdDeviceSourceGetNext(struct ArrowDeviceArrayStream* stream, struct ArrowDeviceArray* out);
const char* AcdDeviceSourceGetLastError(struct ArrowDeviceArrayStream* stream);
void AcdDeviceSourceRelease(struct ArrowDeviceArrayStream* stream);

// Whether [ptr, ptr + size) lies in readable memory. On wasm this is the
// linear memory's current size; natively only NULL is rejected. Both reject
// simulated device memory and pending host-accessible device memory
// (AcdDeviceRangeReadable).
int AcdAddressRangeValid(const void* ptr, int64_t size);

// The length of the NUL-terminated string at s, or -1 when s is NULL or the
// string runs past readable memory.
int64_t AcdStringLength(const char* s);

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

// The start of the private data of every array block: its kind tag and
// where its children and dictionary are (the struct's own fields are the
// consumer's to change).
struct AcdArrayBlock {
  uint32_t kind;
  int64_t n_children;
  struct ArrowArray* children;
  struct ArrowArray* dictionary;
};

// Releases the children and the dictionary of a block (those not moved out).
void AcdArrayBlockReleaseChildren(struct AcdArrayBlock* block);

// The allocation behind AcdArrayInit, for producers with private data of
// their own: initializes `array` the same way, in one block that starts with
// private_size zeroed bytes (*private_data; array->private_data points there;
// they start with a struct AcdArrayBlock tagged `kind`, filled here) and
// holds n_buffers zeroed slots for the buffers the producer will own
// (*owned); release becomes array->release. On failure nothing is allocated
// and array->release is NULL.
int AcdArrayInitBlock(struct ArrowArray* array, int64_t length, int64_t null_count,
                      int64_t offset, int64_t n_buffers, int64_t n_children,
                      int with_dictionary, int64_t private_size, enum AcdPrivateKind kind,
                      void (*release)(struct ArrowArray*), void** private_data, void*** owned,
                      struct AcdError* error);

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

// Like AcdArrayValidate, without checking the schema again: for a schema that
// AcdSchemaValidate accepted and that nobody can have changed since (one the
// caller owns). Validating an array walks the schema anyway; this saves the
// second, separate walk.
int AcdArrayValidateWithValidSchema(const struct ArrowSchema* schema,
                                    const struct ArrowArray* array,
                                    enum AcdValidationLevel level, struct AcdError* error);

// -1 when the `size` bytes at `data` are valid UTF-8, else the offset of the
// first invalid sequence (utf8.c; shared by metadata.c and validation).
int64_t AcdUtf8Validate(const void* data, int64_t size);

// Internals shared by the validate*.c files: the path from the root
// ("root.children[2].dictionary") kept while walking a tree, so that every
// failure says where it happened.

#define ACD_VALIDATION_MAX_DEPTH 64
// Bounds the work of one validation. A struct reached twice is refused
// (AcdValidationVisitStruct), so a walk visits each struct once and its work
// is bounded by the input's size; this caps that size.
#define ACD_VALIDATION_MAX_NODES (1 << 20)

// Structs seen by one walk: an open-addressing set of addresses, inline for
// small trees, on the heap (AcdValidationEnd frees it) for larger ones.
#define ACD_VALIDATION_SEEN_INLINE 64

struct AcdValidation {
  struct AcdError* error;
  int64_t nodes_left;
  size_t path_length;
  char path[1024];
  const void* root;  // the walk's root, for AcdValidationVisitStruct
  uintptr_t* seen;
  size_t seen_capacity;  // 0 until the first struct is recorded
  size_t seen_count;
  uintptr_t seen_inline[ACD_VALIDATION_SEEN_INLINE];
};

void AcdValidationInit(struct AcdValidation* v, struct AcdError* error);
// Frees what the walk allocated (the seen set, when it outgrew its inline
// room). Any walk that called AcdValidationSeen ends with it.
void AcdValidationEnd(struct AcdValidation* v);

// Records a struct reached by the walk: 0 the first time, 1 when it was
// reached before (the tree is a DAG or has a cycle), -1 when out of memory.
int AcdValidationSeen(struct AcdValidation* v, const void* ptr);

enum AcdTreeKind { ACD_TREE_SCHEMA, ACD_TREE_ARRAY };

// Records node (a struct ArrowSchema or ArrowArray under v->root) as reached;
// fails with both paths when it was reached before ("root.children[1]: the
// same struct ArrowArray as root.children[0] ..."): a DAG would make the
// work exponential in the depth.
int AcdValidationVisitStruct(struct AcdValidation* v, const void* root, const void* node,
                             enum AcdTreeKind kind);
int AcdTreeFindPath(const void* node, const void* target, enum AcdTreeKind kind, char* path,
                    size_t size, int depth);

// Counts one visited node; fails once ACD_VALIDATION_MAX_NODES were visited.
int AcdValidationVisit(struct AcdValidation* v);

// Appends ".children[i]", or any text, to the path; return the mark that
// AcdValidationPop restores. Cheaper than AcdValidationPush.
size_t AcdValidationPushChild(struct AcdValidation* v, int64_t i);
size_t AcdValidationPushText(struct AcdValidation* v, const char* text);

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

// Whether ptr is aligned to `alignment` bytes (a struct's, or a pointer's).
#define ACD_IS_ALIGNED(ptr, alignment) (((uintptr_t)(ptr) % (uintptr_t)(alignment)) == 0)

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

// ---- streams (stream.c, stream_source.c) ---------------------------------
// Pull streams as the C Stream Interface and the C Device Stream Interface
// define them (modelled on nanoarrow's array_stream.c): moves, consumer-side
// calls that enforce the protocol, a C producer over a batch source, and a C
// consumer that drains a stream.

// Bitwise moves: dst takes src's content and src is marked released
// (release = NULL) without its release callback being called.
void AcdArrayStreamMove(struct ArrowArrayStream* src, struct ArrowArrayStream* dst);
void AcdDeviceArrayStreamMove(struct ArrowDeviceArrayStream* src,
                              struct ArrowDeviceArrayStream* dst);

// Calls the release callback when the stream is not released yet (NULL allowed).
void AcdArrayStreamRelease(struct ArrowArrayStream* stream);
void AcdDeviceArrayStreamRelease(struct ArrowDeviceArrayStream* stream);
// The same, with a release that cannot be called reported in error (as
// AcdSchemaReleaseChecked: never called, the stream marked released).
int AcdArrayStreamReleaseChecked(struct ArrowArrayStream* stream, struct AcdError* error);
int AcdDeviceArrayStreamReleaseChecked(struct ArrowDeviceArrayStream* stream,
                                       struct AcdError* error);

// Consumer-side calls of a stream's callbacks. A released stream is refused
// (EINVAL, nothing is called). When the producer returns non-zero, its code is
// returned and error holds "<callback>: " and get_last_error's message (called
// only then, and copied at once), or a generic message when it gives NULL.
// On success the caller owns `out`: a schema, or an array that is released
// (release == NULL) at the end of the stream. The device GetNext also checks
// that a batch's device_type is the stream's: a mismatch releases the batch
// and returns EINVAL. The caller keeps ownership of the stream in every case.
int AcdArrayStreamGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out,
                            struct AcdError* error);
int AcdArrayStreamGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out,
                          struct AcdError* error);
int AcdDeviceArrayStreamGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out,
                                  struct AcdError* error);
int AcdDeviceArrayStreamGetNext(struct ArrowDeviceArrayStream* stream,
                                struct ArrowDeviceArray* out, struct AcdError* error);

// A copy of a schema tree made with AcdSchemaInit (owned by dst, released by
// its release). On failure dst is released and nothing stays allocated.
int AcdSchemaDeepCopy(const struct ArrowSchema* src, struct ArrowSchema* dst,
                      struct AcdError* error);

// A schema and the device arrays of one stream, owned by the core: what the C
// consumers collect and what a list source hands out again.
struct AcdBatchList {
  // Released (release == NULL) until set.
  struct ArrowSchema schema;
  // 0 until set.
  ArrowDeviceType device_type;
  int64_t length;
  int64_t capacity;
  struct ArrowDeviceArray* arrays;
};

// An empty list; allocates nothing.
void AcdBatchListInit(struct AcdBatchList* list);

// Moves *array to the end of the list (array is marked released). On ENOMEM
// the caller keeps array.
int AcdBatchListAppend(struct AcdBatchList* list, struct ArrowDeviceArray* array,
                       struct AcdError* error);

// Releases the schema and every array and frees the storage: the list is
// empty again.
void AcdBatchListReset(struct AcdBatchList* list);

// Where a C producer's batches come from. Same contract as a device stream,
// with the message in `error` instead of get_last_error. Owned by whoever
// holds it; moved like the ABI structs (release == NULL: released).
struct AcdBatchSource {
  ArrowDeviceType device_type;
  int (*get_schema)(struct AcdBatchSource* self, struct ArrowSchema* out,
                    struct AcdError* error);
  int (*get_next)(struct AcdBatchSource* self, struct ArrowDeviceArray* out,
                  struct AcdError* error);
  void (*release)(struct AcdBatchSource* self);
  void* private_data;
};

void AcdBatchSourceMove(struct AcdBatchSource* src, struct AcdBatchSource* dst);
void AcdBatchSourceRelease(struct AcdBatchSource* source);

// A generated stream, for tests and fixtures: struct<id: int32 not null,
// value: double, name: utf8>; row r of the stream (batch b, index i,
// r = b * rows_per_batch + i) has id r, value r * 0.5 (null when r % 7 == 3)
// and name "r<r>" (null when r % 5 == 4).
struct AcdGeneratorOptions {
  int64_t n_batches;
  int64_t rows_per_batch;
  ArrowDeviceType device_type;
  int64_t device_id;
  // get_next fails with fail_code and fail_message at batch fail_at (-1:
  // never; -2: get_schema fails). The message is copied.
  int64_t fail_at;
  int fail_code;
  const char* fail_message;
  // Batch wrong_device_at is labelled ARROW_DEVICE_EXT_DEV instead of
  // device_type (-1: never), to test the consumers' checks.
  int64_t wrong_device_at;
};

// Defaults: 3 batches of 5 rows on the CPU (device_id -1), no failure.
void AcdGeneratorOptionsInit(struct AcdGeneratorOptions* options);

// Initializes source (its old content is ignored). On failure nothing is
// allocated and source->release is NULL.
int AcdBatchSourceInitGenerator(struct AcdBatchSource* source,
                                const struct AcdGeneratorOptions* options,
                                struct AcdError* error);

// A source that hands out the list's batches in order (a copy of its schema
// on each get_schema). On success source owns the list's content and the list
// is empty; on failure the list is unchanged.
int AcdBatchSourceInitList(struct AcdBatchSource* source, struct AcdBatchList* list,
                           struct AcdError* error);

// The C producer: initializes stream (its old content is ignored) to hand out
// source's batches; its device_type is the source's. Each batch must be on the
// stream's device type (the CPU for an ArrowArrayStream), else get_next fails
// with EINVAL. After a failure every later get_next fails the same way. On
// success stream owns source (moved; released with the stream); on failure
// the caller keeps source and stream->release is NULL.
int AcdArrayStreamInitSource(struct ArrowArrayStream* stream, struct AcdBatchSource* source,
                             struct AcdError* error);
int AcdDeviceArrayStreamInitSource(struct ArrowDeviceArrayStream* stream,
                                   struct AcdBatchSource* source, struct AcdError* error);

struct AcdStreamTotals {
  int64_t batches;
  int64_t rows;
};

// The C consumer: takes the schema, then every batch up to the end, checks
// each against the schema (ACD_VALIDATION_DEFAULT on the CPU; on other
// devices, whose memory the host does not read, AcdDeviceArrayValidate) and
// against the stream's device type, and moves it into list (or releases it
// when list is NULL).
// The stream is released in every case. On failure the list keeps the
// batches that came before, totals (NULL allowed) count them, and error says
// which call failed with the producer's message.
int AcdArrayStreamDrain(struct ArrowArrayStream* stream, struct AcdBatchList* list,
                        struct AcdStreamTotals* totals, struct AcdError* error);
int AcdDeviceArrayStreamDrain(struct ArrowDeviceArrayStream* stream, struct AcdBatchList* list,
                              struct AcdStreamTotals* totals, struct AcdError* error);

// ---- async device streams (async_stream.c, stream_async_consumer.c) -------
// The C producer and consumer cannot block in wasm, so they are driven by a
// pump: request, cancel and the handler callbacks only record what was asked
// and schedule the object; its work (calling the other side) happens in
// AcdAsyncPump. The scheduler is called whenever work is queued: the embedder
// then calls AcdAsyncPump soon, outside of any callback (TypeScript: from a
// microtask). Nothing here calls a handler synchronously from request.

typedef void (*AcdAsyncScheduleFn)(void* user_data);

// Sets the function called when work is queued (NULL: none; the embedder polls).
void AcdAsyncSetScheduler(AcdAsyncScheduleFn schedule, void* user_data);

// Runs up to max_steps scheduled steps; returns how many ran (0 when called
// from inside a step, i.e. from a callback that the pump made).
int64_t AcdAsyncPump(int64_t max_steps);

// For the embedder when AcdAsyncPump did not return (a trap, or an exception
// thrown through it by a callback): makes the pump usable again and tells the
// object whose step was cut short, which reports code and message to its
// other side (a producer with on_error then release; a consumer as its error,
// cancelling its producer) from a later step. Calls no callback itself.
void AcdAsyncPumpAbort(int code, const char* message);

// How many objects have work scheduled.
int64_t AcdAsyncPending(void);

// Counters of the C async objects, so that tests can check that every task
// was extracted exactly once and nothing outlived its stream.
struct AcdAsyncStats {
  int64_t producers_live;
  int64_t consumers_live;
  int64_t tasks_live;
  int64_t tasks_created;
  int64_t tasks_extracted;
  int64_t tasks_discarded;
};

void AcdAsyncStatsGet(struct AcdAsyncStats* out);

// The C async producer: feeds handler from source. On success it owns source,
// has set handler->producer (device_type = source's, additional_metadata = a
// copy of the given one, NULL allowed, valid until the producer is freed), and
// calls on_schema from the pump; it calls on_next_task only within the credit
// given by request (the end, on_next_task(NULL), also takes one), on_error then
// release on any failure, and only release after cancel or after a non-zero
// return from on_schema / on_next_task. It frees itself after calling
// handler->release. On failure nothing was called: the caller keeps source and
// handler.
int AcdAsyncProducerStart(struct ArrowAsyncDeviceStreamHandler* handler,
                          struct AcdBatchSource* source, const char* additional_metadata,
                          struct AcdError* error);

struct AcdAsyncConsumerOptions {
  // request(window) from on_schema, then request(1) per extracted task.
  int64_t window;
  // 0: extract each task inside on_next_task; 1: copy it and extract it in the pump.
  int extract_later;
  // Cancel once this many batches were taken (-1: never); later tasks are
  // extracted with NULL.
  int64_t cancel_after;
  // on_next_task extracts this task with NULL and returns EINVAL (-1: never).
  int64_t fail_task_at;
  // on_schema returns EINVAL (and releases the schema).
  int fail_schema;
};

// Defaults: window 4, extract in on_next_task, never cancel or fail.
void AcdAsyncConsumerOptionsInit(struct AcdAsyncConsumerOptions* options);

// The C async consumer: a handler that collects the stream into a list.
struct AcdAsyncConsumer;

struct AcdAsyncConsumerState {
  int schema_received;
  // on_next_task(NULL) came.
  int ended;
  // The producer called release: nothing more will come.
  int released;
  // From on_error, or the consumer's own failure (a batch that does not match
  // the schema or the device type); 0 when none.
  int error_code;
  const char* error_message;
  // A copy of the producer's additional_metadata (NULL when it had none).
  const char* additional_metadata;
  int64_t tasks;
  int64_t requested;
  // The schema and batches received so far (owned by the consumer).
  struct AcdBatchList* list;
};

// On success *out is a new consumer, whose handler is ready for callbacks.
int AcdAsyncConsumerNew(const struct AcdAsyncConsumerOptions* options,
                        struct AcdAsyncConsumer** out, struct AcdError* error);

// The handler to give to a producer (owned by the consumer).
struct ArrowAsyncDeviceStreamHandler* AcdAsyncConsumerHandler(struct AcdAsyncConsumer* consumer);

void AcdAsyncConsumerGetState(struct AcdAsyncConsumer* consumer,
                              struct AcdAsyncConsumerState* out);

// Frees the consumer, its list and (extracting them with NULL) the tasks it
// still holds. When a producer holds the handler, the consumer cancels it and
// frees itself when the producer releases it. A producer holds the handler
// once it has set handler->producer (which the spec requires before its first
// call other than release) and until it calls release: a producer that sets
// the member later must not be raced by this call. Cancelled before on_schema,
// the consumer answers on_schema with ECANCELED (the spec's way to refuse a
// stream: the producer then calls release only).
void AcdAsyncConsumerFree(struct AcdAsyncConsumer* consumer);

// Internals shared by async_stream.c and stream_async_consumer.c: an object of
// the run queue. step runs one unit of work and may free the object.
struct AcdAsyncJob {
  struct AcdAsyncJob* next;
  int scheduled;
  void (*step)(struct AcdAsyncJob* job);
  // Called by AcdAsyncPumpAbort when step did not return (NULL: nothing to do).
  void (*abort)(struct AcdAsyncJob* job, int code, const char* message);
};

// Queues job (once) and calls the scheduler when the queue was empty.
void AcdAsyncSchedule(struct AcdAsyncJob* job);
// Removes job from the queue (before it is freed).
void AcdAsyncUnschedule(struct AcdAsyncJob* job);
// The counters, for the files that create and free async objects.
struct AcdAsyncStats* AcdAsyncStatsMutable(void);

// ---- devices (device*.c) ------------------------------------------------
//
// Simulated devices: the ABI is real, only the hardware is simulated. Every
// ArrowDeviceType of the header is a device kind with any number of ids.
//
// Memory. The CPU and the host-accessible kinds (CUDA_HOST, ROCM_HOST,
// CUDA_MANAGED, as on real hardware) hand out host memory. Every other kind
// has memory of its own: its addresses lie in a window that no host pointer
// can be in, and its bytes are reachable only through AcdDeviceCopy and
// AcdDeviceCopyAsync, so a host read of them fails (AcdAddressRangeValid
// rejects the window) instead of reading some other buffer. All devices share
// that window as CUDA's unified virtual addressing does, so an address names
// its device (AcdDeviceOwnerOf).
//
// Work. Each device has one stream: a FIFO of pending operations (copies and
// fills). An event records the stream's tail; waiting on it executes the
// stream up to there. Until then the destination bytes hold ACD_DEVICE_POISON
// and any read of them through the simulation fails with EBUSY, naming the
// device and how many bytes are not there yet. The streams behave like CUDA's
// non-blocking streams: a synchronous copy does not wait for them.

#if UINTPTR_MAX > 0xFFFFFFFFu
// LP64: a non-canonical address on x86-64 and aarch64, never a host pointer.
#define ACD_DEVICE_ADDRESS_BASE ((uintptr_t)0x7F00000000000000ull)
#else
// wasm32: build.sh caps the linear memory at 2 GiB, so [2^31, 2^32) is never
// host memory.
#define ACD_DEVICE_ADDRESS_BASE ((uintptr_t)0x80000000u)
#endif
#define ACD_DEVICE_ADDRESS_SIZE ((uintptr_t)0x80000000u)
// Device allocations are aligned to this (as cudaMalloc's are) and separated
// by at least this many unallocated bytes, so an overrun hits no allocation.
#define ACD_DEVICE_ALIGN 256
// What bytes hold before the operation that writes them has executed (and
// what fresh device memory holds).
#define ACD_DEVICE_POISON 0xA5
#define ACD_DEVICE_MAX_ID INT32_MAX

// Event kinds: the first member of every simulated event, naming what it
// stands in for. The spec's table maps each device type to one; the
// extension device (EXT_DEV) leaves it to the producer, and this simulation
// documents its own kind (ACD_EVENT_EXT_DEV) for it.
#define ACD_EVENT_NONE 0u
#define ACD_EVENT_CUDA 0xACDE0002u      // cudaEvent_t: CUDA, CUDA_HOST, CUDA_MANAGED
#define ACD_EVENT_OPENCL 0xACDE0004u    // cl_event: OPENCL
#define ACD_EVENT_VULKAN 0xACDE0007u    // VkEvent: VULKAN
#define ACD_EVENT_METAL 0xACDE0008u     // MTLEvent: METAL
#define ACD_EVENT_HIP 0xACDE000Au       // hipEvent_t: ROCM, ROCM_HOST
#define ACD_EVENT_EXT_DEV 0xACDE000Cu   // this simulation's EXT_DEV event
#define ACD_EVENT_SYCL 0xACDE000Eu      // sycl::event: ONEAPI

struct AcdDeviceOp;

// A device's stream of asynchronous work; operations are numbered from 1.
struct AcdDeviceStream {
  struct AcdDeviceOp* head;
  struct AcdDeviceOp* tail;
  int64_t enqueued;  // number of the last operation enqueued
  int64_t executed;  // number of the last operation executed
};

// A simulated device. Owned by the simulation and valid until the process
// ends: callers never free it.
struct AcdDevice {
  ArrowDeviceType device_type;
  int64_t device_id;
  // "cuda:1"; "cpu" for the CPU.
  char name[32];
  // Whether the host reads its memory directly.
  int host_accessible;
  // What its sync events are (ACD_EVENT_NONE: sync_event is always NULL).
  uint32_t event_kind;
  // Live allocations and their bytes (as reserved, padding included).
  int64_t allocations;
  int64_t bytes_allocated;
  // Work done: operations enqueued and executed, events recorded and waited on.
  int64_t ops_enqueued;
  int64_t ops_executed;
  int64_t events_recorded;
  int64_t events_waited;
  struct AcdDeviceStream stream;
};

// The simulated device (type, id), created on first use. CPU: id -1 only;
// others: 0 to ACD_DEVICE_MAX_ID. ENODEV for an unknown type or id.
int AcdDeviceResolve(ArrowDeviceType device_type, int64_t device_id, struct AcdDevice** out,
                     struct AcdError* error);
struct AcdDevice* AcdDeviceCpu(void);
// Every device used so far (the CPU first), for accounting.
int64_t AcdDeviceCount(void);
struct AcdDevice* AcdDeviceAt(int64_t i);

// "cuda", "cuda_host", ...; NULL for a value that is not a device type of the
// header. The macro name: "ARROW_DEVICE_CUDA".
const char* AcdDeviceTypeName(ArrowDeviceType device_type);
const char* AcdDeviceTypeMacro(ArrowDeviceType device_type);
// ENODEV when name is not one of the names above.
int AcdDeviceTypeFromName(const char* name, ArrowDeviceType* out);
// "cudaEvent_t", ...; NULL for ACD_EVENT_NONE and unknown kinds.
const char* AcdEventKindName(uint32_t kind);

// Sets device_id, device_type, a NULL sync_event and zeroed reserved bytes;
// `array` itself is initialized separately.
void AcdDeviceArrayInitDevice(struct ArrowDeviceArray* device_array,
                              ArrowDeviceType device_type, int64_t device_id);

// ---- device memory (device_memory.c) ----

// Allocates size bytes (ACD_DEVICE_POISON-filled; padding to 64 bytes zeroed)
// on `device`, owned by the caller until AcdDeviceFree.
int AcdDeviceAllocate(struct AcdDevice* device, int64_t size, void** out,
                      struct AcdError* error);
// Frees an allocation of `device` (NULL: nothing), after executing the
// stream's pending work, as cudaFree synchronizes. EINVAL when ptr is not the
// start of a live allocation of `device` (nothing is freed then).
int AcdDeviceFree(struct AcdDevice* device, void* ptr, struct AcdError* error);

// When ptr lies in a live allocation made by AcdDeviceAllocate (any device,
// the host-accessible ones and the CPU included), sets *type and *id (either
// may be NULL) and returns ACD_OK; else ENOENT.
int AcdDeviceOwnerOf(const void* ptr, ArrowDeviceType* type, int64_t* id);
// The allocation containing ptr (as cuMemGetAddressRange): ENOENT when none.
int AcdDeviceMemoryRange(const void* ptr, const void** base, int64_t* size);
// Whether the host may read [ptr, ptr + size): not in the device window, and
// not host-accessible device memory that a pending operation is writing.
// AcdAddressRangeValid calls it.
int AcdDeviceRangeReadable(const void* ptr, int64_t size);
// Fills `out` with what ptr is, for a message about a failed host read
// (", which is memory of device cuda:1, not host memory: ..."); "" when it is
// ordinary host memory.
void AcdDeviceDescribeAddress(const void* ptr, int64_t size, char* out, size_t out_size);

// Whether `device` may read [ptr, ptr + size) now: inside one allocation of
// that device (or readable host memory, for the host kinds), and no pending
// operation writing it (EBUSY).
int AcdDeviceCheckRange(struct AcdDevice* device, const void* ptr, int64_t size,
                        struct AcdError* error);
// Copies size bytes from src (memory of src_device) to dst (memory of
// dst_device) at once. EBUSY when a pending operation writes the source.
int AcdDeviceCopy(struct AcdDevice* src_device, const void* src, struct AcdDevice* dst_device,
                  void* dst, int64_t size, struct AcdError* error);
// Reads element i of width (1, 2, 4 or 8) bytes, signed, from device memory.
int AcdDeviceReadInt(struct AcdDevice* device, const void* data, int64_t i, int width,
                     int64_t* out, struct AcdError* error);

// ---- streams and events (device_stream.c) ----

// Enqueues on dst_device's stream a copy of size bytes from src (memory of
// src_device, read now, as a staging copy) into dst, an allocation of
// dst_device (not the CPU). Until it executes, dst holds ACD_DEVICE_POISON.
int AcdDeviceCopyAsync(struct AcdDevice* src_device, const void* src,
                       struct AcdDevice* dst_device, void* dst, int64_t size,
                       struct AcdError* error);
// Enqueues a kernel-like fill of size bytes of dst with `value`.
int AcdDeviceMemsetAsync(struct AcdDevice* device, void* dst, int value, int64_t size,
                         struct AcdError* error);
// Executes all pending work of the device's stream.
void AcdDeviceSynchronize(struct AcdDevice* device);

struct AcdEventState;

// A simulated event: what a sync_event points at. The kind comes first, so a
// consumer can check what it was given; `state` is shared by copies of the
// struct (a cudaEvent_t is a handle passed by value).
struct AcdEvent {
  uint32_t kind;
  struct AcdEventState* state;
};

// Creates an event of device's kind on `device` (as cudaEventCreate); the
// caller destroys it with AcdEventDestroy. Never recorded, it is complete.
int AcdEventInit(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error);
// Records the tail of the stream of `device`, the event's own device.
int AcdEventRecord(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error);
// ACD_OK when the recorded work is done, EBUSY when not, EINVAL when the
// event is not live.
int AcdEventQuery(const struct AcdEvent* event, struct AcdError* error);
// The host waits: executes the event's stream up to the recorded position.
int AcdEventSynchronize(const struct AcdEvent* event, struct AcdError* error);
// The stream of `device` waits on the event. Streams are simulated on one
// thread, so the event's work executes now.
int AcdDeviceStreamWaitEvent(struct AcdDevice* device, const struct AcdEvent* event,
                             struct AcdError* error);
// Destroys the event's state (copies of the struct then dangle, as with CUDA).
void AcdEventDestroy(struct AcdEvent* event);
// Checks a sync_event given with an array on `device`: NULL, or a readable
// struct AcdEvent of the device's kind, live, created on `device`. Types
// without an event type require NULL.
int AcdEventValidate(const void* sync_event, const struct AcdDevice* device,
                     struct AcdError* error);
// Events recorded and waited on over all devices.
int64_t AcdEventsRecorded(void);
int64_t AcdEventsWaited(void);

// ---- device arrays (device_array.c, device_buffers.c) ----

// Checks a device array without reading its buffers: the struct is readable
// and live, device_type and device_id name a device, sync_event is valid for
// it, reserved is zeroed, the array validates against schema at MINIMAL, and
// every buffer of every child lies on that one device.
int AcdDeviceArrayValidate(const struct ArrowSchema* schema,
                           const struct ArrowDeviceArray* device_array, struct AcdError* error);
// Waits on the array's sync_event (nothing when NULL); the array is still the
// caller's.
int AcdDeviceArraySync(const struct ArrowDeviceArray* device_array, struct AcdError* error);
// Copies a device array (validated first) onto `device`: waits on its event,
// allocates every buffer of every child on `device`, copies (enqueued on the
// device's stream unless it is the CPU), and gives `out` a new array whose
// release frees those buffers and its event. On device kinds with an event
// type a new event is recorded after the copies; on the others the stream is
// synchronized first, since their sync_event must be NULL. `src` stays the
// caller's; on failure nothing is allocated and out->array.release is NULL.
int AcdDeviceArrayCopy(const struct ArrowSchema* schema, const struct ArrowDeviceArray* src,
                       struct AcdDevice* device, struct ArrowDeviceArray* out,
                       struct AcdError* error);
// Like AcdDeviceArrayCopy, then releases `src`: if ACD_OK is returned, src's
// data now lives on `device` in `out` and src is released (moved, when it
// already was on `device`). On failure the caller keeps src.
int AcdDeviceArrayMoveToDevice(const struct ArrowSchema* schema, struct ArrowDeviceArray* src,
                               struct AcdDevice* device, struct ArrowDeviceArray* out,
                               struct AcdError* error);

// The byte size of each buffer of one node of `schema`'s type (sizes has
// array->n_buffers entries) from its length and offset, reading the offsets
// and variadic sizes it needs from `device` memory. The node was validated
// at MINIMAL. Errors are prefixed with v's path.
int AcdDeviceBufferSizes(struct AcdValidation* v, const struct ArrowSchema* schema,
                         const struct ArrowArray* array, struct AcdDevice* device,
                         int64_t* sizes);

// Internals shared by the device*.c files.

// One allocation. Device memory lives at `bytes`, a private host block;
// host-accessible memory is at `address` itself (bytes == address).
struct AcdDeviceBlock {
  uintptr_t address;
  int64_t size;
  int64_t reserved;
  struct AcdDevice* device;
  unsigned char* bytes;
  // Enqueued operations that write this block.
  int64_t pending_ops;
};

// The live allocation containing ptr, or NULL.
struct AcdDeviceBlock* AcdDeviceBlockFind(const void* ptr);
// Checks that `device` may access [ptr, ptr + size) as AcdDeviceCheckRange
// does, pending writes aside, and gives the host bytes behind it and its
// block (NULL for host memory that no device allocated).
int AcdDeviceAccess(struct AcdDevice* device, const void* ptr, int64_t size,
                    unsigned char** bytes, struct AcdDeviceBlock** block,
                    struct AcdError* error);
// Counts pending operations on host-accessible memory (AcdDeviceRangeReadable
// looks up blocks only while there are some).
void AcdDevicePendingHostOps(int64_t delta);
// How many bytes of [offset, offset + size) of the block pending operations
// still have to write.
int64_t AcdDeviceStreamPendingBytes(const struct AcdDeviceBlock* block, int64_t offset,
                                    int64_t size);
// Executes the device's stream up to operation number `upto`.
void AcdDeviceStreamExecute(struct AcdDevice* device, int64_t upto);

#ifdef __cplusplus
}
#endif

#endif  // ACD_H_INCLUDED
