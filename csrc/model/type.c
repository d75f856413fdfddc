// The per-type facts of the type model: a type's name, and how many buffers
// and children its arrays and schemas have (the buffer sizes are in
// buffers.c).

#include "model/model.h"

const char* AcdTypeName(enum AcdType type) {
  switch (type) {
    case ACD_TYPE_UNINITIALIZED:
      return "uninitialized";
    case ACD_TYPE_NA:
      return "null";
    case ACD_TYPE_BOOL:
      return "bool";
    case ACD_TYPE_INT8:
      return "int8";
    case ACD_TYPE_UINT8:
      return "uint8";
    case ACD_TYPE_INT16:
      return "int16";
    case ACD_TYPE_UINT16:
      return "uint16";
    case ACD_TYPE_INT32:
      return "int32";
    case ACD_TYPE_UINT32:
      return "uint32";
    case ACD_TYPE_INT64:
      return "int64";
    case ACD_TYPE_UINT64:
      return "uint64";
    case ACD_TYPE_HALF_FLOAT:
      return "half_float";
    case ACD_TYPE_FLOAT:
      return "float";
    case ACD_TYPE_DOUBLE:
      return "double";
    case ACD_TYPE_BINARY:
      return "binary";
    case ACD_TYPE_LARGE_BINARY:
      return "large_binary";
    case ACD_TYPE_BINARY_VIEW:
      return "binary_view";
    case ACD_TYPE_STRING:
      return "string";
    case ACD_TYPE_LARGE_STRING:
      return "large_string";
    case ACD_TYPE_STRING_VIEW:
      return "string_view";
    case ACD_TYPE_DECIMAL32:
      return "decimal32";
    case ACD_TYPE_DECIMAL64:
      return "decimal64";
    case ACD_TYPE_DECIMAL128:
      return "decimal128";
    case ACD_TYPE_DECIMAL256:
      return "decimal256";
    case ACD_TYPE_FIXED_SIZE_BINARY:
      return "fixed_size_binary";
    case ACD_TYPE_DATE32:
      return "date32";
    case ACD_TYPE_DATE64:
      return "date64";
    case ACD_TYPE_TIME32:
      return "time32";
    case ACD_TYPE_TIME64:
      return "time64";
    case ACD_TYPE_TIMESTAMP:
      return "timestamp";
    case ACD_TYPE_DURATION:
      return "duration";
    case ACD_TYPE_INTERVAL_MONTHS:
      return "interval_months";
    case ACD_TYPE_INTERVAL_DAY_TIME:
      return "interval_day_time";
    case ACD_TYPE_INTERVAL_MONTH_DAY_NANO:
      return "interval_month_day_nano";
    case ACD_TYPE_LIST:
      return "list";
    case ACD_TYPE_LARGE_LIST:
      return "large_list";
    case ACD_TYPE_LIST_VIEW:
      return "list_view";
    case ACD_TYPE_LARGE_LIST_VIEW:
      return "large_list_view";
    case ACD_TYPE_FIXED_SIZE_LIST:
      return "fixed_size_list";
    case ACD_TYPE_STRUCT:
      return "struct";
    case ACD_TYPE_MAP:
      return "map";
    case ACD_TYPE_DENSE_UNION:
      return "dense_union";
    case ACD_TYPE_SPARSE_UNION:
      return "sparse_union";
    case ACD_TYPE_RUN_END_ENCODED:
      return "run_end_encoded";
    default:
      return "unknown";
  }
}

int64_t AcdTypeBufferCount(enum AcdType type) {
  switch (type) {
    case ACD_TYPE_NA:
    case ACD_TYPE_RUN_END_ENCODED:
      return 0;
    case ACD_TYPE_FIXED_SIZE_LIST:
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_SPARSE_UNION:  // type ids only: unions have no validity bitmap
      return 1;
    case ACD_TYPE_BINARY:
    case ACD_TYPE_LARGE_BINARY:
    case ACD_TYPE_STRING:
    case ACD_TYPE_LARGE_STRING:
    case ACD_TYPE_BINARY_VIEW:  // the minimum: validity, views, variadic sizes
    case ACD_TYPE_STRING_VIEW:
    case ACD_TYPE_LIST_VIEW:
    case ACD_TYPE_LARGE_LIST_VIEW:
      return 3;
    case ACD_TYPE_UNINITIALIZED:
    case ACD_TYPE_COUNT:
      return -1;
    default:
      // Validity plus values or offsets; dense unions: type ids plus offsets.
      return 2;
  }
}

int64_t AcdTypeChildCount(enum AcdType type) {
  switch (type) {
    case ACD_TYPE_LIST:
    case ACD_TYPE_LARGE_LIST:
    case ACD_TYPE_LIST_VIEW:
    case ACD_TYPE_LARGE_LIST_VIEW:
    case ACD_TYPE_FIXED_SIZE_LIST:
    case ACD_TYPE_MAP:
      return 1;
    case ACD_TYPE_RUN_END_ENCODED:
      return 2;
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_DENSE_UNION:
    case ACD_TYPE_SPARSE_UNION:
      return -1;
    default:
      return 0;
  }
}
