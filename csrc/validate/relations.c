// Array validation, the relations between an array and its children: child
// lengths that must cover the parent's slots (struct, sparse union, fixed-size
// list), the last offset (list, map), non-null map keys, and run ends (run-end
// encoded). Called by array.c once the children are validated.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "validate/validate.h"

static int AcdChildLengthAtLeast(struct AcdValidation* v, const struct ArrowArray* a, int64_t i,
                                 int64_t minimum, const char* why) {
  const struct ArrowArray* child = a->children[i];
  if (child->length >= minimum) return ACD_OK;
  size_t mark = AcdValidationPushChild(v, i);
  int code = AcdValidationFail(v, "length", EINVAL,
                               "expected >= %" PRId64 " (%s), found %" PRId64, minimum, why,
                               child->length);
  AcdValidationPop(v, mark);
  return code;
}

// Run ends are positive and strictly increasing (FULL), and the last one
// covers the parent's offset + length (DEFAULT).
static int AcdRunEndsValidateContent(struct AcdValidation* v, const struct AcdArrayNode* node,
                                     int width) {
  const struct ArrowArray* run_ends = node->array->children[0];
  int64_t previous = 0;
  int64_t stop = run_ends->offset + run_ends->length;
  for (int64_t j = run_ends->offset; j < stop; j++) {
    int64_t run_end = AcdReadInt(run_ends->buffers[1], j, width);
    if (run_end <= previous) {
      return AcdValidationFail(v, "buffers[1]", EINVAL,
                               "expected run ends > 0 and strictly increasing, found %" PRId64
                               " at index %" PRId64 " after %" PRId64,
                               run_end, j, previous);
    }
    previous = run_end;
  }
  return ACD_OK;
}

static int AcdArrayValidateRunEnds(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  const struct ArrowArray* run_ends = a->children[0];
  size_t mark = AcdValidationPushChild(v, 0);
  int code = ACD_OK;
  if (run_ends->null_count > 0) {
    code = AcdValidationFail(v, "null_count", EINVAL,
                             "expected 0 (run ends cannot be null), found %" PRId64,
                             run_ends->null_count);
  } else if (a->length > 0 && run_ends->length < 1) {
    code = AcdValidationFail(v, "length", EINVAL,
                             "expected >= 1 run end for a non-empty run-end encoded array, "
                             "found 0");
  } else if (node->level >= ACD_VALIDATION_DEFAULT && run_ends->length > 0) {
    // The child's buffers were checked for this range when it was validated.
    struct AcdFormat format;
    AcdFormatParse(node->schema->children[0]->format, &format, NULL);
    int64_t last = AcdReadInt(run_ends->buffers[1], run_ends->offset + run_ends->length - 1,
                              format.byte_width);
    if (last < node->end) {
      code = AcdValidationFail(v, NULL, EINVAL,
                               "expected the last run end >= %" PRId64
                               " (the parent's offset + length), found %" PRId64,
                               node->end, last);
    } else if (node->level >= ACD_VALIDATION_FULL) {
      code = AcdRunEndsValidateContent(v, node, format.byte_width);
    }
  }
  AcdValidationPop(v, mark);
  if (code != ACD_OK) return code;
  return AcdChildLengthAtLeast(v, a, 1, run_ends->length, "the number of run ends");
}

int AcdArrayValidateRelations(struct AcdValidation* v, const struct AcdArrayNode* node) {
  const struct ArrowArray* a = node->array;
  int code = ACD_OK;
  switch (node->format.type) {
    case ACD_TYPE_STRUCT:
    case ACD_TYPE_SPARSE_UNION:
      for (int64_t i = 0; i < a->n_children && code == ACD_OK; i++) {
        code = AcdChildLengthAtLeast(v, a, i, node->end, "the parent's offset + length");
      }
      return code;
    case ACD_TYPE_FIXED_SIZE_LIST: {
      int64_t size = node->format.fixed_size;
      if (size != 0 && node->end > INT64_MAX / size) {
        return AcdValidationFail(v, NULL, EOVERFLOW,
                                 "expected (offset + length) * list size to fit in int64, found "
                                 "%" PRId64 " * %" PRId64,
                                 node->end, size);
      }
      return AcdChildLengthAtLeast(v, a, 0, node->end * size,
                                   "the parent's (offset + length) * list size");
    }
    case ACD_TYPE_MAP: {
      const struct ArrowArray* keys = a->children[0]->children[0];
      if (keys->null_count > 0) {
        size_t mark = AcdValidationPushText(v, ".children[0].children[0]");
        code = AcdValidationFail(v, "null_count", EINVAL,
                                 "expected 0 (map keys cannot be null), found %" PRId64,
                                 keys->null_count);
        AcdValidationPop(v, mark);
        return code;
      }
    }
      // fall through
    case ACD_TYPE_LIST:
    case ACD_TYPE_LARGE_LIST:
      if (node->level < ACD_VALIDATION_DEFAULT || a->length == 0) return ACD_OK;
      return AcdChildLengthAtLeast(v, a, 0, node->last_offset, "the last offset");
    case ACD_TYPE_RUN_END_ENCODED:
      return AcdArrayValidateRunEnds(v, node);
    default:
      return ACD_OK;
  }
}

