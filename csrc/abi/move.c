// Moves and releases, as the C Data Interface defines them: a move is a
// bitwise copy after which the source is marked released (release = NULL)
// without its callback being called.

#include <errno.h>
#include <string.h>

#include "abi/abi.h"

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

int AcdSchemaReleaseChecked(struct ArrowSchema* schema, struct AcdError* error) {
  ACD_RELEASE_CHECKED(schema, ArrowSchema, ACD_ROLE_SCHEMA_RELEASE, "schema", error);
}

int AcdArrayReleaseChecked(struct ArrowArray* array, struct AcdError* error) {
  ACD_RELEASE_CHECKED(array, ArrowArray, ACD_ROLE_ARRAY_RELEASE, "array", error);
}

void AcdSchemaRelease(struct ArrowSchema* schema) { AcdSchemaReleaseChecked(schema, NULL); }

void AcdArrayRelease(struct ArrowArray* array) { AcdArrayReleaseChecked(array, NULL); }
