// Tests of the portable fixture loader (csrc/fixtures/acd_fixture.c), run by
// test/c/fixture.sh natively under ASan/UBSan (leak check on): images made by
// test/c/fixture_image.h, their roots, releases (children moved out first,
// double releases, roots never released), streams (normal, failing at batch k,
// empty, device), and corrupt images refused with a message. With arguments,
// also loads each image file named and releases every root it hands out.
// Prints "c-fixture: N passed, M failed".

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "fixtures/acd_fixture.h"
#include "fixture_image.h"

static int passed, failed;

#define CHECK(c) Check((c) != 0, #c, __LINE__)
static void Check(int ok, const char* what, int line) {
  if (ok) {
    passed++;
  } else {
    failed++;
    fprintf(stderr, "test_fixture.c:%d: check failed: %s\n", line, what);
  }
}

static struct AcdFixture* Load(struct Img* img, struct AcdFixtureError* error) {
  size_t size;
  unsigned char* bytes = ImgWrite(img, &size);
  struct AcdFixture* fx = NULL;
  int code = AcdFixtureLoad(bytes, size, &fx, error);
  if (code != 0) fprintf(stderr, "load failed: %s\n", error->message);
  free(bytes);
  return fx;
}

// Loads the image with `patch` applied at file offset `at` (n bytes): it must be refused with `fragment`.
static void Refused(struct Img* img, size_t at, uint64_t patch, int n, long cut, const char* fragment, int line) {
  size_t size;
  unsigned char* bytes = ImgWrite(img, &size);
  struct AcdFixture* fx = NULL;
  struct AcdFixtureError error;
  int i, code;
  for (i = 0; i < n; i++) bytes[at + (size_t)i] = (unsigned char)(patch >> (8 * i));
  error.message[0] = 0;
  code = AcdFixtureLoad(bytes, cut >= 0 ? (size_t)cut : size, &fx, &error);
  Check(code == EINVAL && fx == NULL && strstr(error.message, fragment) != NULL, fragment, line);
  if (code != EINVAL || strstr(error.message, fragment) == NULL) fprintf(stderr, "  got %d: %s\n", code, error.message);
  free(bytes);
}

static uint64_t Le8(const unsigned char* p) {
  uint64_t v = 0;
  int i;
  for (i = 7; i >= 0; i--) v = (v << 8) | p[i];
  return v;
}

static void TestArrays(void) {
  struct Img* img = (struct Img*)malloc(sizeof *img);
  struct AcdFixtureError error;
  struct AcdFixtureCounts counts;
  struct AcdFixtureRoot root;
  uint64_t kids[2], a_kids[2], no_buffer[1] = {0}, s, a, dict;
  struct ArrowSchema *schema, moved;
  struct ArrowArray *array, moved_array;
  void (*saved)(struct ArrowSchema*);
  char report[1024];
  ImgInit(img);
  dict = ImgSchema(img, "u", NULL, 0, NULL, 0);
  kids[0] = ImgSchema(img, "i", "a", 0, NULL, 0);
  kids[1] = ImgSchema(img, "i", "b", 0, NULL, dict);
  s = ImgSchema(img, "+s", NULL, 2, kids, 0);
  a_kids[0] = ImgInt32(img, 3, 0);
  a_kids[1] = ImgInt32(img, 3, 10);
  a = ImgArrayAt(img, 0, 3, 0, 1, no_buffer, 2, a_kids, 0);
  ImgRoot(img, 1, ACD_FIXTURE_NO_SCHEMA, s, 0);
  ImgRoot(img, 2, 0, a, 0);
  {
    struct AcdFixture* fx = Load(img, &error);
    CHECK(fx != NULL);
    if (fx == NULL) return;
    CHECK(AcdFixtureRootCount(fx) == 2);
    CHECK(AcdFixtureGetRoot(fx, 1, &root) == 0 && root.kind == 2 && root.schema_index == 0 && root.body_offset == a);
    CHECK(AcdFixtureGetRoot(fx, 2, &root) == EINVAL);
    schema = (struct ArrowSchema*)AcdFixtureRootPointer(fx, 0);
    array = (struct ArrowArray*)AcdFixtureRootPointer(fx, 1);
    CHECK(strcmp(schema->format, "+s") == 0 && schema->n_children == 2 && strcmp(schema->children[1]->name, "b") == 0);
    CHECK(strcmp(schema->children[1]->dictionary->format, "u") == 0 && schema->release != NULL);
    CHECK(array->length == 3 && array->n_children == 2 && array->children[1]->n_buffers == 2);
    CHECK((uintptr_t)array->children[1]->buffers[1] % 64 == 0 && ((const int32_t*)array->children[1]->buffers[1])[2] == 13);
    // A child moved out first, released after its parent.
    moved = *schema->children[1];
    schema->children[1]->release = NULL;
    schema->release(schema);
    CHECK(schema->release == NULL && schema->children[0]->release == NULL);
    AcdFixtureGetCounts(fx, &counts);
    CHECK(counts.release_calls == 2 && counts.not_released == 2);  // the moved child, the array
    saved = moved.release;
    moved.release(&moved);
    CHECK(moved.release == NULL && AcdFixtureReleaseCountAt(fx, kids[1]) == 1 && AcdFixtureReleaseCountAt(fx, dict) == 1);
    // A double release: counted, and reported by the free.
    saved(&moved);
    moved_array = *array->children[0];
    array->children[0]->release = NULL;
    array->release(array);
    AcdFixtureGetCounts(fx, &counts);
    CHECK(counts.double_releases == 1 && counts.not_released == 1 && counts.nodes == 7);
    CHECK(AcdFixtureFree(fx, report, sizeof report) == 2);  // the moved array child, the double release
    CHECK(strstr(report, "released 2 times") != NULL && strstr(report, "handed out and never released") != NULL);
  }
  // A release after the free is stray, not a crash.
  {
    int64_t before = AcdFixtureStrayReleases();
    moved_array.release(&moved_array);
    CHECK(AcdFixtureStrayReleases() == before + 1 && moved_array.release == NULL);
  }
  free(img);
}

static void TestStreams(void) {
  struct Img* img = (struct Img*)malloc(sizeof *img);
  struct AcdFixtureError error;
  struct AcdFixtureCounts counts;
  struct AcdFixture* fx;
  uint64_t batches[3], device[2], schema, st[4];
  struct ArrowSchema copy1, copy2;
  struct ArrowArray batch;
  struct ArrowDeviceArray dbatch;
  struct ArrowArrayStream *normal, *failing, *empty;
  struct ArrowDeviceArrayStream* dstream;
  char report[1024];
  ImgInit(img);
  schema = ImgSchema(img, "i", "x", 0, NULL, 0);
  batches[0] = ImgInt32(img, 3, 0);
  batches[1] = ImgInt32(img, 2, 100);
  batches[2] = ImgInt32(img, 1, 7);
  device[0] = ImgDeviceInt32(img, 4, 0);
  device[1] = ImgDeviceInt32(img, 4, 4);
  st[0] = ImgStream(img, 4);
  st[1] = ImgStream(img, 4);
  st[2] = ImgStream(img, 4);
  st[3] = ImgStream(img, 5);
  ImgRoot(img, 4, ACD_FIXTURE_NO_SCHEMA, st[0], ImgScript(img, schema, 2, batches, -1, 0, NULL));
  ImgRoot(img, 4, ACD_FIXTURE_NO_SCHEMA, st[1], ImgScript(img, schema, 1, batches + 2, 1, EIO, "disk on fire"));
  ImgRoot(img, 4, ACD_FIXTURE_NO_SCHEMA, st[2], ImgScript(img, schema, 0, NULL, -1, 0, NULL));
  ImgRoot(img, 5, ACD_FIXTURE_NO_SCHEMA, st[3], ImgScript(img, schema, 2, device, -1, 0, NULL));
  fx = Load(img, &error);
  CHECK(fx != NULL);
  if (fx == NULL) return;
  normal = (struct ArrowArrayStream*)AcdFixtureRootPointer(fx, 0);
  failing = (struct ArrowArrayStream*)AcdFixtureRootPointer(fx, 1);
  empty = (struct ArrowArrayStream*)AcdFixtureRootPointer(fx, 2);
  dstream = (struct ArrowDeviceArrayStream*)AcdFixtureRootPointer(fx, 3);
  // Two schemas: each the caller's, released independently.
  CHECK(normal->get_schema(normal, &copy1) == 0 && normal->get_schema(normal, &copy2) == 0);
  CHECK(strcmp(copy1.format, "i") == 0 && strcmp(copy2.name, "x") == 0 && copy1.release != NULL);
  copy1.release(&copy1);
  CHECK(copy1.release == NULL && copy2.release != NULL);
  copy2.release(&copy2);
  CHECK(normal->get_next(normal, &batch) == 0 && batch.length == 3 && ((const int32_t*)batch.buffers[1])[0] == 1);
  batch.release(&batch);
  CHECK(normal->get_next(normal, &batch) == 0 && batch.length == 2 && ((const int32_t*)batch.buffers[1])[1] == 102);
  batch.release(&batch);
  CHECK(normal->get_next(normal, &batch) == 0 && batch.release == NULL);
  CHECK(normal->get_next(normal, &batch) == 0 && batch.release == NULL);
  normal->release(normal);
  // Fails at batch 1 with EIO and its message.
  CHECK(failing->get_last_error(failing) == NULL);
  CHECK(failing->get_next(failing, &batch) == 0 && batch.length == 1 && ((const int32_t*)batch.buffers[1])[0] == 8);
  batch.release(&batch);
  CHECK(failing->get_next(failing, &batch) == EIO && strcmp(failing->get_last_error(failing), "disk on fire") == 0);
  CHECK(failing->get_next(failing, &batch) == EIO);
  failing->release(failing);
  CHECK(empty->get_next(empty, &batch) == 0 && batch.release == NULL);
  // A stream moved by its consumer still works through its private_data.
  {
    struct ArrowArrayStream mine = *empty;
    empty->release = NULL;
    mine.release(&mine);
  }
  CHECK(dstream->device_type == ARROW_DEVICE_CPU);
  CHECK(dstream->get_next(dstream, &dbatch) == 0 && dbatch.device_type == ARROW_DEVICE_CPU && dbatch.device_id == -1);
  CHECK(dbatch.array.length == 4 && ((const int32_t*)dbatch.array.buffers[1])[3] == 4);
  dbatch.array.release(&dbatch.array);
  CHECK(dstream->get_next(dstream, &dbatch) == 0 && ((const int32_t*)dbatch.array.buffers[1])[3] == 8);
  AcdFixtureGetCounts(fx, &counts);
  CHECK(counts.not_released == 2);  // the second device batch, the device stream
  CHECK(AcdFixtureFree(fx, report, sizeof report) == 2 && strstr(report, "stream root 3: handed out and never released") != NULL);
  free(img);
}

static void TestCorrupt(void) {
  struct Img* img = (struct Img*)malloc(sizeof *img);
  struct AcdFixtureError error;
  struct AcdFixture* fx = NULL;
  size_t size, cut;
  unsigned char* bytes;
  uint64_t s, st, body, rel0, n_rel, n_cb;
  unsigned seed = 12345;
  int i, all_refused = 1, survived = 1;
  ImgInit(img);
  s = ImgSchema(img, "i", "x", 0, NULL, 0);
  ImgRoot(img, 1, ACD_FIXTURE_NO_SCHEMA, s, 0);
  st = ImgStream(img, 4);
  ImgRoot(img, 4, ACD_FIXTURE_NO_SCHEMA, st, ImgScript(img, s, 0, NULL, -1, 0, "bye"));
  bytes = ImgWrite(img, &size);
  body = Le8(bytes + 16);
  rel0 = 128;
  n_rel = img->n_relocs;
  n_cb = img->n_cbs;
  Refused(img, 0, 'X', 1, -1, "bad magic", __LINE__);
  Refused(img, 8, 2, 2, -1, "format version 2", __LINE__);
  Refused(img, 10, sizeof(void*) == 8 ? 4 : 8, 1, -1, sizeof(void*) == 8 ? "pointer_size 4" : "pointer_size 8", __LINE__);
  Refused(img, 11, 2, 1, -1, "endianness 2", __LINE__);
  Refused(img, 0, 0, 0, 100, "shorter than the 128-byte header", __LINE__);
  Refused(img, 0, 0, 0, (long)size - 1, "past the end of the file", __LINE__);
  Refused(img, (size_t)rel0, Le8(bytes + size - 8) + 4096, 8, -1, "relocation 0: body offset", __LINE__);
  Refused(img, (size_t)(rel0 + 8), 0, 8, -1, "not after the previous entry", __LINE__);
  // A pointer value past the body: the first relocated field (a format pointer) made huge.
  Refused(img, (size_t)(body + Le8(bytes + rel0)), 1u << 30, 4, -1, "is past the body", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel + 8), 11, 4, -1, "behaviour 11 is not one of 1-10", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel), 3, 8, -1, "is not that field of a struct", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel + 16 * n_cb), 9, 4, -1, "kind 9 is not one of 1-6", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel + 16 * n_cb + 8), 1u << 31, 8, -1, "does not hold a", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel + 16 * n_cb + 32 + 16), 1u << 31, 8, -1, "its script at body offset", __LINE__);
  Refused(img, (size_t)(rel0 + 8 * n_rel + 16 * n_cb + 32 + 4), 0, 4, -1, "schema index 0 is not a schema root", __LINE__);
  // The body cut before the NUL of the script's message (the last thing in it).
  Refused(img, 24, img->used - 1, 8, -1, "is not a NUL-terminated string", __LINE__);
  // Every truncation is refused; random byte flips load or are refused, never crash.
  for (cut = 0; cut < size; cut++) {
    all_refused &= AcdFixtureLoad(bytes, cut, &fx, &error) == EINVAL && fx == NULL && error.message[0] != 0;
  }
  CHECK(all_refused);
  for (i = 0; i < 3000; i++) {
    unsigned char* copy = (unsigned char*)malloc(size);
    int k;
    memcpy(copy, bytes, size);
    for (k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      copy[(seed >> 8) % size] ^= (unsigned char)(1u << ((seed >> 4) % 8));
    }
    if (AcdFixtureLoad(copy, size, &fx, &error) == 0) survived &= AcdFixtureFree(fx, NULL, 0) >= 0;
    free(copy);
  }
  CHECK(survived);
  CHECK(AcdFixtureLoadFile("/nonexistent/x.acdfix", &fx, &error) == ENOENT && strstr(error.message, "/nonexistent/x.acdfix") != NULL);
  free(bytes);
  free(img);
}

// Loads an image file and releases everything it hands out, as a consumer would.
static void LoadAndRelease(const char* path) {
  struct AcdFixtureError error;
  struct AcdFixture* fx;
  struct AcdFixtureRoot root;
  char report[2048];
  uint32_t i;
  int problems;
  if (AcdFixtureLoadFile(path, &fx, &error) != 0) {
    fprintf(stderr, "%s\n", error.message);
    CHECK(0);
    return;
  }
  for (i = 0; AcdFixtureGetRoot(fx, i, &root) == 0; i++) {
    if (root.kind == 1 && ((struct ArrowSchema*)root.ptr)->release) ((struct ArrowSchema*)root.ptr)->release(root.ptr);
    if ((root.kind == 2 || root.kind == 3) && ((struct ArrowArray*)root.ptr)->release) ((struct ArrowArray*)root.ptr)->release(root.ptr);
    if (root.kind == 4) {
      struct ArrowArrayStream* st = (struct ArrowArrayStream*)root.ptr;
      struct ArrowSchema schema;
      struct ArrowArray batch;
      CHECK(st->get_schema(st, &schema) == 0);
      if (schema.release) schema.release(&schema);
      while (st->get_next(st, &batch) == 0 && batch.release != NULL) batch.release(&batch);
      st->release(st);
    }
    if (root.kind == 5) {
      struct ArrowDeviceArrayStream* st = (struct ArrowDeviceArrayStream*)root.ptr;
      struct ArrowSchema schema;
      struct ArrowDeviceArray batch;
      CHECK(st->get_schema(st, &schema) == 0);
      if (schema.release) schema.release(&schema);
      while (st->get_next(st, &batch) == 0 && batch.array.release != NULL) batch.array.release(&batch.array);
      st->release(st);
    }
  }
  problems = AcdFixtureFree(fx, report, sizeof report);
  if (problems != 0) fprintf(stderr, "%s: %s", path, report);
  CHECK(problems == 0);
}

// The loader's own callbacks, taken from a clean image: a fuzzed image's roots
// are released only through them (a flipped bit elsewhere is garbage to call).
static void (*our_schema_release)(struct ArrowSchema*);
static void (*our_array_release)(struct ArrowArray*);
static int (*our_get_next)(struct ArrowArrayStream*, struct ArrowArray*);

static void LearnCallbacks(void) {
  struct Img* img = (struct Img*)malloc(sizeof *img);
  struct AcdFixtureError error;
  struct AcdFixture* fx;
  uint64_t s;
  ImgInit(img);
  s = ImgSchema(img, "i", "x", 0, NULL, 0);
  ImgRoot(img, 1, ACD_FIXTURE_NO_SCHEMA, s, 0);
  ImgRoot(img, 2, 0, ImgInt32(img, 1, 0), 0);
  ImgRoot(img, 4, ACD_FIXTURE_NO_SCHEMA, ImgStream(img, 4), ImgScript(img, s, 0, NULL, -1, 0, NULL));
  fx = Load(img, &error);
  our_schema_release = ((struct ArrowSchema*)AcdFixtureRootPointer(fx, 0))->release;
  our_array_release = ((struct ArrowArray*)AcdFixtureRootPointer(fx, 1))->release;
  our_get_next = ((struct ArrowArrayStream*)AcdFixtureRootPointer(fx, 2))->get_next;
  AcdFixtureFree(fx, NULL, 0);
  free(img);
}

static long fuzz_loaded, fuzz_refused;

// Bit flips in an image file (fixed seed): each load is refused, or loads and
// its roots release through the loader's checks without a crash or a leak.
static void Fuzz(const char* path, int rounds) {
  FILE* f = fopen(path, "rb");
  unsigned char *bytes, *copy;
  long size;
  unsigned seed = 2463534242u;
  int i, k, loaded = 0;
  if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0) {
    if (f) fclose(f);
    CHECK(0);
    return;
  }
  bytes = (unsigned char*)malloc((size_t)size);
  copy = (unsigned char*)malloc((size_t)size);
  CHECK(fread(bytes, 1, (size_t)size, f) == (size_t)size);
  fclose(f);
  for (i = 0; i < rounds; i++) {
    struct AcdFixture* fx = NULL;
    struct AcdFixtureError error;
    struct AcdFixtureRoot root;
    uint32_t r;
    memcpy(copy, bytes, (size_t)size);
    for (k = 0; k <= i % 3; k++) {
      seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
      copy[seed % (unsigned)size] ^= (unsigned char)(1u << (seed >> 29));
    }
    if (AcdFixtureLoad(copy, (size_t)size, &fx, &error) != 0) continue;
    loaded++;
    for (r = 0; AcdFixtureGetRoot(fx, r, &root) == 0; r++) {
      if (root.kind == 1 && ((struct ArrowSchema*)root.ptr)->release == our_schema_release) our_schema_release(root.ptr);
      if ((root.kind == 2 || root.kind == 3) && ((struct ArrowArray*)root.ptr)->release == our_array_release) our_array_release(root.ptr);
      if (root.kind == 4 && ((struct ArrowArrayStream*)root.ptr)->get_next == our_get_next) {
        struct ArrowArrayStream* st = (struct ArrowArrayStream*)root.ptr;
        struct ArrowArray batch;
        int n = 0;
        while (n++ < 16 && our_get_next(st, &batch) == 0 && batch.release == our_array_release) our_array_release(&batch);
      }
    }
    AcdFixtureFree(fx, NULL, 0);
  }
  fuzz_loaded += loaded;
  fuzz_refused += rounds - loaded;
  free(bytes);
  free(copy);
}

int main(int argc, char** argv) {
  int i;
  TestArrays();
  TestStreams();
  TestCorrupt();
  LearnCallbacks();
  for (i = 1; i < argc; i++) LoadAndRelease(argv[i]);
  for (i = 1; i < argc; i++) Fuzz(argv[i], 60);
  if (argc > 1) printf("c-fixture: loaded and released %d image files\n", argc - 1);
  if (argc > 1) printf("c-fixture: bit flips: %ld images refused, %ld loaded and released\n", fuzz_refused, fuzz_loaded);
  printf("c-fixture: %d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
