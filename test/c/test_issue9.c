// Issue 9, natively (under ASan and UBSan when run.sh finds them) and on wasm:
// callbacks checked before a call (item 3), struct trees that are DAGs
// refused with both paths (item 4), misaligned struct pointers refused before
// a field is read (item 9). Prints "c-issue9: N passed, M failed".

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "check.h"

static void NopRelease(struct ArrowSchema* schema) { schema->release = NULL; }

static void SchemaLeaf(struct ArrowSchema* s, const char* format) {
  memset(s, 0, sizeof(*s));
  s->format = format;
  s->release = NopRelease;
}

static void TestMisaligned(void) {
  struct AcdError error;
  struct ArrowSchema leaf;
  SchemaLeaf(&leaf, "i");
  // The struct's bytes at an address 1 and 4 past an aligned one: refused
  // before a field is read, which UBSan would report.
  alignas(16) unsigned char bytes[sizeof(struct ArrowSchema) + 16];
  for (int shift = 1; shift <= 4; shift += 3) {
    memcpy(bytes + shift, &leaf, sizeof(leaf));
    CHECK_FAILS(AcdSchemaValidate((const struct ArrowSchema*)(void*)(bytes + shift), &error), EINVAL,
                &error, "root: expected a struct ArrowSchema aligned to 8 bytes");
  }
  // A child pointer, and the child pointer array itself.
  struct ArrowSchema root;
  SchemaLeaf(&root, "+s");
  struct ArrowSchema* children[2] = {(struct ArrowSchema*)(void*)(bytes + 4), &leaf};
  root.n_children = 1;
  root.children = children;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[0]: expected a struct ArrowSchema aligned to 8 bytes");
  alignas(16) unsigned char pointers[3 * sizeof(void*)];
  memcpy(pointers + 1, &children[1], sizeof(void*));
  root.children = (struct ArrowSchema**)(void*)(pointers + 1);
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children: expected 1 child pointers aligned to");

  // Arrays: the root and a stream.
  struct ArrowArray array;
  memset(&array, 0, sizeof(array));
  alignas(16) unsigned char array_bytes[sizeof(struct ArrowArray) + 16];
  memcpy(array_bytes + 4, &array, sizeof(array));
  CHECK_FAILS(AcdArrayValidate(&leaf, (const struct ArrowArray*)(void*)(array_bytes + 4),
                               ACD_VALIDATION_DEFAULT, &error),
              EINVAL, &error, "root: expected a struct ArrowArray aligned to 8 bytes");
  alignas(16) unsigned char stream_bytes[sizeof(struct ArrowArrayStream) + 16];
  memset(stream_bytes, 0xab, sizeof(stream_bytes));
  struct ArrowSchema out;
  CHECK_FAILS(AcdArrayStreamGetSchema((struct ArrowArrayStream*)(void*)(stream_bytes + 1), &out, &error),
              EINVAL, &error, "get_schema: the struct ArrowArrayStream at");
}

static void TestDag(void) {
  struct AcdError error;
  struct ArrowSchema root, shared, leaf;
  SchemaLeaf(&leaf, "i");
  SchemaLeaf(&shared, "+s");
  struct ArrowSchema* shared_children[1] = {&leaf};
  shared.n_children = 1;
  shared.children = shared_children;
  SchemaLeaf(&root, "+s");
  struct ArrowSchema* children[2] = {&shared, &shared};
  root.n_children = 2;
  root.children = children;
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1]: the same struct ArrowSchema as root.children[0] (");
  children[1] = &leaf;  // a grandchild reached again as a child
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[1]: the same struct ArrowSchema as root.children[0].children[0] (");

  // A wide tree outgrows the seen set's inline room; its heap table is freed.
  enum { kWide = 300 };
  static struct ArrowSchema leaves[kWide];
  static struct ArrowSchema* wide[kWide];
  for (int i = 0; i < kWide; i++) {
    SchemaLeaf(&leaves[i], "i");
    wide[i] = &leaves[i];
  }
  root.n_children = kWide;
  root.children = wide;
  int64_t before = AcdBytesAllocated();
  CHECK_OK(AcdSchemaValidate(&root, &error), &error);
  CHECK(AcdBytesAllocated() == before);
  wide[kWide - 1] = &leaves[7];
  CHECK_FAILS(AcdSchemaValidate(&root, &error), EINVAL, &error,
              "root.children[299]: the same struct ArrowSchema as root.children[7] (");
  CHECK(AcdBytesAllocated() == before);
}

static void TestCallbacks(void) {
  struct AcdError error;
  int64_t before = AcdBytesAllocated();
  // One of our callbacks in another role is refused by role.
  struct ArrowSchema leaf;
  SchemaLeaf(&leaf, "i");
  leaf.release = (void (*)(struct ArrowSchema*))(void (*)(void))&AcdArrayReleaseOwned;
  CHECK_FAILS(AcdSchemaValidate(&leaf, &error), EINVAL, &error,
              "root.release: expected a function void(struct ArrowSchema*), found the release "
              "of a struct ArrowArray");
  CHECK(!ACD_CALLBACK_VALID(NULL, ACD_ROLE_ARRAY_RELEASE));
  CHECK(ACD_CALLBACK_VALID(&AcdArrayReleaseOwned, ACD_ROLE_ARRAY_RELEASE));
  CHECK(!ACD_CALLBACK_VALID(&AcdArraySourceGetNext, ACD_ROLE_ARRAY_STREAM_GET_SCHEMA));

  // A release that is not ours to call: never called, the struct marked released.
  CHECK_FAILS(AcdSchemaReleaseChecked(&leaf, &error), EINVAL, &error,
              "release: expected a function void(struct ArrowSchema*)");
  CHECK(leaf.release == NULL);

  // Our release on a struct whose private_data is not our block: does nothing.
  struct ArrowArray a, b;
  CHECK_OK(AcdArrayInit(&a, 0, 0, 0, 1, 0, 0, &error), &error);
  CHECK_OK(AcdArrayInit(&b, 0, 0, 0, 1, 0, 0, &error), &error);
  CHECK(AcdArrayAllocateBuffer(&a, 0, 8) != NULL);
  void* saved = b.private_data;
  unsigned char* block = AcdMalloc(64);
  memset(block, 0, 64);
  b.private_data = block + 32;  // inside a live block, not its start
  CHECK_FAILS(AcdArrayReleaseChecked(&b, &error), EINVAL, &error,
              "release: the callback returned without marking the array released");
  b.private_data = a.private_data;
  b.release = a.release;
  b.private_data = block;  // a live block, but not an array's
  CHECK_FAILS(AcdArrayReleaseChecked(&b, &error), EINVAL, &error, "without marking");
  b.private_data = saved;
  b.release = a.release;
  AcdArrayRelease(&b);
  AcdArrayRelease(&a);
  CHECK(a.release == NULL && b.release == NULL);
  // Freeing what is not a live block is refused, never corrupts the heap.
  AcdFree(block + 16);
  CHECK(AcdBlockLive(block) && !AcdBlockLive(block + 16) && !AcdBlockLive(block + 32));
  AcdFree(block);
#if defined(__wasm__)
  // On wasm the memory stays readable: a double free is refused (natively
  // the check would read freed memory, which ASan reports).
  CHECK(!AcdBlockLive(block));
  AcdFree(block);
#endif
  CHECK(AcdBytesAllocated() == before);
}

int main(void) {
  TestMisaligned();
  TestDag();
  TestCallbacks();
  return CheckSummary("c-issue9");
}
