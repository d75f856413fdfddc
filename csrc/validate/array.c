// Array validation against a schema, at increasing levels: the struct fields
// (MINIMAL), buffer sizes (DEFAULT), then every value that could send a reader
// out of bounds or break an invariant (FULL, in content.c). The buffer sizes
// are the model's rules (model/buffers.c); the relations between an array and
// its children are in relations.c.
//
// Sizes come from untrusted int64 fields, so every product is checked for
// overflow, and every pointer is checked with AcdAddressRangeValid before it
// is read.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "validate/validate.h"

// ---- MINIMAL: struct fields -------------------------------------------------

static int AcdArrayValidateCounts(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  enum AcdType type = node->format.type;
  const char* name = AcdTypeName(type);

  if (a->length < 0) {
    return AcdValidationFail(v, "length", EINVAL, "expected >= 0, found %" PRId64, a->length);
  }
  if (a->offset < 0) {
    return AcdValidationFail(v, "offset", EINVAL, "expected >= 0, found %" PRId64, a->offset);
  }
  if (a->offset > INT64_MAX - a->length) {
    return AcdValidationFail(v, "offset", EOVERFLOW,
                             "expected offset + length to fit in int64, found offset %" PRId64
                             " and length %" PRId64,
                             a->offset, a->length);
  }
  if (a->null_count < -1 || a->null_count > a->length) {
    return AcdValidationFail(v, "null_count", EINVAL,
                             "expected -1 (unknown) or 0..%" PRId64 " (the length), found %" PRId64,
                             a->length, a->null_count);
  }
  if (type == ACD_TYPE_NA && a->null_count != -1 && a->null_count != a->length) {
    return AcdValidationFail(v, "null_count", EINVAL,
                             "expected %" PRId64 " (a null array is all nulls) or -1, found "
                             "%" PRId64,
                             a->length, a->null_count);
  }
  if (!AcdTypeHasValidity(type) && type != ACD_TYPE_NA && a->null_count > 0) {
    return AcdValidationFail(v, "null_count", EINVAL,
                             "expected 0 (%s arrays have no validity bitmap), found %" PRId64,
                             name, a->null_count);
  }

  int64_t expected = AcdTypeBufferCount(type);
  int is_view = type == ACD_TYPE_BINARY_VIEW || type == ACD_TYPE_STRING_VIEW;
  // Arrow C++ before 9.0 exported null arrays with one (NULL) buffer.
  int legacy_null = type == ACD_TYPE_NA && a->n_buffers == 1;
  if (is_view && a->n_buffers < expected) {
    return AcdValidationFail(v, "n_buffers", EINVAL,
                             "expected at least 3 for %s (validity, views, variadic sizes), "
                             "found %" PRId64,
                             name, a->n_buffers);
  }
  if (!is_view && !legacy_null && a->n_buffers != expected) {
    return AcdValidationFail(v, "n_buffers", EINVAL, "expected %" PRId64 " for %s, found %" PRId64,
                             expected, name, a->n_buffers);
  }
  if (a->n_children != node->schema->n_children) {
    return AcdValidationFail(v, "n_children", EINVAL,
                             "expected %" PRId64 " (as in the schema), found %" PRId64,
                             node->schema->n_children, a->n_children);
  }
  return ACD_OK;
}

// A C array of n pointers at ptr ("buffers", "children").
static int AcdValidatePointerArray(struct AcdValidation* v, const void* ptr, int64_t n,
                                   const char* field) {
  if (n == 0) return ACD_OK;
  if (ptr == NULL) {
    return AcdValidationFail(v, field, EINVAL, "expected %" PRId64 " pointers, found NULL", n);
  }
  if (n > INT64_MAX / (int64_t)sizeof(void*)) {
    return AcdValidationFail(v, field, EOVERFLOW,
                             "expected %" PRId64 " pointers, whose size overflows int64", n);
  }
  if (!ACD_IS_ALIGNED(ptr, _Alignof(void*))) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected %" PRId64 " pointers aligned to %d bytes, found %p", n,
                             (int)_Alignof(void*), ptr);
  }
  if (!AcdAddressRangeValid(ptr, n * (int64_t)sizeof(void*))) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected %" PRId64 " pointers, found %p, whose range is not in "
                             "readable memory",
                             n, ptr);
  }
  return ACD_OK;
}

// A child or dictionary struct must be readable before its length is used.
// Its release is checked here too (ACD_CALLBACK_VALID), at every level.
static int AcdValidateArrayPointer(struct AcdValidation* v, const struct ArrowArray* a,
                                   const char* field) {
  if (a == NULL) return AcdValidationFail(v, field, EINVAL, "expected an array, found NULL");
  if (!ACD_IS_ALIGNED(a, _Alignof(struct ArrowArray))) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected a struct ArrowArray aligned to %d bytes, found %p",
                             (int)_Alignof(struct ArrowArray), (const void*)a);
  }
  if (!AcdValidationReadable(a, sizeof(*a))) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected a struct ArrowArray in readable memory, found %p",
                             (const void*)a);
  }
  if (a->release == NULL) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected a live array, found a released one (release is NULL)");
  }
  if (!ACD_CALLBACK_VALID(a->release, ACD_ROLE_ARRAY_RELEASE)) {
    char where[64];
    snprintf(where, sizeof(where), "%s%srelease", field == NULL ? "" : field,
             field == NULL ? "" : ".");
    char text[400];
    return AcdValidationFail(v, where, EINVAL, "%s",
                             AcdCallbackDescribe((void (*)(void))a->release,
                                                 ACD_ROLE_ARRAY_RELEASE, text, sizeof(text)));
  }
  return ACD_OK;
}

static int AcdArrayPointerValid(const struct ArrowArray* a) {  // AcdValidateArrayPointer's checks
  return a != NULL && ACD_IS_ALIGNED(a, _Alignof(struct ArrowArray)) &&
         AcdValidationReadable(a, sizeof(*a)) && a->release != NULL &&
         ACD_CALLBACK_VALID(a->release, ACD_ROLE_ARRAY_RELEASE);
}

static int AcdArrayValidateStruct(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int code = AcdArrayValidateCounts(v, node);
  if (code != ACD_OK) return code;

  code = AcdValidatePointerArray(v, a->buffers, a->n_buffers, "buffers");
  if (code != ACD_OK) return code;
  if (node->format.type == ACD_TYPE_NA && a->n_buffers == 1 && a->buffers[0] != NULL) {
    return AcdValidationFail(v, "buffers[0]", EINVAL,
                             "expected no buffers for a null array (or one NULL buffer), found %p",
                             a->buffers[0]);
  }

  code = AcdValidatePointerArray(v, a->children, a->n_children, "children");
  if (code != ACD_OK) return code;
  for (int64_t i = 0; i < a->n_children; i++) {
    if (AcdArrayPointerValid(a->children[i])) continue;
    char field[40];  // named only for the message
    snprintf(field, sizeof(field), "children[%" PRId64 "]", i);
    return AcdValidateArrayPointer(v, a->children[i], field);
  }

  if (node->schema->dictionary != NULL) {
    return AcdValidateArrayPointer(v, a->dictionary, "dictionary");
  }
  if (a->dictionary != NULL) {
    return AcdValidationFail(v, "dictionary", EINVAL,
                             "expected NULL (the schema is not dictionary-encoded), found %p",
                             (const void*)a->dictionary);
  }
  return ACD_OK;
}

// ---- DEFAULT: buffer sizes --------------------------------------------------

// Buffer i holds what the type's rules say (AcdBufferSizeOf; `value` is the
// element its size depends on, if any): it may be NULL only when that is 0
// bytes, and from DEFAULT on it must be readable for them.
static int AcdCheckBuffer(struct AcdValidation* v, const struct AcdArrayNode* node, int64_t i,
                          int64_t value) {
  const struct ArrowArray* a = node->array;
  struct AcdBufferSize size;
  struct AcdError rule_error;
  int code = AcdBufferSizeOf(&node->format, a->length, a->offset, a->n_buffers, i, value, &size,
                             v->error == NULL ? NULL : &rule_error);
  const void* ptr = code == ACD_OK ? a->buffers[i] : NULL;
  if (code == ACD_OK && (size.bytes == 0 || (ptr != NULL && (node->level < ACD_VALIDATION_DEFAULT ||
                                                               AcdAddressRangeValid(ptr, size.bytes))))) {
    return ACD_OK;
  }
  char field[40];  // named only on failure: this runs for every buffer of every node
  snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
  if (code != ACD_OK) return AcdValidationFail(v, field, code, "%s", rule_error.message);

  char what[96];
  if (size.item_size == 1) {
    snprintf(what, sizeof(what), "%" PRId64 " %s", size.count, size.noun);
  } else {
    snprintf(what, sizeof(what), "%" PRId64 " %s (%" PRId64 " bytes)", size.count, size.noun,
             size.bytes);
  }
  if (ptr == NULL) {
    return AcdValidationFail(v, field, EINVAL, "expected %s, found NULL", what);
  }
  // Device memory, or a read before waiting on a sync event: say so.
  char where[256];
  AcdAddressDescribe(ptr, size.bytes, where, sizeof(where));
  if (where[0] != '\0') {
    return AcdValidationFail(v, field, EINVAL, "expected %s, found %p%s", what, ptr, where);
  }
  return AcdValidationFail(v, field, EINVAL,
                           "expected %s, found %p, whose range is not in readable memory", what,
                           ptr);
}

// Offsets of binary, utf8, list and map (none for an empty array, as Arrow
// C++ accepts), then the first and the last are read.
static int AcdArrayValidateOffsets(struct AcdValidation* v, struct AcdArrayNode* node,
                                   int width) {
  const struct ArrowArray* a = node->array;
  int code = AcdCheckBuffer(v, node, 1, 0);
  if (code != ACD_OK || node->level < ACD_VALIDATION_DEFAULT || a->length == 0) return code;

  int64_t first = AcdReadInt(a->buffers[1], a->offset, width);
  int64_t last = AcdReadInt(a->buffers[1], node->end, width);
  if (first < 0 || first > last) {
    return AcdValidationFail(v, "buffers[1]", EINVAL,
                             "expected 0 <= offsets[%" PRId64 "] (the first) <= offsets[%" PRId64
                             "] (the last), found %" PRId64 " and %" PRId64,
                             a->offset, node->end, first, last);
  }
  node->last_offset = last;
  return ACD_OK;
}

// Views, then the variadic sizes (the last buffer) and the data buffers
// they give the size of.
static int AcdArrayValidateViewBuffers(struct AcdValidation* v, struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int64_t n_variadic = a->n_buffers - 3;
  int64_t sizes_index = a->n_buffers - 1;
  int code = AcdCheckBuffer(v, node, 1, 0);
  if (code == ACD_OK) code = AcdCheckBuffer(v, node, sizes_index, 0);
  if (code != ACD_OK || node->level < ACD_VALIDATION_DEFAULT) return code;

  for (int64_t k = 0; k < n_variadic; k++) {
    int64_t size = AcdReadInt(a->buffers[sizes_index], k, 8);
    if (size < 0) {
      char field[40];
      snprintf(field, sizeof(field), "buffers[%" PRId64 "]", sizes_index);
      return AcdValidationFail(v, field, EINVAL,
                               "expected variadic buffer sizes >= 0, found %" PRId64
                               " at index %" PRId64,
                               size, k);
    }
    code = AcdCheckBuffer(v, node, 2 + k, size);
    if (code != ACD_OK) return code;
  }
  return ACD_OK;
}

static int AcdArrayValidateBuffers(struct AcdValidation* v, struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  enum AcdType type = node->format.type;
  int code = ACD_OK;
  int has_validity = AcdTypeHasValidity(type);

  if (has_validity) {
    if (a->buffers[0] == NULL) {
      // null_count -1 with no bitmap is read as no nulls, as Arrow C++ (pyarrow) and arrow-rs
      // read it; the spec allows a NULL bitmap only with null_count 0, and nanoarrow and arrow-go
      // refuse it (docs/conformance.md). Accepted: it is unambiguous, and refusing it would turn
      // away what those producers' consumers take.
      if (a->null_count > 0) {
        return AcdValidationFail(v, "buffers[0]", EINVAL,
                                 "expected a validity bitmap (null_count is %" PRId64
                                 "), found NULL",
                                 a->null_count);
      }
    } else {
      code = AcdCheckBuffer(v, node, 0, 0);
      if (code != ACD_OK) return code;
    }
  }

  switch (type) {
    case ACD_TYPE_NA:
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_FIXED_SIZE_LIST:
    case ACD_TYPE_RUN_END_ENCODED:
      return ACD_OK;
    case ACD_TYPE_BINARY:
    case ACD_TYPE_STRING:
    case ACD_TYPE_LARGE_BINARY:
    case ACD_TYPE_LARGE_STRING: {
      int width = type == ACD_TYPE_BINARY || type == ACD_TYPE_STRING ? 4 : 8;
      code = AcdArrayValidateOffsets(v, node, width);
      if (code != ACD_OK || node->level < ACD_VALIDATION_DEFAULT) return code;
      return AcdCheckBuffer(v, node, 2, node->last_offset);
    }
    case ACD_TYPE_LIST:
    case ACD_TYPE_MAP:
      return AcdArrayValidateOffsets(v, node, 4);
    case ACD_TYPE_LARGE_LIST:
      return AcdArrayValidateOffsets(v, node, 8);
    case ACD_TYPE_BINARY_VIEW:
    case ACD_TYPE_STRING_VIEW:
      return AcdArrayValidateViewBuffers(v, node);
    default:
      // Booleans, list views, unions and every fixed-width type: each buffer
      // after the validity bitmap, in order.
      for (int64_t i = has_validity ? 1 : 0; i < a->n_buffers && code == ACD_OK; i++) {
        code = AcdCheckBuffer(v, node, i, 0);
      }
      return code;
  }
}

// ---- the walk ---------------------------------------------------------------

static int AcdArrayValidateNode(struct AcdValidation* v, const struct ArrowSchema* schema,
                                const struct ArrowArray* array, enum AcdValidationLevel level,
                                int depth) {
  if (depth >= ACD_VALIDATION_MAX_DEPTH) {
    return AcdValidationFail(v, NULL, EINVAL, "cycle or nesting deeper than %d levels",
                             ACD_VALIDATION_MAX_DEPTH);
  }
  if (AcdValidationVisit(v) != ACD_OK) return EINVAL;
  // Readable and aligned: checked by the parent (or the root's caller).
  int code = AcdValidationVisitStruct(v, v->root, array, ACD_TREE_ARRAY);
  if (code != ACD_OK) return code;
  // Set field by field (the format by AcdFormatParse): no memset of its room for 128 union ids.
  struct AcdArrayNode node;
  node.schema = schema;
  node.array = array;
  node.level = level;
  node.last_offset = 0;
  // The schema was validated, so its format parses.
  code = AcdFormatParse(schema->format, &node.format, NULL);
  if (code != ACD_OK) return AcdValidationFail(v, "format", code, "does not parse");

  code = AcdArrayValidateStruct(v, &node);
  if (code != ACD_OK) return code;
  node.end = array->offset + array->length;
  // Arrow C++ requires no buffer bytes at all for an empty array.
  node.extent = array->length == 0 ? 0 : node.end;
  node.validity = AcdTypeHasValidity(node.format.type) ? (const uint8_t*)array->buffers[0] : NULL;

  code = AcdArrayValidateBuffers(v, &node);
  if (code != ACD_OK) return code;

  for (int64_t i = 0; i < array->n_children; i++) {
    size_t mark = AcdValidationPushChild(v, i);
    code = AcdArrayValidateNode(v, schema->children[i], array->children[i], level, depth + 1);
    AcdValidationPop(v, mark);
    if (code != ACD_OK) return code;
  }
  if (schema->dictionary != NULL) {
    size_t mark = AcdValidationPushText(v, ".dictionary");
    code = AcdArrayValidateNode(v, schema->dictionary, array->dictionary, level, depth + 1);
    AcdValidationPop(v, mark);
    if (code != ACD_OK) return code;
  }

  code = AcdArrayValidateRelations(v, &node);
  if (code != ACD_OK || level < ACD_VALIDATION_FULL) return code;
  return AcdArrayValidateContent(v, &node);
}

static int AcdArrayValidateImpl(const struct ArrowSchema* schema, const struct ArrowArray* array,
                                enum AcdValidationLevel level, int schema_valid,
                                struct AcdError* error) {
  struct AcdValidation v;
  AcdValidationInit(&v, error);
  if (level < ACD_VALIDATION_NONE || level > ACD_VALIDATION_FULL) {
    return AcdErrorSet(error, EINVAL, "validation level: expected 0 to 3, found %d", (int)level);
  }
  if (array == NULL) return AcdValidationFail(&v, NULL, EINVAL, "expected an array, found NULL");
  int code = AcdValidateArrayPointer(&v, array, NULL);
  if (code != ACD_OK || level == ACD_VALIDATION_NONE) return code;

  if (!schema_valid) {
    code = AcdSchemaValidate(schema, error);
    if (code != ACD_OK) {
      AcdErrorPrefix(error, "schema");
      return code;
    }
  }
  v.root = array;
  code = AcdArrayValidateNode(&v, schema, array, level, 0);
  AcdValidationEnd(&v);
  return code;
}

int AcdArrayValidate(const struct ArrowSchema* schema, const struct ArrowArray* array,
                     enum AcdValidationLevel level, struct AcdError* error) {
  return AcdArrayValidateImpl(schema, array, level, 0, error);
}

int AcdArrayValidateWithValidSchema(const struct ArrowSchema* schema,
                                    const struct ArrowArray* array,
                                    enum AcdValidationLevel level, struct AcdError* error) {
  return AcdArrayValidateImpl(schema, array, level, 1, error);
}
