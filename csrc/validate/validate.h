// arrow-c-device, the C core's own API, part 3 of 5: validation of schemas
// and arrays against the spec, at increasing levels. Depends on model/ and
// abi/ only.

#ifndef ACD_VALIDATE_H_INCLUDED
#define ACD_VALIDATE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- validation (schema.c, array.c, relations.c, content.c) -----------

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


// Imports (import.c): validates the struct at src (the array at `level`
// against schema, which schema_valid says was validated already), allocates
// the library's own struct and moves src into it. Returns it, or NULL with
// *code and error filled; on failure src is untouched. A schema's key is
// written to key when it fits in capacity bytes (its size, or -1 when the
// tree cannot be walked, to *key_size): a schema whose key was validated
// before is not validated again. *key_id is the id the key is remembered
// under (AcdSchemaValidated), 0 when it is not.
// Validates src unless its key (written to key, capacity bytes; its size to
// *key_size, -1 when src cannot be walked) is that of a schema validated
// before, and remembers it when it is valid; *key_id is the id it is
// remembered under (0: not remembered). What AcdSchemaImport does before it
// moves the struct.
int AcdSchemaCheck(const struct ArrowSchema* src, uint8_t* key, int64_t capacity,
                   int64_t* key_size, uint32_t* key_id, struct AcdError* error);
struct ArrowSchema* AcdSchemaImport(struct ArrowSchema* src, uint8_t* key, int64_t capacity,
                                    int64_t* key_size, uint32_t* key_id, int* code,
                                    struct AcdError* error);
struct ArrowArray* AcdArrayImport(const struct ArrowSchema* schema, struct ArrowArray* src,
                                  enum AcdValidationLevel level, int schema_valid, int* code,
                                  struct AcdError* error);
// Both at once: the schema and the array validated (the array at `level`),
// then both moved into the library's structs (*schema_out, *array_out), or
// neither. ACD_OK, or the error code with *failed 1 (the schema) or 2 (the
// array; 0: out of memory).
int AcdBatchImport(struct ArrowSchema* schema, struct ArrowArray* array,
                   enum AcdValidationLevel level, uint8_t* key, int64_t capacity,
                   int64_t* key_size, uint32_t* key_id, struct ArrowSchema** schema_out,
                   struct ArrowArray** array_out, int* failed, struct AcdError* error);

// Schema keys (schema_key.c): the key of a schema tree (its formats, names,
// flags, child counts, dictionaries and metadata, in pre-order) into out when
// it fits in capacity bytes; returns the key's size either way (a multiple
// of 4, zero padded), or -1 when a struct of the tree is not readable as a
// reader needs (the validator names what). Equal keys, equal trees.
int64_t AcdSchemaKey(const struct ArrowSchema* schema, uint8_t* out, int64_t capacity);
// Whether a schema with this key was validated before (and remembered): the
// id it is remembered under, or 0. Ids are never reused: a key remembered
// again (after its slot or the arena was taken) gets a new one, so an importer
// may cache what it read of a key by its id (ts/arrow-js/schema-cache.ts).
uint32_t AcdSchemaValidated(const uint8_t* key, int64_t size);
// Remembers a validated key; returns its id, or 0 when it is not kept.
uint32_t AcdSchemaRememberValid(const uint8_t* key, int64_t size);
// Allocates their arena now rather than at the first key remembered.
void AcdSchemaKeysReserve(void);

// Internals shared by the files of validate/ (walk.c): the path from the root
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
// The same with a field after the path ("<path>.<field>: <message>").
int AcdValidationPrefixField(struct AcdValidation* v, const char* field, int code);

// Whether `size` bytes at ptr may be read (always when size is 0).
int AcdValidationReadable(const void* ptr, int64_t size);

// One array of the walk, with the facts derived from it once
// (array.c; the FULL checks are in content.c).
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


// The relations between one array and its children (relations.c), whose
// structs and buffers were validated at the node's level.
int AcdArrayValidateRelations(struct AcdValidation* v, const struct AcdArrayNode* node);

// The FULL checks of one array whose buffers, children and dictionary were
// validated at DEFAULT and above.
int AcdArrayValidateContent(struct AcdValidation* v, const struct AcdArrayNode* node);

// FULL validation's fast passes (content_fast.c), tried before the slot-by-
// slot loops of content.c: 1 when the array is certainly right (string and
// binary offsets, and with utf8 their bytes; dictionary indices of dictionary
// length `length`), 0 when only the loop can say.
int AcdOffsetsContentFast(const struct AcdArrayNode* node, int width, int utf8);
int AcdIndicesFast(const struct AcdArrayNode* node, int width, int is_unsigned, int64_t length);

// ---- slot scans (slots.c) ---------------------------------------------

// The passes over every slot that ts/validate/raw-shape.ts makes before
// apache-arrow reads an array, over buffers in the core's own memory, and
// that FULL's fast passes make (content_fast.c). The caller checks that the
// slots read lie in memory and are aligned.

// The first i in [from, to] whose offset is outside [0, limit] or below the
// one before it (the first compared with none), or to + 1.
int32_t AcdScanOffsets32(const int32_t* offsets, int32_t from, int32_t to, double limit);
int32_t AcdScanOffsets64(const int64_t* offsets, int32_t from, int32_t to, double limit);

// The first i in [from, to) whose dictionary index (width 1, 2, 4 or 8 bytes,
// signed or not) is outside [0, length), or to; from for another width.
int32_t AcdScanIndices(const void* indices, int width, int is_unsigned, int32_t from, int32_t to, double length);

// A union's type ids and its children's lengths, written by TypeScript into
// the one static table before a scan.
#define ACD_SCAN_MAX_CHILDREN 128
struct AcdScanTable {
  double lengths[ACD_SCAN_MAX_CHILDREN];
  int8_t type_ids[ACD_SCAN_MAX_CHILDREN];
  int32_t n_children;
};
extern struct AcdScanTable acd_scan_table;

// The first i in [from, to) whose binary view (16 bytes: size, prefix, buffer
// index, offset) reads bytes outside its variadic buffer (lengths[index] bytes;
// n_variadic of them), when its size is over 12 (not inline) and its validity
// bit (NULL: every slot) is set; or to.
int32_t AcdScanViews(const int32_t* views, const uint8_t* validity, int32_t from, int32_t to,
                     const double* lengths, int32_t n_variadic);

// Where TypeScript copies the slots of a buffer outside the core's memory
// (another module's, a copy), a part at a time, to scan them here.
#define ACD_SCAN_SCRATCH_BYTES (64 * 1024)
extern uint8_t acd_scan_scratch[ACD_SCAN_SCRATCH_BYTES];

// The first i in [from, to) whose type id is none of the table's, or
// (offsets not NULL: a dense union) whose offset is outside its child; or to;
// -1 when the table's n_children is not 0 to ACD_SCAN_MAX_CHILDREN.
int32_t AcdScanUnion(const int8_t* ids, const int32_t* offsets, int32_t from, int32_t to,
                     const struct AcdScanTable* table);

#ifdef __cplusplus
}
#endif

#endif  // ACD_VALIDATE_H_INCLUDED
