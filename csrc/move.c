// Moves and releases, as the C Data Interface defines them: a move is a
// bitwise copy after which the source is marked released (release = NULL)
// without its callback being called.

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

void AcdSchemaRelease(struct ArrowSchema* schema) {
  if (schema != NULL && schema->release != NULL) schema->release(schema);
}

void AcdArrayRelease(struct ArrowArray* array) {
  if (array != NULL && array->release != NULL) array->release(array);
}
