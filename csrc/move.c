// Moves and releases, as the C Data Interface defines them: a move is a
// bitwise copy after which the source is marked released (release = NULL)
// without its callback being called.

#include <errno.h>
#include <string.h>

#include "acd.h"

void AcdSchemaMove(struct ArrowSchema* src, struct ArrowSchema* dst) {
  memcpy(dst, src, sizeof(struct ArrowSchema));
  src->release = NULL;
}

void AcdArrayMove(struct ArrowArray* src, struct ArrowArray* dst) {
  memcpy(dst, src, sizeof(struct ArrowArray));
  src->release = NULL;
}

void AcdDeviceArrayMove(struct ArrowDeviceArray* src, struct ArrowDeviceArray* dst) {
  memcpy(dst, src, sizeof(struct ArrowDeviceArray));
  src->array.release = NULL;
}

// A struct pointer the caller trusts to be readable; misaligned ones are
// refused rather than read (undefined behaviour natively).
#define ACD_ALIGNED(p, type) (((uintptr_t)(p) % _Alignof(type)) == 0)

int AcdSchemaReleaseChecked(struct ArrowSchema* schema, struct AcdError* error) {
  if (schema == NULL) return ACD_OK;
  if (!ACD_ALIGNED(schema, struct ArrowSchema)) {
    return AcdErrorSet(error, EINVAL, "release: the struct ArrowSchema at %p is misaligned",
                       (void*)schema);
  }
  if (schema->release == NULL) return ACD_OK;
  int code = ACD_CALLBACK_CHECK(schema->release, ACD_ROLE_SCHEMA_RELEASE, "release", error);
  if (code == ACD_OK) {
    schema->release(schema);
    if (schema->release == NULL) return ACD_OK;
    code = AcdErrorSet(error, EINVAL,
                       "release: the callback returned without marking the schema released");
  }
  schema->release = NULL;  // not called again: what it holds leaks
  return code;
}

int AcdArrayReleaseChecked(struct ArrowArray* array, struct AcdError* error) {
  if (array == NULL) return ACD_OK;
  if (!ACD_ALIGNED(array, struct ArrowArray)) {
    return AcdErrorSet(error, EINVAL, "release: the struct ArrowArray at %p is misaligned",
                       (void*)array);
  }
  if (array->release == NULL) return ACD_OK;
  int code = ACD_CALLBACK_CHECK(array->release, ACD_ROLE_ARRAY_RELEASE, "release", error);
  if (code == ACD_OK) {
    array->release(array);
    if (array->release == NULL) return ACD_OK;
    code = AcdErrorSet(error, EINVAL,
                       "release: the callback returned without marking the array released");
  }
  array->release = NULL;  // not called again: what it holds leaks
  return code;
}

void AcdSchemaRelease(struct ArrowSchema* schema) { AcdSchemaReleaseChecked(schema, NULL); }

void AcdArrayRelease(struct ArrowArray* array) { AcdArrayReleaseChecked(array, NULL); }
