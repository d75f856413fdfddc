// Tests of the C core's parsing and validation, built natively (test/c/run.sh)
// with ASan/UBSan: format strings, metadata, UTF-8, error messages, and the
// schema and array validators on small trees built by hand on the stack.
//
// Prints "c-core: N passed, M failed" and exits non-zero when M > 0.
//
// Longer than 400 lines because it is one test program over the whole core:
// its cases share the hand-built trees and the harness, one binary per file.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stream/stream.h"
#include "check.h"

// ---- abi/error.c --------------------------------------------------------------

static void TestErrors(void) {
  struct AcdError error;
  CHECK(AcdErrorSet(NULL, EINVAL, "x %d", 1) == EINVAL);
  AcdErrorPrefix(NULL, "p");

  CHECK(AcdErrorSet(&error, ERANGE, "value %d", 42) == ERANGE);
  CHECK(strcmp(error.message, "value 42") == 0);
  AcdErrorPrefix(&error, "children[%d]", 3);
  CHECK(strcmp(error.message, "children[3]: value 42") == 0);

  // Long messages and prefixes are cut, always terminated.
  char long_text[3000];
  memset(long_text, 'a', sizeof(long_text) - 1);
  long_text[sizeof(long_text) - 1] = '\0';
  AcdErrorSet(&error, EINVAL, "%s", long_text);
  CHECK(strlen(error.message) == sizeof(error.message) - 1);
  AcdErrorSet(&error, EINVAL, "tail");
  AcdErrorPrefix(&error, "%s", long_text);
  CHECK(strlen(error.message) == sizeof(error.message) - 1);
  CHECK(strncmp(error.message, "aaaa", 4) == 0);
  AcdErrorSet(&error, EINVAL, "%s", long_text);
  AcdErrorPrefix(&error, "root");
  CHECK(strncmp(error.message, "root: aaa", 9) == 0);
  CHECK(strlen(error.message) == sizeof(error.message) - 1);
}

// ---- model/format.c ----------------------------------------------------------

struct FormatCase {
  const char* format;
  enum AcdType type;
  enum AcdTimeUnit unit;
  int32_t byte_width;
  int32_t precision;
  int32_t scale;
  int64_t fixed_size;
  const char* timezone;
  int32_t n_type_ids;
  int64_t n_buffers;
  int64_t n_children;
};

static const struct FormatCase kValidFormats[] = {
    {"n", ACD_TYPE_NA, 0, 0, 0, 0, 0, NULL, 0, 0, 0},
    {"b", ACD_TYPE_BOOL, 0, 0, 0, 0, 0, NULL, 0, 2, 0},
    {"c", ACD_TYPE_INT8, 0, 1, 0, 0, 0, NULL, 0, 2, 0},
    {"C", ACD_TYPE_UINT8, 0, 1, 0, 0, 0, NULL, 0, 2, 0},
    {"s", ACD_TYPE_INT16, 0, 2, 0, 0, 0, NULL, 0, 2, 0},
    {"S", ACD_TYPE_UINT16, 0, 2, 0, 0, 0, NULL, 0, 2, 0},
    {"i", ACD_TYPE_INT32, 0, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"I", ACD_TYPE_UINT32, 0, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"l", ACD_TYPE_INT64, 0, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"L", ACD_TYPE_UINT64, 0, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"e", ACD_TYPE_HALF_FLOAT, 0, 2, 0, 0, 0, NULL, 0, 2, 0},
    {"f", ACD_TYPE_FLOAT, 0, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"g", ACD_TYPE_DOUBLE, 0, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"z", ACD_TYPE_BINARY, 0, 0, 0, 0, 0, NULL, 0, 3, 0},
    {"Z", ACD_TYPE_LARGE_BINARY, 0, 0, 0, 0, 0, NULL, 0, 3, 0},
    {"vz", ACD_TYPE_BINARY_VIEW, 0, 16, 0, 0, 0, NULL, 0, 3, 0},
    {"u", ACD_TYPE_STRING, 0, 0, 0, 0, 0, NULL, 0, 3, 0},
    {"U", ACD_TYPE_LARGE_STRING, 0, 0, 0, 0, 0, NULL, 0, 3, 0},
    {"vu", ACD_TYPE_STRING_VIEW, 0, 16, 0, 0, 0, NULL, 0, 3, 0},
    {"d:19,10", ACD_TYPE_DECIMAL128, 0, 16, 19, 10, 0, NULL, 0, 2, 0},
    {"d:38,-2", ACD_TYPE_DECIMAL128, 0, 16, 38, -2, 0, NULL, 0, 2, 0},
    {"d:9,2,32", ACD_TYPE_DECIMAL32, 0, 4, 9, 2, 0, NULL, 0, 2, 0},
    {"d:18,0,64", ACD_TYPE_DECIMAL64, 0, 8, 18, 0, 0, NULL, 0, 2, 0},
    {"d:1,1,128", ACD_TYPE_DECIMAL128, 0, 16, 1, 1, 0, NULL, 0, 2, 0},
    {"d:76,40,256", ACD_TYPE_DECIMAL256, 0, 32, 76, 40, 0, NULL, 0, 2, 0},
    {"w:42", ACD_TYPE_FIXED_SIZE_BINARY, 0, 42, 0, 0, 42, NULL, 0, 2, 0},
    {"w:0", ACD_TYPE_FIXED_SIZE_BINARY, 0, 0, 0, 0, 0, NULL, 0, 2, 0},
    {"tdD", ACD_TYPE_DATE32, 0, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"tdm", ACD_TYPE_DATE64, 0, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tts", ACD_TYPE_TIME32, ACD_TIME_UNIT_SECOND, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"ttm", ACD_TYPE_TIME32, ACD_TIME_UNIT_MILLI, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"ttu", ACD_TYPE_TIME64, ACD_TIME_UNIT_MICRO, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"ttn", ACD_TYPE_TIME64, ACD_TIME_UNIT_NANO, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tss:", ACD_TYPE_TIMESTAMP, ACD_TIME_UNIT_SECOND, 8, 0, 0, 0, "", 0, 2, 0},
    {"tsm:UTC", ACD_TYPE_TIMESTAMP, ACD_TIME_UNIT_MILLI, 8, 0, 0, 0, "UTC", 0, 2, 0},
    {"tsu:Europe/Paris", ACD_TYPE_TIMESTAMP, ACD_TIME_UNIT_MICRO, 8, 0, 0, 0, "Europe/Paris", 0,
     2, 0},
    {"tsn:+07:30", ACD_TYPE_TIMESTAMP, ACD_TIME_UNIT_NANO, 8, 0, 0, 0, "+07:30", 0, 2, 0},
    {"tDs", ACD_TYPE_DURATION, ACD_TIME_UNIT_SECOND, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tDm", ACD_TYPE_DURATION, ACD_TIME_UNIT_MILLI, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tDu", ACD_TYPE_DURATION, ACD_TIME_UNIT_MICRO, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tDn", ACD_TYPE_DURATION, ACD_TIME_UNIT_NANO, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tiM", ACD_TYPE_INTERVAL_MONTHS, 0, 4, 0, 0, 0, NULL, 0, 2, 0},
    {"tiD", ACD_TYPE_INTERVAL_DAY_TIME, 0, 8, 0, 0, 0, NULL, 0, 2, 0},
    {"tin", ACD_TYPE_INTERVAL_MONTH_DAY_NANO, 0, 16, 0, 0, 0, NULL, 0, 2, 0},
    {"+l", ACD_TYPE_LIST, 0, 0, 0, 0, 0, NULL, 0, 2, 1},
    {"+L", ACD_TYPE_LARGE_LIST, 0, 0, 0, 0, 0, NULL, 0, 2, 1},
    {"+vl", ACD_TYPE_LIST_VIEW, 0, 0, 0, 0, 0, NULL, 0, 3, 1},
    {"+vL", ACD_TYPE_LARGE_LIST_VIEW, 0, 0, 0, 0, 0, NULL, 0, 3, 1},
    {"+w:123", ACD_TYPE_FIXED_SIZE_LIST, 0, 0, 0, 0, 123, NULL, 0, 1, 1},
    {"+s", ACD_TYPE_STRUCT, 0, 0, 0, 0, 0, NULL, 0, 1, -1},
    {"+m", ACD_TYPE_MAP, 0, 0, 0, 0, 0, NULL, 0, 2, 1},
    {"+ud:4,5", ACD_TYPE_DENSE_UNION, 0, 0, 0, 0, 0, NULL, 2, 2, -1},
    {"+us:127,0,3", ACD_TYPE_SPARSE_UNION, 0, 0, 0, 0, 0, NULL, 3, 1, -1},
    {"+ud:", ACD_TYPE_DENSE_UNION, 0, 0, 0, 0, 0, NULL, 0, 2, -1},
    {"+r", ACD_TYPE_RUN_END_ENCODED, 0, 0, 0, 0, 0, NULL, 0, 0, 2},
};

static void TestFormatValid(void) {
  struct AcdError error;
  for (size_t k = 0; k < sizeof(kValidFormats) / sizeof(kValidFormats[0]); k++) {
    const struct FormatCase* c = &kValidFormats[k];
    struct AcdFormat f;
    error.message[0] = '\0';
    int code = AcdFormatParse(c->format, &f, &error);
    int ok = code == ACD_OK && f.type == c->type && f.unit == c->unit &&
             f.byte_width == c->byte_width && f.precision == c->precision &&
             f.scale == c->scale && f.fixed_size == c->fixed_size &&
             f.n_type_ids == c->n_type_ids &&
             AcdTypeBufferCount(f.type) == c->n_buffers &&
             AcdTypeChildCount(f.type) == c->n_children &&
             strcmp(AcdTypeName(f.type), "unknown") != 0 &&
             ((c->timezone == NULL && f.timezone == NULL) ||
              (c->timezone != NULL && f.timezone != NULL && strcmp(f.timezone, c->timezone) == 0));
    Check(ok, c->format, __FILE__, __LINE__);
    if (!ok) fprintf(stderr, "  code %d, message '%s'\n", code, error.message);
  }

  struct AcdFormat f;
  CHECK_OK(AcdFormatParse("+us:127,0,3", &f, &error), &error);
  CHECK(f.type_ids[0] == 127 && f.type_ids[1] == 0 && f.type_ids[2] == 3);
  // The timezone points into the format string.
  const char* timestamp = "tsu:Asia/Tokyo";
  CHECK_OK(AcdFormatParse(timestamp, &f, &error), &error);
  CHECK(f.timezone == timestamp + 4);

  // 128 distinct ids is the maximum.
  char ids[1024] = "+ud:";
  for (int i = 0; i < 128; i++) {
    snprintf(ids + strlen(ids), sizeof(ids) - strlen(ids), i == 0 ? "%d" : ",%d", 127 - i);
  }
  CHECK_OK(AcdFormatParse(ids, &f, &error), &error);
  CHECK(f.n_type_ids == 128 && f.type_ids[0] == 127 && f.type_ids[127] == 0);

  CHECK(strcmp(AcdTypeName(ACD_TYPE_INT32), "int32") == 0);
  CHECK(strcmp(AcdTypeName(ACD_TYPE_LARGE_LIST_VIEW), "large_list_view") == 0);
  for (int t = ACD_TYPE_NA; t < ACD_TYPE_COUNT; t++) {
    CHECK(strcmp(AcdTypeName((enum AcdType)t), "unknown") != 0);
    CHECK(AcdTypeBufferCount((enum AcdType)t) >= 0);
  }
  CHECK(AcdFormatParse("i", NULL, NULL) == ACD_OK);
}

struct BadFormat {
  const char* format;
  const char* fragment;
};

static const struct BadFormat kBadFormats[] = {
    {"", "expected a format string, found an empty string"},
    {"xyz", "unknown format string"},
    {"ii", "expected the end of the string after 'i', found 'i'"},
    {"nn", "after 'n'"},
    {"d:19", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"d:19,10,48", "expected a decimal bit width of 32, 64, 128 or 256, found 48"},
    {"d:", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"d:19,", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"d:19,10,", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"d19,10", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"d:0,0", "expected a precision in 1..38 for decimal128, found 0"},
    {"d:39,0", "expected a precision in 1..38 for decimal128, found 39"},
    {"d:10,0,32", "expected a precision in 1..9 for decimal32, found 10"},
    {"d:19,0,64", "expected a precision in 1..18 for decimal64, found 19"},
    {"d:77,0,256", "expected a precision in 1..76 for decimal256, found 77"},
    {"d:19,10x", "found 'x'"},
    {"d:99999999999,1", "expected 'd:PRECISION,SCALE[,BITWIDTH]'"},
    {"w:", "expected 'w:BYTE_WIDTH'"},
    {"w:-1", "expected 'w:BYTE_WIDTH'"},
    {"w", "expected 'w:BYTE_WIDTH'"},
    {"w:4x", "found 'x'"},
    {"+w:x", "expected '+w:LIST_SIZE'"},
    {"+w:", "expected '+w:LIST_SIZE'"},
    {"+w", "expected a nested format"},
    {"tsx:", "expected 'ts' + unit (s, m, u, n) + ':' + timezone"},
    {"tss", "the colon is required even when the timezone is empty"},
    {"t", "expected 'td', 'tt', 'ts', 'tD' or 'ti'"},
    {"tdx", "expected 'tdD' (date32) or 'tdm' (date64)"},
    {"tdDx", "found 'x'"},
    {"ttx", "expected 'tts', 'ttm' (time32) or 'ttu', 'ttn' (time64)"},
    {"tDx", "expected 'tDs', 'tDm', 'tDu' or 'tDn'"},
    {"tix", "expected 'tiM', 'tiD' or 'tin'"},
    {"vx", "expected 'vz' (binary view) or 'vu' (utf8 view)"},
    {"v", "expected 'vz' (binary view) or 'vu' (utf8 view)"},
    {"+", "expected a nested format"},
    {"+x", "expected a nested format"},
    {"+lx", "found 'x'"},
    {"+v", "expected '+vl' (list view) or '+vL' (large list view)"},
    {"+ud:1,1", "expected distinct type ids, found 1 twice"},
    {"+ud:1,,2", "expected '+ud:TYPE_ID,TYPE_ID,...'"},
    {"+ud:200", "expected type ids in 0..127, found 200"},
    {"+ud:-1", "expected '+ud:TYPE_ID,TYPE_ID,...'"},
    {"+ud:1,", "expected '+ud:TYPE_ID,TYPE_ID,...'"},
    {"+us:,", "expected '+us:TYPE_ID,TYPE_ID,...'"},
    {"+ud:1;2", "found ';2'"},
    {"+ud", "expected '+ud:TYPE_IDS' or '+us:TYPE_IDS'"},
    {"+ux:1", "expected '+ud:TYPE_IDS' or '+us:TYPE_IDS'"},
};

static void TestFormatInvalid(void) {
  struct AcdError error;
  for (size_t k = 0; k < sizeof(kBadFormats) / sizeof(kBadFormats[0]); k++) {
    const struct BadFormat* c = &kBadFormats[k];
    char quoted[128];
    snprintf(quoted, sizeof(quoted), "format '%s': ", c->format);
    struct AcdFormat f;
    int code = AcdFormatParse(c->format, &f, &error);
    int ok = code == EINVAL && strncmp(error.message, quoted, strlen(quoted)) == 0 &&
             strstr(error.message, c->fragment) != NULL;
    Check(ok, c->format, __FILE__, __LINE__);
    if (!ok) fprintf(stderr, "  code %d, message '%s'\n", code, error.message);
  }
  CHECK_FAILS(AcdFormatParse(NULL, NULL, &error), EINVAL, &error, "format is NULL");
  CHECK(AcdFormatParse("xyz", NULL, NULL) == EINVAL);

  // A very long format is quoted in part and the message stays terminated.
  char long_format[2000];
  memset(long_format, 'i', sizeof(long_format) - 1);
  long_format[sizeof(long_format) - 1] = '\0';
  CHECK_FAILS(AcdFormatParse(long_format, NULL, &error), EINVAL, &error, "format 'iiii");
  CHECK(strlen(error.message) < sizeof(error.message));
}

// ---- model/utf8.c and model/metadata.c ----------------------------------------------

static void TestUtf8(void) {
  CHECK(AcdUtf8Validate("", 0) == -1);
  CHECK(AcdUtf8Validate("plain ascii text, long enough", 29) == -1);
  CHECK(AcdUtf8Validate("h\xc3\xa9llo \xe6\x97\xa5\xe6\x9c\xac \xf0\x9f\x98\x80", 18) == -1);
  CHECK(AcdUtf8Validate("ab\xff", 3) == 2);
  CHECK(AcdUtf8Validate("\xc0\xaf", 2) == 0);          // overlong '/'
  CHECK(AcdUtf8Validate("\xe0\x80\xaf", 3) == 0);      // overlong
  CHECK(AcdUtf8Validate("x\xed\xa0\x80", 4) == 1);     // surrogate
  CHECK(AcdUtf8Validate("\xf4\x90\x80\x80", 4) == 0);  // above U+10FFFF
  CHECK(AcdUtf8Validate("abcdefgh\xc3", 9) == 8);      // truncated at the end
  CHECK(AcdUtf8Validate("\xc3\x28", 2) == 0);
}

// Appends an int32 and a string to a metadata buffer.
static size_t PutInt(char* out, size_t at, int32_t value) {
  memcpy(out + at, &value, sizeof(value));
  return at + sizeof(value);
}

static size_t PutString(char* out, size_t at, const char* s) {
  size_t n = strlen(s);
  at = PutInt(out, at, (int32_t)n);
  memcpy(out + at, s, n);
  return at + n;
}

static void TestMetadata(void) {
  struct AcdError error;
  char buffer[256];
  CHECK(AcdMetadataSize(NULL, -1, &error) == 0);

  size_t n = PutInt(buffer, 0, 0);
  CHECK(AcdMetadataSize(buffer, -1, &error) == 4);
  CHECK(AcdMetadataSize(buffer, 4, &error) == 4);

  // The specification's example, on a little-endian machine.
  const char example[] = "\x01\x00\x00\x00\x04\x00\x00\x00key1\x06\x00\x00\x00value1";
  int32_t one = 1;
  if (*(const char*)&one == 1) {
    CHECK(AcdMetadataSize(example, sizeof(example) - 1, &error) == 22);
  }

  // Non-ASCII keys and values, at an unaligned address.
  char* meta = buffer + 1;
  n = PutInt(meta, 0, 2);
  n = PutString(meta, n, "cl\xc3\xa9");
  n = PutString(meta, n, "\xe5\x80\xa4");
  n = PutString(meta, n, "\xf0\x9f\x94\x91");
  n = PutString(meta, n, "");
  CHECK(AcdMetadataSize(meta, -1, &error) == (int64_t)n);
  CHECK(AcdMetadataSize(meta, (int64_t)n, &error) == (int64_t)n);
  CHECK(AcdMetadataSize(meta, (int64_t)n - 1, &error) == -1);
  CHECK(strcmp(error.message, "metadata: value 1 length runs past the 30-byte limit "
                              "(needs 4 bytes at offset 27)") == 0);
  CHECK(AcdMetadataSize(meta, 3, &error) == -1);
  CHECK(strcmp(error.message,
               "metadata: pair count runs past the 3-byte limit (needs 4 bytes at offset 0)") == 0);
  CHECK(AcdMetadataSize(meta, 10, &error) == -1);
  CHECK(strcmp(error.message,
               "metadata: key 0 runs past the 10-byte limit (needs 4 bytes at offset 8)") == 0);

  n = PutInt(buffer, 0, -1);
  CHECK(AcdMetadataSize(buffer, -1, &error) == -1);
  CHECK(strcmp(error.message, "metadata: pair count -1 is negative") == 0);

  n = PutInt(buffer, 0, 3);
  n = PutString(buffer, n, "a");
  n = PutString(buffer, n, "b");
  n = PutString(buffer, n, "c");
  n = PutString(buffer, n, "d");
  n = PutInt(buffer, n, -5);
  CHECK(AcdMetadataSize(buffer, -1, &error) == -1);
  CHECK(strcmp(error.message, "metadata: key 2 length -5 is negative") == 0);

  n = PutInt(buffer, 0, 1);
  n = PutString(buffer, n, "k");
  n = PutInt(buffer, n, -1);
  CHECK(AcdMetadataSize(buffer, -1, &error) == -1);
  CHECK(strcmp(error.message, "metadata: value 0 length -1 is negative") == 0);

  n = PutInt(buffer, 0, 1);
  n = PutString(buffer, n, "k\xff");
  n = PutString(buffer, n, "v");
  // Binary strings, not necessarily UTF-8 (the spec; pyarrow exports them).
  CHECK(AcdMetadataSize(buffer, -1, &error) == (int64_t)n);

  n = PutInt(buffer, 0, 2);
  n = PutString(buffer, n, "k");
  n = PutString(buffer, n, "v");
  n = PutString(buffer, n, "k2");
  n = PutString(buffer, n, "\xed\xa0\x80");
  CHECK(AcdMetadataSize(buffer, -1, &error) == (int64_t)n);
  n = PutInt(buffer, 0, 1);
  n = PutString(buffer, n, "k");
  n = PutInt(buffer, n, -1);
  CHECK(AcdMetadataSize(buffer, -1, NULL) == -1);
}

// ---- validation fixtures -------------------------------------------------------

static void ReleaseSchema(struct ArrowSchema* schema) { (void)schema; }
static void ReleaseArray(struct ArrowArray* array) { (void)array; }

static void SchemaSet(struct ArrowSchema* s, const char* format, const char* name, int64_t flags,
                      int64_t n_children, struct ArrowSchema** children) {
  memset(s, 0, sizeof(*s));
  s->format = format;
  s->name = name;
  s->flags = flags;
  s->n_children = n_children;
  s->children = children;
  s->release = ReleaseSchema;
}

static void ArraySet(struct ArrowArray* a, int64_t length, int64_t null_count, int64_t offset,
                     int64_t n_buffers, const void** buffers, int64_t n_children,
                     struct ArrowArray** children) {
  memset(a, 0, sizeof(*a));
  a->length = length;
  a->null_count = null_count;
  a->offset = offset;
  a->n_buffers = n_buffers;
  a->buffers = buffers;
  a->n_children = n_children;
  a->children = children;
  a->release = ReleaseArray;
}

// Valid at every level.
static void ExpectValid(const struct ArrowSchema* schema, const struct ArrowArray* array,
                        int line) {
  struct AcdError error;
  error.message[0] = '\0';
  int code = AcdSchemaValidate(schema, &error);
  for (int level = ACD_VALIDATION_NONE; level <= ACD_VALIDATION_FULL && code == ACD_OK; level++) {
    code = AcdArrayValidate(schema, array, (enum AcdValidationLevel)level, &error);
  }
  Check(code == ACD_OK, "valid at every level", __FILE__, line);
  if (code != ACD_OK) fprintf(stderr, "  code %d, message '%s'\n", code, error.message);
}

// Fails with `fragment` from `level` on, and passes the level below.
static void ExpectInvalid(const struct ArrowSchema* schema, const struct ArrowArray* array,
                          enum AcdValidationLevel level, int expected, const char* fragment,
                          int line) {
  struct AcdError error;
  if (level > ACD_VALIDATION_NONE) {
    error.message[0] = '\0';
    int code = AcdArrayValidate(schema, array, (enum AcdValidationLevel)(level - 1), &error);
    Check(code == ACD_OK, "passes below the failing level", __FILE__, line);
    if (code != ACD_OK) fprintf(stderr, "  code %d, message '%s'\n", code, error.message);
  }
  for (int l = level; l <= ACD_VALIDATION_FULL; l++) {
    error.message[0] = '\0';
    int code = AcdArrayValidate(schema, array, (enum AcdValidationLevel)l, &error);
    int ok = code == expected && strstr(error.message, fragment) != NULL;
    Check(ok, fragment, __FILE__, line);
    if (!ok) {
      fprintf(stderr, "  level %d: code %d, message '%s'\n", l, code, error.message);
      break;
    }
  }
  // Without an error buffer, the same code.
  CHECK(AcdArrayValidate(schema, array, ACD_VALIDATION_FULL, NULL) == expected);
}

#define EXPECT_VALID(schema, array) ExpectValid((schema), (array), __LINE__)
#define EXPECT_INVALID(schema, array, level, fragment) \
  ExpectInvalid((schema), (array), (level), EINVAL, (fragment), __LINE__)

#define MINIMAL ACD_VALIDATION_MINIMAL
#define DEFAULT ACD_VALIDATION_DEFAULT
#define FULL ACD_VALIDATION_FULL

// ---- schema validation ---------------------------------------------------------

static void TestValidateSchema(void) {
  struct AcdError error;
  struct ArrowSchema root, a, b;
  struct ArrowSchema* children[2] = {&a, &b};

  char meta[64];
  size_t n = PutInt(meta, 0, 1);
  n = PutString(meta, n, "k");
  PutString(meta, n, "v");
  SchemaSet(&a, "i", "a", ARROW_FLAG_NULLABLE, 0, NULL);
  SchemaSet(&b, "u", "n\xc3\xa4me", 0, 0, NULL);
  b.metadata = meta;
  SchemaSet(&root, "+s", NULL, 0, 2, children);
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  CHECK(AcdSchemaValidate(&root, NULL) == ACD_OK);

  CHECK_FAILS(AcdSchemaValidate(NULL, &error), EINVAL, &error,
              "root: expected a schema, found NULL");
  root.release = NULL;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root: expected a live schema, found a released one (release is NULL)");
  root.release = ReleaseSchema;

  a.format = NULL;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0].format: expected a format string, found NULL");
  CHECK(strcmp(error.path, "root.children[0].format") == 0);
  a.format = "xyz";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0]: format 'xyz': unknown format string");
  CHECK(strcmp(error.path, "root.children[0]") == 0);
  // A failure outside a walk has no path: none is left from the last one.
  AcdErrorSet(&error, EINVAL, "no place");
  CHECK(error.path[0] == '\0');
  a.format = "d:40,2";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0]: format 'd:40,2': expected a precision in 1..38");
  a.format = "i";

  b.name = "bad\xff";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1].name: expected UTF-8, found an invalid sequence at byte 3");
  b.name = "";
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  PutInt(meta, 4, -5);
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1]: metadata: key 0 length -5 is negative");
  b.metadata = NULL;

  root.n_children = -1;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.n_children: expected a count >= 0, found -1");
  root.n_children = 2;
  root.children = NULL;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children: expected 2 child pointers, found NULL");
  root.children = children;
  children[1] = NULL;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1]: expected a schema, found NULL");
  children[1] = &b;
  b.release = NULL;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1]: expected a live schema");
  b.release = ReleaseSchema;

  a.flags = 8;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0].flags: expected a combination of ARROW_FLAG_DICTIONARY_ORDERED");
  a.flags = ARROW_FLAG_DICTIONARY_ORDERED;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0].flags: ARROW_FLAG_DICTIONARY_ORDERED is only allowed on a "
              "dictionary-encoded field");
  a.flags = ARROW_FLAG_MAP_KEYS_SORTED;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "ARROW_FLAG_MAP_KEYS_SORTED is only allowed on a map ('+m'), found it on int32 "
              "('i')");
  a.flags = 0;

  // Child counts by type.
  root.format = "+l";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.n_children: expected 1 for list ('+l'), found 2");
  root.format = "i";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.n_children: expected 0 for int32 ('i'), found 2");
  root.format = "+ud:0,1,2";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.n_children: expected 3 for dense_union ('+ud:0,1,2': one per type id), found "
              "2");
  root.format = "+us:3,9";
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  root.format = "+r";
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  a.format = "L";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0]: expected run ends of type int16, int32 or int64 ('s', 'i', 'l'), "
              "found 'L'");
  a.format = "s";
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  a.format = "l";
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);

  // Dictionaries: integer indices only; paths go through them.
  struct ArrowSchema dictionary;
  SchemaSet(&dictionary, "u", NULL, 0, 0, NULL);
  SchemaSet(&root, "+s", NULL, 0, 2, children);
  a.format = "c";
  a.dictionary = &dictionary;
  a.flags = ARROW_FLAG_DICTIONARY_ORDERED | ARROW_FLAG_NULLABLE;
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  a.format = "g";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0].format: expected an integer index type (c, C, s, S, i, I, l, L) "
              "for a dictionary-encoded field, found 'g'");
  a.format = "L";
  dictionary.format = "+w:q";
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0].dictionary: format '+w:q': expected '+w:LIST_SIZE'");
  dictionary.format = "u";
  a.dictionary = NULL;
  a.flags = 0;

  // Maps: one '+s' child of (non-nullable key, value).
  struct ArrowSchema map, entries, key, value;
  struct ArrowSchema* map_children[1] = {&entries};
  struct ArrowSchema* entry_children[2] = {&key, &value};
  SchemaSet(&key, "u", "key", 0, 0, NULL);
  SchemaSet(&value, "i", "value", ARROW_FLAG_NULLABLE, 0, NULL);
  SchemaSet(&entries, "+s", "entries", 0, 2, entry_children);
  SchemaSet(&map, "+m", NULL, ARROW_FLAG_MAP_KEYS_SORTED, 1, map_children);
  CHECK_OK(AcdSchemaValidate(&map, &error), &error);
  key.flags = ARROW_FLAG_NULLABLE;
  CHECK_FAILS(AcdSchemaValidate(&map, &error), EINVAL, &error,
              "root.children[0].children[0].flags: expected the map's key field to be "
              "non-nullable, found ARROW_FLAG_NULLABLE set");
  key.flags = 0;
  entries.n_children = 1;
  CHECK_FAILS(AcdSchemaValidate(&map, &error), EINVAL, &error,
              "root.children[0].n_children: expected the map's entries struct to have 2 "
              "children (key, value), found 1");
  SchemaSet(&entries, "i", "entries", 0, 0, NULL);
  CHECK_FAILS(AcdSchemaValidate(&map, &error), EINVAL, &error,
              "root.children[0]: expected the map's entries to be a struct ('+s'), found 'i'");

  // Cycles, through children or dictionaries, and deep nesting.
  struct ArrowSchema loop;
  struct ArrowSchema* loop_children[1] = {&loop};
  SchemaSet(&loop, "+l", NULL, 0, 1, loop_children);
  // A struct reached twice (issue 9, item 4) names the first path.
  CHECK_FAILS(AcdSchemaValidate(&loop, &error), EINVAL, &error,
              "root.children[0]: the same struct ArrowSchema as root (");
  CHECK(strstr(error.message, "no cycle") != NULL);
  SchemaSet(&loop, "i", NULL, 0, 0, NULL);
  loop.dictionary = &loop;
  CHECK_FAILS(AcdSchemaValidate(&loop, &error), EINVAL, &error,
              "root.dictionary: the same struct ArrowSchema as root (");

  struct ArrowSchema chain[65];
  struct ArrowSchema* chain_children[65];
  for (int i = 0; i < 65; i++) {
    chain_children[i] = i + 1 < 65 ? &chain[i + 1] : NULL;
    SchemaSet(&chain[i], "+l", NULL, 0, 1, &chain_children[i]);
  }
  SchemaSet(&chain[63], "i", NULL, 0, 0, NULL);
  CHECK_OK(AcdSchemaValidate(&chain[0], &error), &error);  // 64 levels
  SchemaSet(&chain[63], "+l", NULL, 0, 1, &chain_children[63]);
  SchemaSet(&chain[64], "i", NULL, 0, 0, NULL);
  CHECK_FAILS(AcdSchemaValidate(&chain[0], &error), EINVAL, &error,
              "cycle or nesting deeper than 64 levels");
}

// ---- array validation: primitives ----------------------------------------------

struct Int32Fixture {
  uint8_t validity[1];
  int32_t values[5];
  const void* buffers[2];
  struct ArrowSchema schema;
  struct ArrowArray array;
};

// [11, null, 13, 14]: slots 1..4 of a 5-slot buffer.
static void Int32Init(struct Int32Fixture* f) {
  const int32_t values[5] = {10, 11, 0, 13, 14};
  memcpy(f->values, values, sizeof(values));
  f->validity[0] = 0x1B;
  f->buffers[0] = f->validity;
  f->buffers[1] = f->values;
  SchemaSet(&f->schema, "i", NULL, ARROW_FLAG_NULLABLE, 0, NULL);
  ArraySet(&f->array, 4, 1, 1, 2, f->buffers, 0, NULL);
}

static void TestValidateInt32(void) {
  struct AcdError error;
  struct Int32Fixture f;
  Int32Init(&f);
  EXPECT_VALID(&f.schema, &f.array);
  f.array.null_count = -1;
  EXPECT_VALID(&f.schema, &f.array);

  // No bitmap: null_count 0, or -1 as Arrow C++ and Go accept.
  f.buffers[0] = NULL;
  f.array.null_count = 0;
  EXPECT_VALID(&f.schema, &f.array);
  f.array.null_count = -1;
  EXPECT_VALID(&f.schema, &f.array);
  f.array.null_count = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[0]: expected a validity bitmap (null_count is 1), found NULL");

  Int32Init(&f);
  f.array.release = NULL;
  EXPECT_INVALID(&f.schema, &f.array, ACD_VALIDATION_NONE,
                 "root: expected a live array, found a released one (release is NULL)");
  Int32Init(&f);
  f.array.length = -1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.length: expected >= 0, found -1");
  Int32Init(&f);
  f.array.offset = -1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.offset: expected >= 0, found -1");
  Int32Init(&f);
  f.array.offset = INT64_MAX;
  ExpectInvalid(&f.schema, &f.array, MINIMAL, EOVERFLOW,
                "root.offset: expected offset + length to fit in int64", __LINE__);
  Int32Init(&f);
  f.array.null_count = 5;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.null_count: expected -1 (unknown) or 0..4 (the length), found 5");
  f.array.null_count = -2;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "found -2");
  Int32Init(&f);
  f.array.n_buffers = 3;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.n_buffers: expected 2 for int32, found 3");
  Int32Init(&f);
  f.array.buffers = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.buffers: expected 2 pointers, found NULL");
  Int32Init(&f);
  f.buffers[1] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[1]: expected 5 values (20 bytes), found NULL");

  struct ArrowArray extra;
  struct ArrowArray* extra_children[1] = {&extra};
  ArraySet(&extra, 0, 0, 0, 0, NULL, 0, NULL);
  Int32Init(&f);
  f.array.n_children = 1;
  f.array.children = extra_children;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.n_children: expected 0 (as in the schema), found 1");
  Int32Init(&f);
  f.array.dictionary = &extra;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.dictionary: expected NULL (the schema is not dictionary-encoded)");

  Int32Init(&f);
  f.array.null_count = 2;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.null_count: expected 1 (the 0 bits of the validity bitmap), found 2");

  // An empty slice needs no buffer bytes.
  Int32Init(&f);
  f.array.length = 0;
  f.array.offset = 7;
  f.array.null_count = 0;
  f.buffers[0] = NULL;
  f.buffers[1] = NULL;
  EXPECT_VALID(&f.schema, &f.array);

  // The schema is checked too, and the level must be known.
  Int32Init(&f);
  f.schema.format = "xyz";
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "schema: root: format 'xyz': unknown format string");
  Int32Init(&f);
  CHECK_FAILS(AcdArrayValidate(&f.schema, &f.array, (enum AcdValidationLevel)7, &error), EINVAL,
              &error, "validation level: expected 0 to 3, found 7");
  CHECK_FAILS(AcdArrayValidate(&f.schema, NULL, FULL, &error), EINVAL, &error,
              "root: expected an array, found NULL");
  CHECK_FAILS(AcdArrayValidate(NULL, &f.array, FULL, &error), EINVAL, &error,
              "schema: root: expected a schema, found NULL");
}

static void TestValidateFixedWidth(void) {
  uint8_t bytes[64];
  memset(bytes, 0, sizeof(bytes));
  const void* buffers[2] = {NULL, bytes};
  struct ArrowSchema schema;
  struct ArrowArray array;

  const char* formats[] = {"b",   "c",   "S",   "L",    "e",    "g",   "w:3",    "d:10,2",
                           "d:5,1,32", "d:40,2,256", "tdD", "tdm", "ttn", "tsu:UTC", "tDm",
                           "tiM", "tiD", "tin"};
  for (size_t k = 0; k < sizeof(formats) / sizeof(formats[0]); k++) {
    SchemaSet(&schema, formats[k], NULL, 0, 0, NULL);
    ArraySet(&array, 2, 0, 0, 2, buffers, 0, NULL);
    EXPECT_VALID(&schema, &array);
  }

  SchemaSet(&schema, "b", NULL, 0, 0, NULL);
  ArraySet(&array, 10, 0, 0, 2, buffers, 0, NULL);
  buffers[1] = NULL;
  EXPECT_INVALID(&schema, &array, MINIMAL,
                 "root.buffers[1]: expected 10 value bits (2 bytes), found NULL");
  SchemaSet(&schema, "w:0", NULL, 0, 0, NULL);
  EXPECT_VALID(&schema, &array);
  SchemaSet(&schema, "w:3", NULL, 0, 0, NULL);
  EXPECT_INVALID(&schema, &array, MINIMAL,
                 "root.buffers[1]: expected 10 values (30 bytes), found NULL");
}

// ---- array validation: binary and utf8 -----------------------------------------

struct Utf8Fixture {
  uint8_t validity[1];
  int32_t offsets[6];
  char data[16];
  const void* buffers[3];
  struct ArrowSchema schema;
  struct ArrowArray array;
};

// ["a", "héllo", null, "xyz"]: slots 1..4 of a 5-slot array.
static void Utf8Init(struct Utf8Fixture* f) {
  const int32_t offsets[6] = {0, 0, 1, 7, 7, 10};
  memcpy(f->offsets, offsets, sizeof(offsets));
  memcpy(f->data, "ah\xc3\xa9lloxyz", 11);
  f->validity[0] = 0x17;
  f->buffers[0] = f->validity;
  f->buffers[1] = f->offsets;
  f->buffers[2] = f->data;
  SchemaSet(&f->schema, "u", "s", ARROW_FLAG_NULLABLE, 0, NULL);
  ArraySet(&f->array, 4, 1, 1, 3, f->buffers, 0, NULL);
}

static void TestValidateUtf8(void) {
  struct Utf8Fixture f;
  Utf8Init(&f);
  EXPECT_VALID(&f.schema, &f.array);

  f.offsets[1] = -1;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.buffers[1]: expected 0 <= offsets[1] (the first) <= offsets[5] (the last), "
                 "found -1 and 10");
  Utf8Init(&f);
  f.offsets[1] = 11;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT, "found 11 and 10");
  Utf8Init(&f);
  f.buffers[2] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.buffers[2]: expected 10 bytes of data (the last offset), found NULL");
  Utf8Init(&f);
  f.buffers[1] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[1]: expected 6 int32 offsets (24 bytes), found NULL");
  Utf8Init(&f);
  f.array.n_buffers = 2;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.n_buffers: expected 3 for string, found 2");

  // Offsets that decrease, or jump past the last one (and so past the data).
  Utf8Init(&f);
  f.offsets[3] = 0;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[1]: expected offsets[3] in 1..10 (offsets never decrease and end "
                 "at the last one), found 0");
  Utf8Init(&f);
  f.offsets[3] = 12;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "expected offsets[3] in 1..10");

  Utf8Init(&f);
  f.data[3] = 0x28;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[2]: expected UTF-8 in slot 1 (bytes 1..7), found an invalid "
                 "sequence at byte 2");
  f.schema.format = "z";
  EXPECT_VALID(&f.schema, &f.array);

  // Invalid bytes in a null slot are ignored.
  Utf8Init(&f);
  const int32_t with_null_bytes[6] = {0, 0, 1, 7, 9, 12};
  memcpy(f.offsets, with_null_bytes, sizeof(with_null_bytes));
  memcpy(f.data, "ah\xc3\xa9llo\xff\xffxyz", 13);
  EXPECT_VALID(&f.schema, &f.array);

  // Large utf8, and an empty array without buffers.
  int64_t large_offsets[6] = {0, 0, 1, 7, 7, 10};
  Utf8Init(&f);
  f.schema.format = "U";
  f.buffers[1] = large_offsets;
  EXPECT_VALID(&f.schema, &f.array);
  large_offsets[4] = 6;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "root.buffers[1]: expected offsets[4] in 7..10");
  Utf8Init(&f);
  f.array.length = 0;
  f.array.null_count = 0;
  f.buffers[0] = f.buffers[1] = f.buffers[2] = NULL;
  EXPECT_VALID(&f.schema, &f.array);

  // Only empty strings: the data buffer may be NULL.
  const int32_t empty_offsets[3] = {0, 0, 0};
  const void* empty_buffers[3] = {NULL, empty_offsets, NULL};
  ArraySet(&f.array, 2, 0, 0, 3, empty_buffers, 0, NULL);
  EXPECT_VALID(&f.schema, &f.array);
}

// ---- array validation: nested --------------------------------------------------

struct ListFixture {
  uint8_t validity[1];
  int32_t offsets[5];
  int32_t values[4];
  const void* buffers[3];
  const void* child_buffers[2];
  struct ArrowSchema schema;
  struct ArrowSchema child_schema;
  struct ArrowSchema* schema_children[1];
  struct ArrowArray array;
  struct ArrowArray child;
  struct ArrowArray* children[1];
};

// [[1, 2], [], null, [3]]
static void ListInit(struct ListFixture* f, const char* format) {
  const int32_t offsets[5] = {0, 2, 2, 2, 3};
  const int32_t values[4] = {1, 2, 3, 4};
  memcpy(f->offsets, offsets, sizeof(offsets));
  memcpy(f->values, values, sizeof(values));
  f->validity[0] = 0x0B;
  f->buffers[0] = f->validity;
  f->buffers[1] = f->offsets;
  f->buffers[2] = NULL;
  f->child_buffers[0] = NULL;
  f->child_buffers[1] = f->values;
  SchemaSet(&f->child_schema, "i", "item", ARROW_FLAG_NULLABLE, 0, NULL);
  f->schema_children[0] = &f->child_schema;
  SchemaSet(&f->schema, format, NULL, ARROW_FLAG_NULLABLE, 1, f->schema_children);
  ArraySet(&f->child, 3, 0, 0, 2, f->child_buffers, 0, NULL);
  f->children[0] = &f->child;
  ArraySet(&f->array, 4, 1, 0, 2, f->buffers, 1, f->children);
}

static void TestValidateLists(void) {
  struct ListFixture f;
  ListInit(&f, "+l");
  EXPECT_VALID(&f.schema, &f.array);

  f.child.length = 2;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.children[0].length: expected >= 3 (the last offset), found 2");
  ListInit(&f, "+l");
  f.offsets[2] = 1;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "root.buffers[1]: expected offsets[2] in 2..3");
  ListInit(&f, "+l");
  f.array.n_children = 0;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.n_children: expected 1 (as in the schema), found 0");
  ListInit(&f, "+l");
  f.children[0] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.children[0]: expected an array, found NULL");
  ListInit(&f, "+l");
  f.array.children = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL, "root.children: expected 1 pointers, found NULL");
  ListInit(&f, "+l");
  f.child.release = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0]: expected a live array, found a released one");
  ListInit(&f, "+l");
  f.child_buffers[1] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0].buffers[1]: expected 3 values (12 bytes), found NULL");

  // Large list.
  int64_t large_offsets[5] = {0, 2, 2, 2, 3};
  ListInit(&f, "+L");
  f.buffers[1] = large_offsets;
  EXPECT_VALID(&f.schema, &f.array);

  // Fixed-size list of 2: the child covers (offset + length) * 2.
  ListInit(&f, "+w:2");
  f.array.length = 2;
  f.array.n_buffers = 1;
  f.array.null_count = 0;
  f.buffers[0] = NULL;
  f.child.length = 4;
  EXPECT_VALID(&f.schema, &f.array);
  f.child.length = 3;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0].length: expected >= 4 (the parent's (offset + length) * list "
                 "size), found 3");

  // List view [[1, 2], [3]] with offsets {0, 2} and sizes {2, 1}.
  int32_t view_offsets[2] = {0, 2};
  int32_t view_sizes[2] = {2, 1};
  ListInit(&f, "+vl");
  f.array.length = 2;
  f.array.n_buffers = 3;
  f.array.null_count = 0;
  f.buffers[0] = NULL;
  f.buffers[1] = view_offsets;
  f.buffers[2] = view_sizes;
  EXPECT_VALID(&f.schema, &f.array);
  view_sizes[1] = 2;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root: expected offsets[1] >= 0, sizes[1] >= 0 and their sum <= 3 (the child's "
                 "length), found 2 and 2");
  view_sizes[1] = 1;
  view_offsets[0] = -1;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "found -1 and 2");
  view_offsets[0] = 0;
  f.buffers[2] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[2]: expected 2 int32 sizes (8 bytes), found NULL");
}

struct StructFixture {
  int32_t a_values[3];
  int32_t b_offsets[4];
  const void* a_buffers[2];
  const void* b_buffers[3];
  const void* buffers[1];
  struct ArrowSchema schema, a_schema, b_schema;
  struct ArrowSchema* schema_children[2];
  struct ArrowArray array, a, b;
  struct ArrowArray* children[2];
};

// struct<a: int32, b: utf8>, slots 1..2 of 3-slot children.
static void StructInit(struct StructFixture* f, const char* format) {
  const int32_t a_values[3] = {1, 2, 3};
  const int32_t b_offsets[4] = {0, 1, 2, 3};
  memcpy(f->a_values, a_values, sizeof(a_values));
  memcpy(f->b_offsets, b_offsets, sizeof(b_offsets));
  f->a_buffers[0] = NULL;
  f->a_buffers[1] = f->a_values;
  f->b_buffers[0] = NULL;
  f->b_buffers[1] = f->b_offsets;
  f->b_buffers[2] = "xyz";
  f->buffers[0] = NULL;
  SchemaSet(&f->a_schema, "i", "a", 0, 0, NULL);
  SchemaSet(&f->b_schema, "u", "b", 0, 0, NULL);
  f->schema_children[0] = &f->a_schema;
  f->schema_children[1] = &f->b_schema;
  SchemaSet(&f->schema, format, NULL, 0, 2, f->schema_children);
  ArraySet(&f->a, 3, 0, 0, 2, f->a_buffers, 0, NULL);
  ArraySet(&f->b, 3, 0, 0, 3, f->b_buffers, 0, NULL);
  f->children[0] = &f->a;
  f->children[1] = &f->b;
  ArraySet(&f->array, 2, 0, 1, 1, f->buffers, 2, f->children);
}

static void TestValidateStruct(void) {
  struct StructFixture f;
  StructInit(&f, "+s");
  EXPECT_VALID(&f.schema, &f.array);
  f.b.length = 2;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[1].length: expected >= 3 (the parent's offset + length), found 2");
  StructInit(&f, "+s");
  f.b_offsets[0] = -1;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.children[1].buffers[1]: expected 0 <= offsets[0] (the first)");
  StructInit(&f, "+s");
  f.b_buffers[2] = "x\xffz";
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.children[1].buffers[2]: expected UTF-8 in slot 1");

  // Sparse union of the same children: type ids, no validity bitmap.
  int8_t type_ids[3] = {0, 1, 0};
  StructInit(&f, "+us:0,1");
  f.buffers[0] = type_ids;
  EXPECT_VALID(&f.schema, &f.array);
  f.a.length = 2;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0].length: expected >= 3 (the parent's offset + length), found 2");
  f.a.length = 3;
  type_ids[2] = -1;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[0]: expected type_ids[2] to be one of the ids in '+us:0,1', found "
                 "-1");
  type_ids[2] = 0;
  type_ids[0] = 5;  // outside the slice: not checked
  EXPECT_VALID(&f.schema, &f.array);
  f.array.null_count = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.null_count: expected 0 (sparse_union arrays have no validity bitmap), "
                 "found 1");
}

static void TestValidateDenseUnion(void) {
  struct StructFixture f;
  int8_t type_ids[3] = {5, 7, 5};
  int32_t offsets[3] = {0, 0, 1};
  const void* buffers[3] = {type_ids, offsets, NULL};
  StructInit(&f, "+ud:5,7");
  f.a.length = 2;
  f.b.length = 1;
  f.array.offset = 0;
  f.array.length = 3;
  f.array.n_buffers = 2;
  f.array.buffers = buffers;
  EXPECT_VALID(&f.schema, &f.array);

  f.array.n_buffers = 3;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.n_buffers: expected 2 for dense_union, found 3");
  f.array.n_buffers = 2;
  f.array.null_count = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.null_count: expected 0 (dense_union arrays have no validity bitmap), found "
                 "1");
  f.array.null_count = 0;
  type_ids[1] = 6;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[0]: expected type_ids[1] to be one of the ids in '+ud:5,7', found "
                 "6");
  type_ids[1] = 7;
  offsets[2] = 2;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[1]: expected 0 <= offsets[2] < 2 (the length of children[0]), found "
                 "2");
  offsets[2] = -1;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "found -1");
  offsets[2] = 1;
  buffers[0] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[0]: expected 3 int8 type ids, found NULL");
  buffers[0] = type_ids;
  buffers[1] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[1]: expected 3 int32 offsets (12 bytes), found NULL");
}

// ---- array validation: views -------------------------------------------------------

static void ViewSet(uint8_t* view, int32_t length, const char* bytes, int32_t index,
                    int32_t offset) {
  memset(view, 0, 16);
  memcpy(view, &length, 4);
  if (length >= 0 && length <= 12) {
    memcpy(view + 4, bytes, (size_t)length);
  } else {
    memcpy(view + 4, bytes, 4);
    memcpy(view + 8, &index, 4);
    memcpy(view + 12, &offset, 4);
  }
}

struct ViewFixture {
  uint8_t validity[1];
  uint8_t views[48];
  char data[32];
  int64_t sizes[1];
  const void* buffers[4];
  struct ArrowSchema schema;
  struct ArrowArray array;
};

// ["short", "a string longer than twelve", null]
static void ViewInit(struct ViewFixture* f, const char* format) {
  memcpy(f->data, "a string longer than twelve", 28);
  ViewSet(f->views, 5, "short", 0, 0);
  ViewSet(f->views + 16, 27, "a st", 0, 0);
  ViewSet(f->views + 32, 100, "junk", 9, -4);  // a null slot may hold anything
  f->sizes[0] = 27;
  f->validity[0] = 0x03;
  f->buffers[0] = f->validity;
  f->buffers[1] = f->views;
  f->buffers[2] = f->data;
  f->buffers[3] = f->sizes;
  SchemaSet(&f->schema, format, NULL, ARROW_FLAG_NULLABLE, 0, NULL);
  ArraySet(&f->array, 3, 1, 0, 4, f->buffers, 0, NULL);
}

static void TestValidateViews(void) {
  struct ViewFixture f;
  ViewInit(&f, "vu");
  EXPECT_VALID(&f.schema, &f.array);

  f.array.n_buffers = 2;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.n_buffers: expected at least 3 for string_view (validity, views, variadic "
                 "sizes), found 2");
  ViewInit(&f, "vu");
  f.sizes[0] = -1;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.buffers[3]: expected variadic buffer sizes >= 0, found -1 at index 0");
  ViewInit(&f, "vu");
  f.buffers[2] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.buffers[2]: expected 27 bytes of data, found NULL");
  ViewInit(&f, "vu");
  f.buffers[3] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[3]: expected 1 variadic buffer sizes (8 bytes), found NULL");
  ViewInit(&f, "vu");
  f.buffers[1] = NULL;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers[1]: expected 3 views (48 bytes), found NULL");

  ViewInit(&f, "vu");
  ViewSet(f.views + 16, 27, "a sX", 0, 0);
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[1]: view 1: expected the prefix to equal the first 4 bytes of its "
                 "data");
  ViewSet(f.views + 16, 27, "a st", 1, 0);
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "view 1: expected a data buffer index in 0..0 (there are 1 data buffers), found "
                 "1");
  ViewSet(f.views + 16, 27, "a st", -1, 0);
  EXPECT_INVALID(&f.schema, &f.array, FULL, "found -1");
  ViewSet(f.views + 16, 27, "a st", 0, 1);
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "view 1: expected bytes [offset, offset + 27) within data buffer 0 of 27 bytes, "
                 "found offset 1");
  ViewSet(f.views + 16, 27, "a st", 0, -1);
  EXPECT_INVALID(&f.schema, &f.array, FULL, "found offset -1");
  ViewSet(f.views + 16, 27, "a st", 0, 0);
  ViewSet(f.views, -1, "abcd", 0, 0);
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.buffers[1]: view 0: expected a length >= 0, found -1");

  ViewInit(&f, "vu");
  ViewSet(f.views, 5, "sh\xffrt", 0, 0);
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "view 0: expected UTF-8, found an invalid sequence at byte 2");
  f.schema.format = "vz";
  EXPECT_VALID(&f.schema, &f.array);
  ViewInit(&f, "vu");
  f.data[10] = (char)0xff;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "view 1: expected UTF-8, found an invalid sequence at byte 10");

  // Inline views only: no data buffers, and an empty sizes buffer may be NULL.
  ViewInit(&f, "vu");
  f.array.length = 1;
  f.array.null_count = 0;
  f.array.n_buffers = 3;
  f.buffers[0] = NULL;
  f.buffers[2] = NULL;
  EXPECT_VALID(&f.schema, &f.array);
}

// ---- array validation: run-end encoded, dictionary, map, null --------------------

struct ReeFixture {
  uint8_t run_end_validity[1];
  int32_t run_ends[3];
  int32_t values[3];
  const void* run_end_buffers[2];
  const void* value_buffers[2];
  const void* buffers[1];
  struct ArrowSchema schema, run_ends_schema, values_schema;
  struct ArrowSchema* schema_children[2];
  struct ArrowArray array, run_ends_array, values_array;
  struct ArrowArray* children[2];
};

// [7, 8, 8, 8]: runs ending at 2 and 5, slots 1..4.
static void ReeInit(struct ReeFixture* f) {
  const int32_t run_ends[3] = {2, 5, 6};
  const int32_t values[3] = {7, 8, 9};
  memcpy(f->run_ends, run_ends, sizeof(run_ends));
  memcpy(f->values, values, sizeof(values));
  f->run_end_validity[0] = 0x01;
  f->run_end_buffers[0] = NULL;
  f->run_end_buffers[1] = f->run_ends;
  f->value_buffers[0] = NULL;
  f->value_buffers[1] = f->values;
  f->buffers[0] = NULL;
  SchemaSet(&f->run_ends_schema, "i", "run_ends", 0, 0, NULL);
  SchemaSet(&f->values_schema, "i", "values", ARROW_FLAG_NULLABLE, 0, NULL);
  f->schema_children[0] = &f->run_ends_schema;
  f->schema_children[1] = &f->values_schema;
  SchemaSet(&f->schema, "+r", NULL, 0, 2, f->schema_children);
  ArraySet(&f->run_ends_array, 2, 0, 0, 2, f->run_end_buffers, 0, NULL);
  ArraySet(&f->values_array, 2, 0, 0, 2, f->value_buffers, 0, NULL);
  f->children[0] = &f->run_ends_array;
  f->children[1] = &f->values_array;
  ArraySet(&f->array, 4, 0, 1, 0, NULL, 2, f->children);
}

static void TestValidateRunEndEncoded(void) {
  struct ReeFixture f;
  ReeInit(&f);
  EXPECT_VALID(&f.schema, &f.array);
  f.values_array.length = 3;  // more values than runs is allowed
  EXPECT_VALID(&f.schema, &f.array);

  ReeInit(&f);
  f.array.null_count = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.null_count: expected 0 (run_end_encoded arrays have no validity bitmap), "
                 "found 1");
  ReeInit(&f);
  f.array.n_buffers = 1;
  f.array.buffers = f.buffers;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.n_buffers: expected 0 for run_end_encoded, found 1");
  ReeInit(&f);
  f.values_array.length = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[1].length: expected >= 2 (the number of run ends), found 1");
  ReeInit(&f);
  f.run_ends_array.length = 0;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0].length: expected >= 1 run end for a non-empty run-end encoded "
                 "array, found 0");
  ReeInit(&f);
  f.run_end_buffers[0] = f.run_end_validity;
  f.run_ends_array.null_count = 1;
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.children[0].null_count: expected 0 (run ends cannot be null), found 1");

  ReeInit(&f);
  f.run_ends[1] = 4;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.children[0]: expected the last run end >= 5 (the parent's offset + length), "
                 "found 4");
  ReeInit(&f);
  f.run_ends[0] = 0;
  EXPECT_INVALID(&f.schema, &f.array, FULL,
                 "root.children[0].buffers[1]: expected run ends > 0 and strictly increasing, "
                 "found 0 at index 0 after 0");
  ReeInit(&f);
  f.run_ends[0] = 5;
  EXPECT_INVALID(&f.schema, &f.array, FULL, "found 5 at index 1 after 5");

  // A sliced run_ends child: only its own slots are read.
  ReeInit(&f);
  f.run_ends_array.offset = 1;
  f.run_ends_array.length = 2;
  f.run_ends[0] = -9;
  EXPECT_VALID(&f.schema, &f.array);

  // int16 and int64 run ends.
  int16_t short_run_ends[2] = {2, 5};
  int64_t long_run_ends[2] = {2, 5};
  ReeInit(&f);
  f.run_ends_schema.format = "s";
  f.run_end_buffers[1] = short_run_ends;
  EXPECT_VALID(&f.schema, &f.array);
  f.run_ends_schema.format = "l";
  f.run_end_buffers[1] = long_run_ends;
  EXPECT_VALID(&f.schema, &f.array);
  long_run_ends[1] = 4;
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT, "found 4");
}

static void TestValidateDictionary(void) {
  // int8 indices [0, 2, null, 1] into utf8 ["a", "b", "c"].
  uint8_t validity[1] = {0x0B};
  int8_t indices[4] = {0, 2, 100, 1};
  int32_t offsets[4] = {0, 1, 2, 3};
  const void* buffers[2] = {validity, indices};
  const void* dictionary_buffers[3] = {NULL, offsets, "abc"};
  struct ArrowSchema schema, dictionary_schema;
  struct ArrowArray array, dictionary;
  SchemaSet(&dictionary_schema, "u", NULL, 0, 0, NULL);
  SchemaSet(&schema, "c", "d", ARROW_FLAG_NULLABLE, 0, NULL);
  schema.dictionary = &dictionary_schema;
  ArraySet(&dictionary, 3, 0, 0, 3, dictionary_buffers, 0, NULL);
  ArraySet(&array, 4, 1, 0, 2, buffers, 0, NULL);
  array.dictionary = &dictionary;
  EXPECT_VALID(&schema, &array);

  indices[1] = 3;
  EXPECT_INVALID(&schema, &array, FULL,
                 "root.buffers[1]: expected 0 <= indices[1] < 3 (the dictionary's length), found "
                 "3");
  indices[1] = -1;
  EXPECT_INVALID(&schema, &array, FULL, "found -1");
  schema.format = "C";
  EXPECT_INVALID(&schema, &array, FULL, "found 255");
  schema.format = "c";
  indices[1] = 2;

  uint64_t wide[4] = {0, UINT64_MAX, 0, 1};
  schema.format = "L";
  buffers[1] = wide;
  EXPECT_INVALID(&schema, &array, FULL, "found 18446744073709551615");
  wide[1] = 2;
  EXPECT_VALID(&schema, &array);
  schema.format = "c";
  buffers[1] = indices;

  array.dictionary = NULL;
  EXPECT_INVALID(&schema, &array, MINIMAL, "root.dictionary: expected an array, found NULL");
  array.dictionary = &dictionary;
  offsets[0] = -1;
  EXPECT_INVALID(&schema, &array, DEFAULT,
                 "root.dictionary.buffers[1]: expected 0 <= offsets[0] (the first)");
}

static void TestValidateMap(void) {
  // map<utf8, int32> [{a: 1, b: 2}, {c: 3}]
  int32_t offsets[3] = {0, 2, 3};
  int32_t key_offsets[4] = {0, 1, 2, 3};
  int32_t values[3] = {1, 2, 3};
  uint8_t key_validity[1] = {0x06};
  const void* buffers[2] = {NULL, offsets};
  const void* entry_buffers[1] = {NULL};
  const void* key_buffers[3] = {NULL, key_offsets, "abc"};
  const void* value_buffers[2] = {NULL, values};

  struct ArrowSchema map, entries, key, value;
  struct ArrowSchema* map_children[1] = {&entries};
  struct ArrowSchema* entry_children[2] = {&key, &value};
  SchemaSet(&key, "u", "key", 0, 0, NULL);
  SchemaSet(&value, "i", "value", ARROW_FLAG_NULLABLE, 0, NULL);
  SchemaSet(&entries, "+s", "entries", 0, 2, entry_children);
  SchemaSet(&map, "+m", NULL, ARROW_FLAG_NULLABLE, 1, map_children);

  struct ArrowArray array, entry_array, key_array, value_array;
  struct ArrowArray* array_children[1] = {&entry_array};
  struct ArrowArray* entry_array_children[2] = {&key_array, &value_array};
  ArraySet(&key_array, 3, 0, 0, 3, key_buffers, 0, NULL);
  ArraySet(&value_array, 3, 0, 0, 2, value_buffers, 0, NULL);
  ArraySet(&entry_array, 3, 0, 0, 1, entry_buffers, 2, entry_array_children);
  ArraySet(&array, 2, 0, 0, 2, buffers, 1, array_children);
  EXPECT_VALID(&map, &array);

  entry_array.length = 2;
  EXPECT_INVALID(&map, &array, DEFAULT,
                 "root.children[0].length: expected >= 3 (the last offset), found 2");
  entry_array.length = 3;
  key_buffers[0] = key_validity;
  key_array.null_count = 1;
  EXPECT_INVALID(&map, &array, MINIMAL,
                 "root.children[0].children[0].null_count: expected 0 (map keys cannot be null), "
                 "found 1");
  key_buffers[0] = NULL;
  key_array.null_count = 0;
  offsets[1] = 3;
  offsets[2] = 2;
  EXPECT_INVALID(&map, &array, FULL, "root.buffers[1]: expected offsets[1] in 0..2");
}

static void TestValidateNull(void) {
  struct ArrowSchema schema;
  struct ArrowArray array;
  const void* one_null[1] = {NULL};
  const void* one_buffer[1] = {"x"};
  SchemaSet(&schema, "n", NULL, ARROW_FLAG_NULLABLE, 0, NULL);
  ArraySet(&array, 3, 3, 0, 0, NULL, 0, NULL);
  EXPECT_VALID(&schema, &array);
  array.null_count = -1;
  EXPECT_VALID(&schema, &array);
  array.null_count = 0;
  EXPECT_INVALID(&schema, &array, MINIMAL,
                 "root.null_count: expected 3 (a null array is all nulls) or -1, found 0");
  array.null_count = 3;
  array.n_buffers = 1;
  array.buffers = one_null;  // as Arrow C++ before 9.0 exported it
  EXPECT_VALID(&schema, &array);
  array.buffers = one_buffer;
  EXPECT_INVALID(&schema, &array, MINIMAL, "root.buffers[0]: expected no buffers for a null array");
  array.n_buffers = 2;
  EXPECT_INVALID(&schema, &array, MINIMAL, "root.n_buffers: expected 0 for null, found 2");
}

// A list nested 64 levels deep, all empty: the depth limit is the schema's.
static void TestValidateDeep(void) {
  struct ArrowSchema schemas[64];
  struct ArrowSchema* schema_children[64];
  struct ArrowArray arrays[64];
  struct ArrowArray* array_children[64];
  for (int i = 0; i < 64; i++) {
    schema_children[i] = i + 1 < 64 ? &schemas[i + 1] : NULL;
    array_children[i] = i + 1 < 64 ? &arrays[i + 1] : NULL;
    int leaf = i == 63;
    SchemaSet(&schemas[i], leaf ? "i" : "+l", NULL, 0, leaf ? 0 : 1, &schema_children[i]);
    ArraySet(&arrays[i], 0, 0, 0, 2, NULL, leaf ? 0 : 1, &array_children[i]);
  }
  const void* buffers[2] = {NULL, NULL};
  for (int i = 0; i < 64; i++) arrays[i].buffers = buffers;
  EXPECT_VALID(&schemas[0], &arrays[0]);
  arrays[63].n_buffers = 3;
  EXPECT_INVALID(&schemas[0], &arrays[0], MINIMAL,
                 "children[0].n_buffers: expected 2 for int32, found 3");
}

// A DAG: each level's two children are the same struct, so a walk would meet
// 2^40 paths through 40 structs. The second visit of a struct stops it at once
// (issue 9, item 4), naming both paths.
static void TestValidateSharedChildren(void) {
  struct ArrowSchema schemas[41];
  struct ArrowSchema* children[40][2];
  struct AcdError error;
  for (int i = 40; i >= 0; i--) {
    int leaf = i == 40;
    if (!leaf) children[i][0] = children[i][1] = &schemas[i + 1];
    SchemaSet(&schemas[i], leaf ? "i" : "+s", NULL, 0, leaf ? 0 : 2, leaf ? NULL : children[i]);
  }
  CHECK_FAILS(AcdSchemaValidate(&schemas[0], &error), EINVAL, &error,
              ".children[0].children[1]: the same struct ArrowSchema as root.children[0]");
  // Without the shared child, the chain validates.
  for (int i = 0; i < 40; i++) schemas[i].n_children = 1;
  for (int i = 0; i < 40; i++) SchemaSet(&schemas[i], "+s", NULL, 0, 1, children[i]);
  CHECK_OK(AcdSchemaValidate(&schemas[20], &error), &error);
}

// ---- wasm only: pointers past the end of linear memory ---------------------------

#if defined(__wasm__)
static void TestValidateOutOfMemory(void) {
  struct AcdError error;
  uintptr_t end = (uintptr_t)__builtin_wasm_memory_size(0) * 65536;

  CHECK_FAILS(AcdSchemaValidate((const struct ArrowSchema*)(end - 8), &error), EINVAL, &error,
              "root: expected a struct ArrowSchema in readable memory");
  CHECK(AcdMetadataSize((const char*)(end - 2), -1, &error) == -1);
  CHECK(strcmp(error.message, "metadata: pair count runs past the end of readable memory "
                              "(needs 4 bytes at offset 0)") == 0);

  struct ArrowSchema schema, child_schema;
  struct ArrowSchema* schema_children[1] = {&child_schema};
  SchemaSet(&child_schema, "i", NULL, 0, 0, NULL);
  SchemaSet(&schema, "+l", NULL, 0, 1, (struct ArrowSchema**)end);
  CHECK_FAILS(AcdSchemaValidate(&schema, &error), EINVAL, &error,
              "root.children: expected 1 child pointers, found a pointer whose range is not in "
              "readable memory");
  schema.children = schema_children;

  struct Int32Fixture f;
  Int32Init(&f);
  f.buffers[1] = (const void*)(end - 16);
  EXPECT_INVALID(&f.schema, &f.array, DEFAULT,
                 "root.buffers[1]: expected 5 values (20 bytes), found");
  CHECK_FAILS(AcdArrayValidate(&f.schema, &f.array, DEFAULT, &error), EINVAL, &error,
              "whose range is not in readable memory");
  Int32Init(&f);
  f.array.buffers = (const void**)(end - 4);
  EXPECT_INVALID(&f.schema, &f.array, MINIMAL,
                 "root.buffers: expected 2 pointers, found");

  struct Utf8Fixture u;
  Utf8Init(&u);
  u.offsets[5] = 0x7FFFFFF0;
  EXPECT_INVALID(&u.schema, &u.array, DEFAULT,
                 "root.buffers[2]: expected 2147483632 bytes of data (the last offset), found");

  struct ViewFixture v;
  ViewInit(&v, "vu");
  v.sizes[0] = INT64_C(1) << 40;
  EXPECT_INVALID(&v.schema, &v.array, DEFAULT,
                 "root.buffers[2]: expected 1099511627776 bytes of data, found");

  struct ListFixture l;
  ListInit(&l, "+l");
  l.children[0] = (struct ArrowArray*)(end - 8);
  EXPECT_INVALID(&l.schema, &l.array, MINIMAL,
                 "root.children[0]: expected a struct ArrowArray in readable memory");
}
#else
static void TestValidateOutOfMemory(void) {}
#endif

static void TestValidateArrays(void) {
  TestValidateInt32();
  TestValidateFixedWidth();
  TestValidateUtf8();
  TestValidateLists();
  TestValidateStruct();
  TestValidateDenseUnion();
  TestValidateViews();
  TestValidateRunEndEncoded();
  TestValidateDictionary();
  TestValidateMap();
  TestValidateNull();
  TestValidateDeep();
  TestValidateSharedChildren();
  TestValidateOutOfMemory();
}

int main(void) {
  TestErrors();
  TestFormatValid();
  TestFormatInvalid();
  TestUtf8();
  TestMetadata();
  TestValidateSchema();
  TestValidateArrays();

  return CheckSummary("c-core");
}
