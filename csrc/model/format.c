// Format strings of the C Data Interface: parsing into struct AcdFormat (the
// per-type facts, names and counts, are in type.c).

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/model.h"

// Longest format string quoted whole in a message (the longest valid one, a
// union of 128 three-digit ids, is about 520 characters).
#define ACD_FORMAT_QUOTE_MAX 600

// Fills error with "format '<format>': <message>" and returns EINVAL.
static int AcdFormatError(struct AcdError* error, const char* format, const char* fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int AcdFormatError(struct AcdError* error, const char* format, const char* fmt, ...) {
  if (error == NULL) return EINVAL;

  va_list args;
  va_start(args, fmt);
  int n = vsnprintf(error->message, sizeof(error->message), fmt, args);
  va_end(args);
  if (n < 0) error->message[0] = '\0';
  error->path[0] = '\0';

  const char* ellipsis = strlen(format) > ACD_FORMAT_QUOTE_MAX ? "..." : "";
  AcdErrorPrefix(error, "format '%.*s%s'", ACD_FORMAT_QUOTE_MAX, format, ellipsis);
  return EINVAL;
}

// Reads a decimal integer (with an optional '-' when allow_negative) whose
// magnitude fits in int32 and advances *p past it. Returns 0 when there is
// no digit or the value is too large.
static int AcdParseInt32(const char** p, int allow_negative, int32_t* out) {
  const char* s = *p;
  int negative = 0;
  if (allow_negative && *s == '-') {
    negative = 1;
    s++;
  }
  if (*s < '0' || *s > '9') return 0;

  int64_t value = 0;
  while (*s >= '0' && *s <= '9') {
    value = value * 10 + (*s - '0');
    if (value > INT32_MAX) return 0;
    s++;
  }
  *out = (int32_t)(negative ? -value : value);
  *p = s;
  return 1;
}

static void AcdSetFixed(struct AcdFormat* out, enum AcdType type, int32_t byte_width) {
  out->type = type;
  out->byte_width = byte_width;
}

// "d:P,S" or "d:P,S,N".
static int AcdParseDecimal(const char* format, struct AcdFormat* out, const char** rest,
                           struct AcdError* error) {
  const char* p = format + 2;
  int32_t precision;
  int32_t scale;
  int32_t bit_width = 128;
  int ok = format[1] == ':' && AcdParseInt32(&p, 0, &precision) && *p == ',';
  if (ok) {
    p++;
    ok = AcdParseInt32(&p, 1, &scale);
  }
  if (ok && *p == ',') {
    p++;
    ok = AcdParseInt32(&p, 0, &bit_width);
  }
  if (!ok) return AcdFormatError(error, format, "expected 'd:PRECISION,SCALE[,BITWIDTH]'");

  int32_t max_precision;
  switch (bit_width) {
    case 32:
      out->type = ACD_TYPE_DECIMAL32;
      max_precision = 9;
      break;
    case 64:
      out->type = ACD_TYPE_DECIMAL64;
      max_precision = 18;
      break;
    case 128:
      out->type = ACD_TYPE_DECIMAL128;
      max_precision = 38;
      break;
    case 256:
      out->type = ACD_TYPE_DECIMAL256;
      max_precision = 76;
      break;
    default:
      return AcdFormatError(error, format,
                            "expected a decimal bit width of 32, 64, 128 or 256, found %d",
                            (int)bit_width);
  }
  if (precision < 1 || precision > max_precision) {
    return AcdFormatError(error, format, "expected a precision in 1..%d for %s, found %d",
                          (int)max_precision, AcdTypeName(out->type), (int)precision);
  }

  out->byte_width = bit_width / 8;
  out->precision = precision;
  out->scale = scale;
  *rest = p;
  return ACD_OK;
}

// "w:N" (fixed-size binary) and "+w:N" (fixed-size list): N >= 0.
static int AcdParseFixedSize(const char* format, const char* p, struct AcdFormat* out,
                             const char** rest, struct AcdError* error) {
  int is_list = format[0] == '+';
  int32_t size;
  if (!AcdParseInt32(&p, 0, &size)) {
    return AcdFormatError(error, format,
                          is_list ? "expected '+w:LIST_SIZE' with a non-negative 32-bit size"
                                  : "expected 'w:BYTE_WIDTH' with a non-negative 32-bit width");
  }
  out->type = is_list ? ACD_TYPE_FIXED_SIZE_LIST : ACD_TYPE_FIXED_SIZE_BINARY;
  out->fixed_size = size;
  out->byte_width = is_list ? 0 : size;
  *rest = p;
  return ACD_OK;
}

static enum AcdTimeUnit AcdParseUnit(char c) {
  switch (c) {
    case 's':
      return ACD_TIME_UNIT_SECOND;
    case 'm':
      return ACD_TIME_UNIT_MILLI;
    case 'u':
      return ACD_TIME_UNIT_MICRO;
    case 'n':
      return ACD_TIME_UNIT_NANO;
    default:
      return ACD_TIME_UNIT_NONE;
  }
}

// Every format starting with 't'.
static int AcdParseTemporal(const char* format, struct AcdFormat* out, const char** rest,
                            struct AcdError* error) {
  char kind = format[1];
  char code = kind == '\0' ? '\0' : format[2];
  enum AcdTimeUnit unit = AcdParseUnit(code);

  switch (kind) {
    case 'd':
      if (code == 'D') {
        AcdSetFixed(out, ACD_TYPE_DATE32, 4);
      } else if (code == 'm') {
        AcdSetFixed(out, ACD_TYPE_DATE64, 8);
      } else {
        return AcdFormatError(error, format, "expected 'tdD' (date32) or 'tdm' (date64)");
      }
      break;
    case 't':
      if (unit == ACD_TIME_UNIT_NONE) {
        return AcdFormatError(error, format,
                              "expected 'tts', 'ttm' (time32) or 'ttu', 'ttn' (time64)");
      }
      if (unit <= ACD_TIME_UNIT_MILLI) {
        AcdSetFixed(out, ACD_TYPE_TIME32, 4);
      } else {
        AcdSetFixed(out, ACD_TYPE_TIME64, 8);
      }
      out->unit = unit;
      break;
    case 's':
      if (unit == ACD_TIME_UNIT_NONE || format[3] != ':') {
        return AcdFormatError(error, format,
                              "expected 'ts' + unit (s, m, u, n) + ':' + timezone "
                              "(the colon is required even when the timezone is empty)");
      }
      AcdSetFixed(out, ACD_TYPE_TIMESTAMP, 8);
      out->unit = unit;
      // The timezone is the rest of the string, as is.
      out->timezone = format + 4;
      *rest = format + strlen(format);
      return ACD_OK;
    case 'D':
      if (unit == ACD_TIME_UNIT_NONE) {
        return AcdFormatError(error, format, "expected 'tDs', 'tDm', 'tDu' or 'tDn' (duration)");
      }
      AcdSetFixed(out, ACD_TYPE_DURATION, 8);
      out->unit = unit;
      break;
    case 'i':
      if (code == 'M') {
        AcdSetFixed(out, ACD_TYPE_INTERVAL_MONTHS, 4);
      } else if (code == 'D') {
        AcdSetFixed(out, ACD_TYPE_INTERVAL_DAY_TIME, 8);
      } else if (code == 'n') {
        AcdSetFixed(out, ACD_TYPE_INTERVAL_MONTH_DAY_NANO, 16);
      } else {
        return AcdFormatError(error, format, "expected 'tiM', 'tiD' or 'tin' (interval)");
      }
      break;
    default:
      return AcdFormatError(error, format,
                            "expected 'td', 'tt', 'ts', 'tD' or 'ti' followed by a unit");
  }
  // Every accepted form so far is exactly three characters long.
  *rest = format + 3;
  return ACD_OK;
}

// "+ud:I,J,..." and "+us:I,J,...": distinct ids in 0..127, possibly none.
static int AcdParseUnion(const char* format, struct AcdFormat* out, const char** rest,
                         struct AcdError* error) {
  out->type = format[2] == 'd' ? ACD_TYPE_DENSE_UNION : ACD_TYPE_SPARSE_UNION;
  const char* p = format + 4;
  if (*p == '\0') {
    *rest = p;
    return ACD_OK;
  }

  uint8_t seen[ACD_MAX_UNION_TYPE_IDS] = {0};
  for (;;) {
    int32_t id;
    if (!AcdParseInt32(&p, 0, &id)) {
      return AcdFormatError(error, format,
                            "expected '+u%c:TYPE_ID,TYPE_ID,...' with comma-separated ids "
                            "in 0..127",
                            format[2]);
    }
    if (id >= ACD_MAX_UNION_TYPE_IDS) {
      return AcdFormatError(error, format, "expected type ids in 0..127, found %d", (int)id);
    }
    if (seen[id]) {
      return AcdFormatError(error, format, "expected distinct type ids, found %d twice", (int)id);
    }
    seen[id] = 1;
    out->type_ids[out->n_type_ids++] = (int8_t)id;
    if (*p != ',') break;
    p++;
  }
  *rest = p;
  return ACD_OK;
}

// Every format starting with '+'.
static int AcdParseNested(const char* format, struct AcdFormat* out, const char** rest,
                          struct AcdError* error) {
  *rest = format + 2;
  switch (format[1]) {
    case 'l':
      out->type = ACD_TYPE_LIST;
      return ACD_OK;
    case 'L':
      out->type = ACD_TYPE_LARGE_LIST;
      return ACD_OK;
    case 's':
      out->type = ACD_TYPE_STRUCT;
      return ACD_OK;
    case 'm':
      out->type = ACD_TYPE_MAP;
      return ACD_OK;
    case 'r':
      out->type = ACD_TYPE_RUN_END_ENCODED;
      return ACD_OK;
    case 'v':
      *rest = format + 3;
      if (format[2] == 'l') {
        out->type = ACD_TYPE_LIST_VIEW;
        return ACD_OK;
      }
      if (format[2] == 'L') {
        out->type = ACD_TYPE_LARGE_LIST_VIEW;
        return ACD_OK;
      }
      return AcdFormatError(error, format, "expected '+vl' (list view) or '+vL' (large list view)");
    case 'w':
      if (format[2] != ':') break;
      return AcdParseFixedSize(format, format + 3, out, rest, error);
    case 'u':
      if ((format[2] != 'd' && format[2] != 's') || format[3] != ':') {
        return AcdFormatError(error, format, "expected '+ud:TYPE_IDS' or '+us:TYPE_IDS'");
      }
      return AcdParseUnion(format, out, rest, error);
    default:
      break;
  }
  return AcdFormatError(error, format,
                        "expected a nested format: '+l', '+L', '+vl', '+vL', '+w:N', '+s', "
                        "'+m', '+ud:...', '+us:...' or '+r'");
}

int AcdFormatParse(const char* format, struct AcdFormat* out, struct AcdError* error) {
  if (format == NULL) return AcdErrorSet(error, EINVAL, "format is NULL");

  struct AcdFormat parsed;  // zeroed up to the type ids, most of its bytes, which only a union fills
  memset(&parsed, 0, offsetof(struct AcdFormat, type_ids));
  const char* rest = format + 1;
  int code = ACD_OK;

  switch (format[0]) {
    case '\0':
      return AcdFormatError(error, format, "expected a format string, found an empty string");
    case 'n':
      parsed.type = ACD_TYPE_NA;
      break;
    case 'b':
      parsed.type = ACD_TYPE_BOOL;
      break;
    case 'c':
      AcdSetFixed(&parsed, ACD_TYPE_INT8, 1);
      break;
    case 'C':
      AcdSetFixed(&parsed, ACD_TYPE_UINT8, 1);
      break;
    case 's':
      AcdSetFixed(&parsed, ACD_TYPE_INT16, 2);
      break;
    case 'S':
      AcdSetFixed(&parsed, ACD_TYPE_UINT16, 2);
      break;
    case 'i':
      AcdSetFixed(&parsed, ACD_TYPE_INT32, 4);
      break;
    case 'I':
      AcdSetFixed(&parsed, ACD_TYPE_UINT32, 4);
      break;
    case 'l':
      AcdSetFixed(&parsed, ACD_TYPE_INT64, 8);
      break;
    case 'L':
      AcdSetFixed(&parsed, ACD_TYPE_UINT64, 8);
      break;
    case 'e':
      AcdSetFixed(&parsed, ACD_TYPE_HALF_FLOAT, 2);
      break;
    case 'f':
      AcdSetFixed(&parsed, ACD_TYPE_FLOAT, 4);
      break;
    case 'g':
      AcdSetFixed(&parsed, ACD_TYPE_DOUBLE, 8);
      break;
    case 'z':
      parsed.type = ACD_TYPE_BINARY;
      break;
    case 'Z':
      parsed.type = ACD_TYPE_LARGE_BINARY;
      break;
    case 'u':
      parsed.type = ACD_TYPE_STRING;
      break;
    case 'U':
      parsed.type = ACD_TYPE_LARGE_STRING;
      break;
    case 'v':
      if (format[1] == 'z') {
        AcdSetFixed(&parsed, ACD_TYPE_BINARY_VIEW, 16);
      } else if (format[1] == 'u') {
        AcdSetFixed(&parsed, ACD_TYPE_STRING_VIEW, 16);
      } else {
        return AcdFormatError(error, format, "expected 'vz' (binary view) or 'vu' (utf8 view)");
      }
      rest = format + 2;
      break;
    case 'd':
      code = AcdParseDecimal(format, &parsed, &rest, error);
      break;
    case 'w':
      if (format[1] != ':') {
        return AcdFormatError(error, format, "expected 'w:BYTE_WIDTH'");
      }
      code = AcdParseFixedSize(format, format + 2, &parsed, &rest, error);
      break;
    case 't':
      code = AcdParseTemporal(format, &parsed, &rest, error);
      break;
    case '+':
      code = AcdParseNested(format, &parsed, &rest, error);
      break;
    default:
      return AcdFormatError(error, format, "unknown format string");
  }
  if (code != ACD_OK) return code;

  if (*rest != '\0') {
    return AcdFormatError(error, format, "expected the end of the string after '%.*s', found '%s'",
                          (int)(rest - format), format, rest);
  }

  if (out == NULL) return ACD_OK;
  memcpy(out, &parsed, offsetof(struct AcdFormat, type_ids));  // model.h has stddef.h
  memcpy(out->type_ids, parsed.type_ids, (size_t)parsed.n_type_ids);
  return ACD_OK;
}
