// arrow-c-device, the C core's own API, part 2 of 5: the model. The type
// model (format strings), metadata and strings, the per-type buffer-size
// rules, and producing schemas and arrays. Depends on abi/ only.

#ifndef ACD_MODEL_H_INCLUDED
#define ACD_MODEL_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "abi/abi.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- format strings (format.c; the per-type facts: type.c) ----------------

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

// ---- metadata and C strings (metadata.c) ----------------------------------------------

// Byte size of an encoded metadata string (0 for NULL), after checking that
// it is well formed within `limit` bytes (-1: up to the end of readable
// memory). Returns -1 and fills error when it is not.
int64_t AcdMetadataSize(const char* metadata, int64_t limit, struct AcdError* error);

// The length of the NUL-terminated string at s, or -1 when s is NULL or the
// string runs past readable memory.
int64_t AcdStringLength(const char* s);

// ---- UTF-8 (utf8.c) ---------------------------------------------------------

// -1 when the `size` bytes at `data` are valid UTF-8, else the offset of the
// first invalid sequence (used by validation).
int64_t AcdUtf8Validate(const void* data, int64_t size);
// AcdUtf8Validate of bytes that may be in the foreign window (abi.h).
int64_t AcdUtf8ValidateAt(const void* data, int64_t size);

// ---- buffers (buffers.c) ----------------------------------------------------
// The per-type buffer-size rules of the C Data Interface, in one place: how
// many bytes each buffer of an array of one type must hold for its length and
// offset (validity bitmap, offsets, values, views, ...). The validator checks
// them against readable memory, device copies move that many bytes, and
// readers of foreign memory or of fixture images size buffers with them.
// Nothing here reads a buffer: a size that depends on the data (binary and
// utf8 data: the last offset; a view's data buffer: its variadic size) takes
// the value the caller read, from whatever memory the array lives in;
// AcdBufferDependency says which element that is.

// Buffer sizes in bits rather than items (AcdBufferSize.item_size).
#define ACD_BUFFER_BITS (-1)

// What one buffer must hold: `count` items of `item_size` bytes each (bits
// when ACD_BUFFER_BITS), `bytes` in all; `noun` names the items in messages
// ("int32 offsets", "validity bits", "bytes of data").
struct AcdBufferSize {
  int64_t count;
  int64_t item_size;
  int64_t bytes;
  const char* noun;
};

// An element of one of the array's own buffers: element `index` of buffer
// `buffer`, a signed integer of `width` bytes (read it with AcdReadInt).
struct AcdBufferElement {
  int64_t buffer;
  int64_t index;
  int width;
};

// Whether arrays of this type have a validity bitmap (buffer 0): all but
// null, unions and run-end encoded.
int AcdTypeHasValidity(enum AcdType type);

// Whether the size of buffer i depends on a value stored in another buffer of
// the same array; if so returns 1 and says where it is in *from, else 0.
// Binary and utf8 data (buffer 2): the last offset, offsets[offset + length]
// (none for an empty array); a view's data buffer 2 + k: variadic size k, in
// the last buffer.
int AcdBufferDependency(const struct AcdFormat* format, int64_t length, int64_t offset,
                        int64_t n_buffers, int64_t i, struct AcdBufferElement* from);

// The size of buffer i (0 <= i < n_buffers) of an array of `format` with
// this length and offset (both >= 0, their sum within int64, as MINIMAL
// validation checks). `value` is the element AcdBufferDependency names for
// buffer i (ignored for the others; the caller checks it is >= 0). An empty
// array needs no bytes at all (as Arrow C++ accepts); a buffer the type does
// not have (a legacy null array's one) needs none either. EOVERFLOW when the
// size does not fit in int64, EINVAL for an index out of range; the message
// names neither the array nor the buffer (the caller's path does).
int AcdBufferSizeOf(const struct AcdFormat* format, int64_t length, int64_t offset,
                    int64_t n_buffers, int64_t i, int64_t value, struct AcdBufferSize* out,
                    struct AcdError* error);

// Element i of a buffer of signed integers of `width` bytes (1, 2, 4, 8),
// read with memcpy because buffers need not be aligned.
int64_t AcdReadInt(const void* data, int64_t i, int width);

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

// AcdSchemaInit with strings of known sizes, not NUL-terminated: format and
// name (NULL allowed) must hold no NUL byte, metadata (NULL allowed) must be
// exactly `metadata_size` well-formed bytes.
int AcdSchemaInitSized(struct ArrowSchema* schema, const char* format, int64_t format_length,
                       const char* name, int64_t name_length, const char* metadata,
                       int64_t metadata_size, int64_t flags, int64_t n_children,
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

// The checks AcdArrayInit makes of its counts (same messages).
int AcdArrayCheckCounts(int64_t n_buffers, int64_t n_children, struct AcdError* error);

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


// The checks AcdSchemaInitSized makes of its arguments (same messages),
// without allocating anything.
int AcdSchemaCheckSized(const char* format, int64_t format_length, const char* name,
                        int64_t name_length, const char* metadata, int64_t metadata_size,
                        int64_t n_children, struct AcdError* error);

// ---- one block per tree (tree.c) ----------------------------------------------
// Every node of a tree made from a flat descriptor has private data of this
// shape, inside the tree's one block; each node holds a reference to the
// block, dropped by its release, and the last one frees it.

#define ACD_TREE_HEAD 16
struct AcdTreeNode {
  uint32_t tag;  // the kind mixed with the node's address; 0 once released
  int64_t n_children;
  void* block;
  void* children;    // the child structs, contiguous
  void* dictionary;  // the dictionary struct, or NULL
};

// A block of `size` bytes (its first ACD_TREE_HEAD bytes are its head) for a
// tree of `nodes` nodes of `kind` (ACD_KIND_SCHEMA_TREE, or
// ACD_KIND_ARRAY_TREE: 64-byte aligned, padded as AcdBufferAlloc pads);
// NULL when out of memory. Each node must then be made with AcdTreeNodeInit
// and released by the release below; AcdTreeBlockFree frees a block before
// any node is made.
void* AcdTreeBlockNew(enum AcdPrivateKind kind, int64_t size, int64_t nodes);
void AcdTreeBlockFree(void* block);
void AcdTreeNodeInit(struct AcdTreeNode* node, void* block, enum AcdPrivateKind kind,
                     int64_t n_children, void* children, void* dictionary);

// A node record copied to another place (flat_template.c): its tag made for
// its new address.
void AcdTreeNodeRetag(struct AcdTreeNode* node, enum AcdPrivateKind kind);

// The releases of the nodes of tree blocks (registered in their roles).
void AcdTreeSchemaRelease(struct ArrowSchema* schema);
void AcdTreeArrayRelease(struct ArrowArray* array);

// ---- producing whole trees from a flat descriptor (flat.c) ------------------
// The descriptor is `n_words` doubles, each an integer, and `n_strings` bytes
// of strings that its words point into (offset from `strings`, -1 for NULL,
// and a byte length). Nodes come in preorder: a node, its children first to
// last (each with its subtree), then its dictionary's subtree. First the
// schema tree (when `schema` is not NULL), ACD_FLAT_SCHEMA_WORDS words a node:
//   format offset, format length, name offset, name length, metadata offset,
//   metadata length, flags, n_children, has a dictionary (0 or 1);
// then the array tree (when `array` is not NULL), ACD_FLAT_ARRAY_WORDS words
// a node followed by its n_buffers buffer sizes (-1: a NULL buffer):
//   length, null_count, offset, n_buffers, n_children, has a dictionary.
// Every node has the fields AcdSchemaInit / AcdArrayInit would give it, but
// each tree below its base struct is one block (tree.c): structs, pointer
// arrays, strings and every buffer (64-byte aligned, padded to a multiple of
// 64 with zeros, at least 64 bytes even when empty). Each buffer size word
// is replaced by the buffer's address (0 for NULL), for the caller to fill.
// The descriptor is checked whole before anything is allocated: on failure
// nothing stays allocated, both structs' release is NULL, and the message
// starts with the failing node's path (error->path).
#define ACD_FLAT_SCHEMA_WORDS 9
#define ACD_FLAT_ARRAY_WORDS 6
int AcdFlatInit(double* words, int64_t n_words, const char* strings, int64_t n_strings,
                struct ArrowSchema* schema, struct ArrowArray* array, struct AcdError* error);

// Schema trees made again from a copy (flat_template.c). Find: the copy kept
// of a schema tree made from a descriptor that starts with the same schema
// words and strings, or NULL; its node count, its schema words and its block
// size. Keep: keeps a copy of the tree just made at root (below it: the block
// of block_size bytes) from the descriptor's first n_words words and
// n_strings string bytes (nothing when it is small, large or out of memory).
// Apply: makes that tree at root in block (block_size bytes from
// AcdTreeBlockNew), as AcdFlatInit would have made it there.
struct AcdFlatTemplate;
const struct AcdFlatTemplate* AcdFlatTemplateFind(const double* words, int64_t n_words, const char* strings,
                                                  int64_t n_strings);
int64_t AcdFlatTemplateNodes(const struct AcdFlatTemplate* t);
int64_t AcdFlatTemplateWords(const struct AcdFlatTemplate* t);
int64_t AcdFlatTemplateBlockSize(const struct AcdFlatTemplate* t);
void AcdFlatTemplateKeep(const double* words, int64_t n_words, const char* strings, int64_t n_strings,
                         const struct ArrowSchema* root, const unsigned char* block, int64_t block_size,
                         int64_t nodes);
void AcdFlatTemplateApply(const struct AcdFlatTemplate* t, struct ArrowSchema* root, unsigned char* block);

// This library's release callbacks for the structs above (registered with
// their roles, AcdCallbackRegister).
void AcdSchemaReleaseOwned(struct ArrowSchema* schema);
void AcdArrayReleaseOwned(struct ArrowArray* array);

// The releases of struct trees written whole into one block by TypeScript
// (tree_block.c): a schema tree's nodes (the block starts with a header the
// writer fills: kind ACD_KIND_SCHEMA_COPY, the node count, the block's size),
// and the validator's shadows of another module's arrays (they only mark
// the struct released; the block is freed by whoever made it).
void AcdSchemaTreeRelease(struct ArrowSchema* schema);
void AcdShadowArrayRelease(struct ArrowArray* array);

#ifdef __cplusplus
}
#endif

#endif  // ACD_MODEL_H_INCLUDED
