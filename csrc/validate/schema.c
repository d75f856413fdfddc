// Schema validation, and the path bookkeeping shared with validate_array.c.
//
// Nothing here trusts a pointer: every struct, pointer array and string is
// checked with AcdAddressRangeValid before it is read, because on wasm a read
// past the linear memory traps the whole instance.

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "acd.h"

// ---- paths ----------------------------------------------------------------

void AcdValidationInit(struct AcdValidation* v, struct AcdError* error) {
  v->error = error;
  v->nodes_left = ACD_VALIDATION_MAX_NODES;
  v->path_length = 4;
  memcpy(v->path, "root", 5);
  v->root = NULL;
  v->seen = NULL;
  v->seen_capacity = 0;
  v->seen_count = 0;
}

void AcdValidationEnd(struct AcdValidation* v) {
  if (v->seen != NULL && v->seen != v->seen_inline) AcdFree(v->seen);
  v->seen = NULL;
  v->seen_capacity = 0;
  v->seen_count = 0;
}

// Appends n bytes of text to the path (truncating at its end); returns the mark.
static size_t AcdValidationAppend(struct AcdValidation* v, const char* text, size_t n) {
  size_t mark = v->path_length;
  if (v->error == NULL) return mark;
  size_t room = sizeof(v->path) - 1 - mark;
  if (n > room) n = room;
  memcpy(v->path + mark, text, n);
  v->path_length = mark + n;
  v->path[v->path_length] = '\0';
  return mark;
}

// The common path components without vsnprintf: the path is built on every
// node a validation visits, so it has to be cheap.
size_t AcdValidationPushText(struct AcdValidation* v, const char* text) {
  return AcdValidationAppend(v, text, strlen(text));
}

size_t AcdValidationPushChild(struct AcdValidation* v, int64_t i) {
  char text[40] = ".children[";
  size_t n = 10;
  char digits[24];
  size_t d = 0;
  uint64_t x = (uint64_t)i;
  do {
    digits[d++] = (char)('0' + x % 10);
    x /= 10;
  } while (x != 0);
  while (d > 0) text[n++] = digits[--d];
  text[n++] = ']';
  return AcdValidationAppend(v, text, n);
}

size_t AcdValidationPush(struct AcdValidation* v, const char* fmt, ...) {
  size_t mark = v->path_length;
  // Without an error to fill, the path is never shown.
  if (v->error == NULL) return mark;

  size_t room = sizeof(v->path) - mark;
  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(v->path + mark, room, fmt, args);
  va_end(args);
  if (n < 0) {
    v->path[mark] = '\0';
  } else {
    v->path_length = (size_t)n < room ? mark + (size_t)n : sizeof(v->path) - 1;
  }
  return mark;
}

void AcdValidationPop(struct AcdValidation* v, size_t mark) {
  v->path_length = mark;
  v->path[mark] = '\0';
}

// Very deep paths keep their start and end, so that the message still fits.
static void AcdValidationPrefixPath(struct AcdValidation* v, const char* field) {
  const char* sep = field == NULL ? "" : ".";
  if (field == NULL) field = "";
  if (v->path_length <= 400) {
    AcdErrorPrefix(v->error, "%s%s%s", v->path, sep, field);
  } else {
    const char* tail = v->path + v->path_length - 250;
    AcdErrorPrefix(v->error, "%.100s...%s%s%s", v->path, tail, sep, field);
  }
}

int AcdValidationFail(struct AcdValidation* v, const char* field, int code, const char* fmt,
                      ...) {
  if (v->error == NULL) return code;

  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(v->error->message, sizeof(v->error->message), fmt, args);
  va_end(args);
  if (n < 0) v->error->message[0] = '\0';
  AcdValidationPrefixPath(v, field);
  return code;
}

int AcdValidationPrefix(struct AcdValidation* v, int code) {
  if (v->error != NULL) AcdValidationPrefixPath(v, NULL);
  return code;
}

int AcdValidationReadable(const void* ptr, int64_t size) {
  return size == 0 || (size > 0 && AcdAddressRangeValid(ptr, size));
}

// ---- schemas --------------------------------------------------------------

// The length of a NUL-terminated string, or -1 when it runs past readable
// memory. Checks 64 bytes at a time, then byte by byte near the end.
int64_t AcdStringLength(const char* s) {
  int64_t i = 0;
  for (;;) {
    int64_t chunk = AcdAddressRangeValid(s + i, 64) ? 64 : 1;
    if (chunk == 1 && !AcdAddressRangeValid(s + i, 1)) return -1;
    const char* end = memchr(s + i, '\0', (size_t)chunk);
    if (end != NULL) return (int64_t)(end - s);
    i += chunk;
  }
}

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
