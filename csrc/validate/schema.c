// Schema validation (the path bookkeeping of a walk is in walk.c).
//
// Nothing here trusts a pointer: every struct, pointer array and string is
// checked with AcdAddressRangeValid before it is read, because on wasm a read
// past the linear memory traps the whole instance.

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate/validate.h"

// ---- schemas --------------------------------------------------------------

static int AcdValidateString(struct AcdValidation* v, const char* s, const char* field) {
  int64_t length = AcdStringLength(s);
  if (length < 0) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected a NUL-terminated string, found one that runs past the "
                             "end of readable memory");
  }
  int64_t bad = AcdUtf8Validate(s, length);
  if (bad >= 0) {
    return AcdValidationFail(v, field, EINVAL,
                             "expected UTF-8, found an invalid sequence at byte %" PRId64, bad);
  }
  return ACD_OK;
}

static int AcdSchemaValidateNode(struct AcdValidation* v, const struct ArrowSchema* schema,
                                 int depth);

// Validates a child or dictionary; the caller has pushed its path.
static int AcdSchemaValidateChild(struct AcdValidation* v, const struct ArrowSchema* child,
                                  int depth) {
  if (child == NULL) {
    return AcdValidationFail(v, NULL, EINVAL, "expected a schema, found NULL");
  }
  return AcdSchemaValidateNode(v, child, depth + 1);
}

static int AcdSchemaValidateFlags(struct AcdValidation* v, const struct ArrowSchema* schema,
                                  const struct AcdFormat* format) {
  int64_t known =
      ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_NULLABLE | ARROW_FLAG_MAP_KEYS_SORTED;
  if ((schema->flags & ~known) != 0) {
    return AcdValidationFail(v, "flags", EINVAL,
                             "expected a combination of ARROW_FLAG_DICTIONARY_ORDERED (1), "
                             "ARROW_FLAG_NULLABLE (2) and ARROW_FLAG_MAP_KEYS_SORTED (4), "
                             "found %" PRId64,
                             schema->flags);
  }
  if ((schema->flags & ARROW_FLAG_DICTIONARY_ORDERED) && schema->dictionary == NULL) {
    return AcdValidationFail(v, "flags", EINVAL,
                             "ARROW_FLAG_DICTIONARY_ORDERED is only allowed on a "
                             "dictionary-encoded field, found it on one without a dictionary");
  }
  if ((schema->flags & ARROW_FLAG_MAP_KEYS_SORTED) && format->type != ACD_TYPE_MAP) {
    return AcdValidationFail(v, "flags", EINVAL,
                             "ARROW_FLAG_MAP_KEYS_SORTED is only allowed on a map ('+m'), "
                             "found it on %s ('%s')",
                             AcdTypeName(format->type), schema->format);
  }
  return ACD_OK;
}

static int AcdSchemaValidateChildren(struct AcdValidation* v, const struct ArrowSchema* schema,
                                     const struct AcdFormat* format, int depth) {
  int64_t n = schema->n_children;
  if (n < 0) {
    return AcdValidationFail(v, "n_children", EINVAL, "expected a count >= 0, found %" PRId64, n);
  }
  int is_union =
      format->type == ACD_TYPE_DENSE_UNION || format->type == ACD_TYPE_SPARSE_UNION;
  int64_t expected = is_union ? format->n_type_ids : AcdTypeChildCount(format->type);
  if (expected >= 0 && n != expected) {
    return AcdValidationFail(v, "n_children", EINVAL,
                             "expected %" PRId64 " for %s ('%s'%s), found %" PRId64, expected,
                             AcdTypeName(format->type), schema->format,
                             is_union ? ": one per type id" : "", n);
  }
  if (n == 0) return ACD_OK;

  if (schema->children == NULL) {
    return AcdValidationFail(v, "children", EINVAL,
                             "expected %" PRId64 " child pointers, found NULL", n);
  }
  if (!ACD_IS_ALIGNED(schema->children, _Alignof(struct ArrowSchema*))) {
    return AcdValidationFail(v, "children", EINVAL,
                             "expected %" PRId64 " child pointers aligned to %d bytes, found %p",
                             n, (int)_Alignof(struct ArrowSchema*), (const void*)schema->children);
  }
  if (n > INT64_MAX / (int64_t)sizeof(void*) ||
      !AcdValidationReadable(schema->children, n * (int64_t)sizeof(void*))) {
    return AcdValidationFail(v, "children", EINVAL,
                             "expected %" PRId64 " child pointers, found a pointer whose "
                             "range is not in readable memory",
                             n);
  }
  for (int64_t i = 0; i < n; i++) {
    size_t mark = AcdValidationPushChild(v, i);
    int code = AcdSchemaValidateChild(v, schema->children[i], depth);
    AcdValidationPop(v, mark);
    if (code != ACD_OK) return code;
  }
  return ACD_OK;
}

// A map's single child is a 2-field struct (key, value) with a non-nullable key.
static int AcdSchemaValidateMap(struct AcdValidation* v, const struct ArrowSchema* schema) {
  const struct ArrowSchema* entries = schema->children[0];
  size_t mark = AcdValidationPushChild(v, 0);
  if (strcmp(entries->format, "+s") != 0) {
    return AcdValidationFail(v, NULL, EINVAL,
                             "expected the map's entries to be a struct ('+s'), found '%s'",
                             entries->format);
  }
  if (entries->n_children != 2) {
    return AcdValidationFail(v, "n_children", EINVAL,
                             "expected the map's entries struct to have 2 children (key, "
                             "value), found %" PRId64,
                             entries->n_children);
  }
  if (entries->children[0]->flags & ARROW_FLAG_NULLABLE) {
    AcdValidationPushChild(v, 0);
    return AcdValidationFail(v, "flags", EINVAL,
                             "expected the map's key field to be non-nullable, found "
                             "ARROW_FLAG_NULLABLE set");
  }
  AcdValidationPop(v, mark);
  return ACD_OK;
}

// A run-end encoded field has run_ends (int16, int32 or int64) and values.
static int AcdSchemaValidateRunEndEncoded(struct AcdValidation* v,
                                          const struct ArrowSchema* schema) {
  const struct ArrowSchema* run_ends = schema->children[0];
  struct AcdFormat format;
  AcdFormatParse(run_ends->format, &format, NULL);  // valid: the child was validated
  enum AcdType type = format.type;
  int is_signed = type == ACD_TYPE_INT16 || type == ACD_TYPE_INT32 || type == ACD_TYPE_INT64;
  if (!is_signed || run_ends->dictionary != NULL) {
    AcdValidationPushChild(v, 0);
    return AcdValidationFail(v, NULL, EINVAL,
                             "expected run ends of type int16, int32 or int64 ('s', 'i', 'l'), "
                             "found '%s'%s",
                             run_ends->format,
                             run_ends->dictionary != NULL ? " (dictionary-encoded)" : "");
  }
  return ACD_OK;
}

static int AcdIsIndexType(enum AcdType type) {
  return type >= ACD_TYPE_INT8 && type <= ACD_TYPE_UINT64;
}

// ---- schema nodes -----------------------------------------------------------

static int AcdSchemaValidateNode(struct AcdValidation* v, const struct ArrowSchema* schema,
                                 int depth) {
  if (depth >= ACD_VALIDATION_MAX_DEPTH) {
    return AcdValidationFail(v, NULL, EINVAL, "cycle or nesting deeper than %d levels",
                             ACD_VALIDATION_MAX_DEPTH);
  }
  if (AcdValidationVisit(v) != ACD_OK) return EINVAL;
  if (!ACD_IS_ALIGNED(schema, _Alignof(struct ArrowSchema))) {
    return AcdValidationFail(v, NULL, EINVAL,
                             "expected a struct ArrowSchema aligned to %d bytes, found %p",
                             (int)_Alignof(struct ArrowSchema), (const void*)schema);
  }
  if (!AcdValidationReadable(schema, sizeof(*schema))) {
    return AcdValidationFail(v, NULL, EINVAL,
                             "expected a struct ArrowSchema in readable memory, found %p",
                             (const void*)schema);
  }
  int code = AcdValidationVisitStruct(v, v->root, schema, ACD_TREE_SCHEMA);
  if (code != ACD_OK) return code;
  if (schema->release == NULL) {
    return AcdValidationFail(v, NULL, EINVAL,
                             "expected a live schema, found a released one (release is NULL)");
  }
  if (!ACD_CALLBACK_VALID(schema->release, ACD_ROLE_SCHEMA_RELEASE)) {
    char text[400];
    return AcdValidationFail(v, "release", EINVAL, "%s",
                             AcdCallbackDescribe((void (*)(void))schema->release,
                                                 ACD_ROLE_SCHEMA_RELEASE, text, sizeof(text)));
  }

  if (schema->format == NULL) {
    return AcdValidationFail(v, "format", EINVAL, "expected a format string, found NULL");
  }
  code = AcdValidateString(v, schema->format, "format");
  if (code != ACD_OK) return code;
  struct AcdFormat format;
  code = AcdFormatParse(schema->format, &format, v->error);
  if (code != ACD_OK) return AcdValidationPrefix(v, code);

  if (schema->name != NULL) {
    code = AcdValidateString(v, schema->name, "name");
    if (code != ACD_OK) return code;
  }
  if (AcdMetadataSize(schema->metadata, -1, v->error) < 0) {
    return AcdValidationPrefix(v, EINVAL);
  }

  code = AcdSchemaValidateFlags(v, schema, &format);
  if (code != ACD_OK) return code;
  code = AcdSchemaValidateChildren(v, schema, &format, depth);
  if (code != ACD_OK) return code;

  // The children are valid now, so their fields may be read.
  if (format.type == ACD_TYPE_MAP) {
    code = AcdSchemaValidateMap(v, schema);
  } else if (format.type == ACD_TYPE_RUN_END_ENCODED) {
    code = AcdSchemaValidateRunEndEncoded(v, schema);
  }
  if (code != ACD_OK) return code;

  if (schema->dictionary != NULL) {
    if (!AcdIsIndexType(format.type)) {
      return AcdValidationFail(v, "format", EINVAL,
                               "expected an integer index type (c, C, s, S, i, I, l, L) for a "
                               "dictionary-encoded field, found '%s'",
                               schema->format);
    }
    size_t mark = AcdValidationPushText(v, ".dictionary");
    code = AcdSchemaValidateChild(v, schema->dictionary, depth);
    AcdValidationPop(v, mark);
    return code;
  }
  return ACD_OK;
}

int AcdSchemaValidate(const struct ArrowSchema* schema, struct AcdError* error) {
  struct AcdValidation v;
  AcdValidationInit(&v, error);
  if (schema == NULL) {
    return AcdValidationFail(&v, NULL, EINVAL, "expected a schema, found NULL");
  }
  v.root = schema;
  int code = AcdSchemaValidateNode(&v, schema, 0);
  AcdValidationEnd(&v);
  return code;
}
