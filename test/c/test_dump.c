// Tests of the fixture dumper (csrc/fixtures/acd_dump.c), run by
// test/c/dump.sh natively under ASan/UBSan: trees built with the core (a
// struct of a sliced int32, a utf8 with nulls, a dictionary, metadata that is
// not UTF-8), a device batch, an empty slice and a failing stream, dumped, loaded back with
// the portable loader and compared field by field and byte by byte, dumped
// again from the loaded structs (the same bytes), every release counted;
// invalid trees refused with a message, nothing read past a buffer. With a
// directory of LP64 corpus images (`arrow-c-device fixtures`), each image's
// roots are loaded and dumped again: a valid case gives back its image byte
// for byte (a failing stream: the batches before the failure, the errno and
// the message), an invalid-* case is refused.
// Also compiled by emcc (test/c/dump.sh --wasm): 4-byte pointers, wasm32 images.
// Prints "c-dump: N passed, M failed" (and "c-dump: corpus ..." with a directory).
// Longer than 400 lines: the hand-built trees and the corpus pass share the
// loader round trip and its checks; apart they would repeat them.

#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fixtures/acd_dump.h"
#include "fixtures/acd_fixture.h"

// Metadata {"k": "v\xff"}: the value is not UTF-8 (the spec allows bytes).
static const char kMetadata[] = {1, 0, 0, 0, 1, 0, 0, 0, 'k', 2, 0, 0, 0, 'v', (char)0xff};

static int32_t* Int32s(struct ArrowArray* a, int64_t i, int64_t n) {
  return (int32_t*)AcdArrayAllocateBuffer(a, i, n * 4);
}

// struct<a: int32 (a slice at offset 2), b: utf8 (a null), c: dictionary<int8, utf8>>, 3 rows.
static void Build(struct ArrowSchema* s, struct ArrowArray* a) {
  struct AcdError e;
  CHECK_OK(AcdSchemaInit(s, "+s", "", kMetadata, 0, 3, 0, &e), &e);
  CHECK_OK(AcdSchemaInit(s->children[0], "i", "a", NULL, ARROW_FLAG_NULLABLE, 0, 0, &e), &e);
  CHECK_OK(AcdSchemaInit(s->children[1], "u", "b", kMetadata, ARROW_FLAG_NULLABLE, 0, 0, &e), &e);
  CHECK_OK(AcdSchemaInit(s->children[2], "c", "c", NULL, 0, 0, 1, &e), &e);
  CHECK_OK(AcdSchemaInit(s->children[2]->dictionary, "u", "", NULL, ARROW_FLAG_NULLABLE, 0, 0, &e), &e);
  CHECK_OK(AcdArrayInit(a, 3, 0, 0, 1, 3, 0, &e), &e);
  CHECK_OK(AcdArrayInit(a->children[0], 3, 0, 2, 2, 0, 0, &e), &e);
  int32_t* v = Int32s(a->children[0], 1, 5);
  for (int i = 0; i < 5; i++) v[i] = 10 * i;
  CHECK_OK(AcdArrayInit(a->children[1], 3, 1, 0, 3, 0, 0, &e), &e);
  *(uint8_t*)AcdArrayAllocateBuffer(a->children[1], 0, 1) = 5;  // rows 0 and 2 valid
  int32_t* o = Int32s(a->children[1], 1, 4);
  o[0] = 0, o[1] = 2, o[2] = 2, o[3] = 5;
  memcpy(AcdArrayAllocateBuffer(a->children[1], 2, 5), "xyabc", 5);
  CHECK_OK(AcdArrayInit(a->children[2], 3, 0, 0, 2, 0, 1, &e), &e);
  memcpy(AcdArrayAllocateBuffer(a->children[2], 1, 3), "\1\0\1", 3);
  CHECK_OK(AcdArrayInit(a->children[2]->dictionary, 2, 0, 0, 3, 0, 0, &e), &e);
  o = Int32s(a->children[2]->dictionary, 1, 3);
  o[0] = 0, o[1] = 3, o[2] = 6;
  memcpy(AcdArrayAllocateBuffer(a->children[2]->dictionary, 2, 6), "redblu", 6);
}

static int Same(const void* x, const void* y, size_t n) {
  return x != NULL && y != NULL && memcmp(x, y, n) == 0;
}

// The loaded batch is the built one, field by field and byte by byte.
static void CompareBatch(const struct ArrowSchema* s, const struct ArrowArray* a,
                         const struct ArrowSchema* ls, const struct ArrowArray* la) {
  CHECK(strcmp(ls->format, "+s") == 0 && ls->n_children == 3 && la->n_children == 3);
  CHECK(Same(ls->metadata, kMetadata, sizeof(kMetadata)));
  CHECK(Same(ls->children[1]->metadata, kMetadata, sizeof(kMetadata)));
  CHECK(ls->children[0]->metadata == NULL && ls->children[0]->flags == ARROW_FLAG_NULLABLE);
  CHECK(strcmp(ls->children[2]->name, "c") == 0 && strcmp(ls->children[2]->dictionary->format, "u") == 0);
  const struct ArrowArray* x = la->children[0];
  CHECK(x->offset == 2 && x->length == 3 && x->n_buffers == 2 && x->buffers[0] == NULL);
  CHECK(Same(x->buffers[1], a->children[0]->buffers[1], 20));  // from 0 to offset + length
  CHECK((uintptr_t)x->buffers[1] % 64 == 0);
  const struct ArrowArray* u = la->children[1];
  CHECK(u->null_count == 1 && Same(u->buffers[0], a->children[1]->buffers[0], 1));
  CHECK(Same(u->buffers[1], a->children[1]->buffers[1], 16) && Same(u->buffers[2], "xyabc", 5));
  const struct ArrowArray* d = la->children[2]->dictionary;
  CHECK(d != NULL && d->length == 2 && Same(d->buffers[2], "redblu", 6));
  struct AcdError e;
  CHECK_OK(AcdArrayValidate(ls, la, ACD_VALIDATION_FULL, &e), &e);
  (void)s;
}

static uint8_t* Finish(struct AcdDump* d, size_t* size) {
  uint8_t* bytes = NULL;
  struct AcdError e;
  CHECK_OK(AcdDumpFinish(d, &bytes, size, &e), &e);
  return bytes;
}

// Finishes the dump, frees it and loads the image with the loader: the fixture, or NULL (a failed check).
static struct AcdFixture* FinishAndLoad(struct AcdDump* d) {
  size_t size;
  uint8_t* bytes = Finish(d, &size);
  AcdDumpFree(d);
  struct AcdFixture* fx = NULL;
  struct AcdFixtureError fe;
  CHECK(AcdFixtureLoad(bytes, size, &fx, &fe) == 0);
  free(bytes);
  return fx;
}

static void TestBatch(int device) {
  struct ArrowSchema s;
  struct ArrowDeviceArray da;
  struct AcdError e;
  struct AcdDump* d;
  memset(&da, 0, sizeof(da));
  Build(&s, &da.array);
  da.device_id = -1;
  da.device_type = ARROW_DEVICE_CPU;
  CHECK_OK(AcdDumpNew(&d, &e), &e);
  uint32_t root = 99;
  if (device) CHECK_OK(AcdDumpAddDeviceBatch(d, &s, &da, ACD_VALIDATION_FULL, &root, &e), &e);
  else CHECK_OK(AcdDumpAddBatch(d, &s, &da.array, ACD_VALIDATION_FULL, &root, &e), &e);
  CHECK(root == 0 && AcdDumpRootCount(d) == 2);
  size_t size, size2, size3;
  uint8_t* bytes = Finish(d, &size);
  uint8_t* again = Finish(d, &size2);
  CHECK(size == size2 && Same(bytes, again, size));  // the same tree, the same bytes
  free(again);
  AcdDumpFree(d);

  struct AcdFixture* fx = NULL;
  struct AcdFixtureError fe;
  CHECK(AcdFixtureLoad(bytes, size, &fx, &fe) == 0);
  if (fx == NULL) return;
  struct AcdFixtureRoot r0, r1;
  CHECK(AcdFixtureGetRoot(fx, 0, &r0) == 0 && AcdFixtureGetRoot(fx, 1, &r1) == 0);
  CHECK(r0.kind == ACD_FIXTURE_SCHEMA && r1.kind == (device ? ACD_FIXTURE_DEVICE_ARRAY : ACD_FIXTURE_ARRAY) && r1.schema_index == 0);
  struct ArrowSchema* ls = (struct ArrowSchema*)r0.ptr;
  struct ArrowDeviceArray* lda = (struct ArrowDeviceArray*)r1.ptr;
  struct ArrowArray* la = device ? &lda->array : (struct ArrowArray*)r1.ptr;
  CompareBatch(&s, &da.array, ls, la);
  if (device) CHECK(lda->device_id == -1 && lda->device_type == ARROW_DEVICE_CPU && lda->sync_event == NULL);
  // The loaded structs dumped again: byte for byte the same image.
  CHECK_OK(AcdDumpNew(&d, &e), &e);
  if (device) CHECK_OK(AcdDumpAddDeviceBatch(d, ls, lda, ACD_VALIDATION_DEFAULT, NULL, &e), &e);
  else CHECK_OK(AcdDumpAddBatch(d, ls, la, ACD_VALIDATION_DEFAULT, NULL, &e), &e);
  uint8_t* redump = Finish(d, &size3);
  CHECK(size3 == size && Same(redump, bytes, size));
  free(redump);
  AcdDumpFree(d);
  ls->release(ls);
  la->release(la);
  struct AcdFixtureCounts counts;
  AcdFixtureGetCounts(fx, &counts);
  CHECK(counts.nodes_released == counts.nodes && counts.double_releases == 0);
  CHECK(AcdFixtureFree(fx, NULL, 0) == 0);
  free(bytes);
  AcdSchemaRelease(&s);
  AcdArrayRelease(&da.array);
}

// A stream of two int32 batches that fails at the third with EIO.
struct Script {
  int next, released;
};
static int StreamSchema(struct ArrowArrayStream* st, struct ArrowSchema* out) {
  (void)st;
  return AcdSchemaInit(out, "i", "x", NULL, ARROW_FLAG_NULLABLE, 0, 0, NULL);
}
static int StreamNext(struct ArrowArrayStream* st, struct ArrowArray* out) {
  struct Script* s = (struct Script*)st->private_data;
  if (s->next == 2) return EIO;
  int code = AcdArrayInit(out, 2, 0, 0, 2, 0, 0, NULL);
  int32_t* v = Int32s(out, 1, 2);
  v[0] = s->next, v[1] = 100 + s->next++;
  return code;
}
static const char* StreamError(struct ArrowArrayStream* st) {
  return ((struct Script*)st->private_data)->next == 2 ? "no third batch" : NULL;
}
static void StreamRelease(struct ArrowArrayStream* st) {
  ((struct Script*)st->private_data)->released++;
  st->release = NULL;
}

static void TestStream(void) {
  struct Script script = {0, 0};
  struct ArrowArrayStream st = {StreamSchema, StreamNext, StreamError, StreamRelease, &script};
  struct AcdError e;
  struct AcdDump* d;
  CHECK_OK(AcdDumpNew(&d, &e), &e);
  CHECK_OK(AcdDumpAddArrayStream(d, &st, ACD_VALIDATION_FULL, NULL, &e), &e);
  CHECK(script.next == 2 && script.released == 0);  // drained; the stream is still the caller's
  st.release(&st);
  struct AcdFixture* fx = FinishAndLoad(d);
  if (fx == NULL) return;
  struct ArrowArrayStream* ls = (struct ArrowArrayStream*)AcdFixtureRootPointer(fx, 0);
  struct ArrowSchema schema;
  struct ArrowArray batch;
  CHECK(ls != NULL && ls->get_schema(ls, &schema) == 0 && strcmp(schema.format, "i") == 0);
  schema.release(&schema);
  for (int i = 0; i < 2; i++) {
    CHECK(ls->get_next(ls, &batch) == 0 && batch.length == 2);
    CHECK(((const int32_t*)batch.buffers[1])[1] == 100 + i);
    batch.release(&batch);
  }
  CHECK(ls->get_next(ls, &batch) == EIO && strcmp(ls->get_last_error(ls), "no third batch") == 0);
  ls->release(ls);
  CHECK(AcdFixtureFree(fx, NULL, 0) == 0);
}

// An empty slice: nothing is read, its buffers are zeros sized for a reader
// that reads offsets[offset] (the spec's length + 1 offsets); and its schema
// alone, as a bare root.
static void TestEmpty(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  struct AcdError e;
  struct AcdDump* d;
  CHECK_OK(AcdSchemaInit(&s, "u", "", NULL, 0, 0, 0, &e), &e);
  CHECK_OK(AcdArrayInit(&a, 0, 0, 2, 3, 0, 0, &e), &e);
  int32_t* o = Int32s(&a, 1, 4);
  o[0] = 0, o[1] = 1, o[2] = 3, o[3] = 6;
  memcpy(AcdArrayAllocateBuffer(&a, 2, 6), "abcdef", 6);
  CHECK_OK(AcdDumpNew(&d, &e), &e);
  CHECK_OK(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_FULL, NULL, &e), &e);
  uint32_t bare = 0;
  CHECK_OK(AcdDumpAddSchema(d, &s, &bare, &e), &e);  // a bare schema: root 2, of kind 1
  CHECK(bare == 2 && AcdDumpRootCount(d) == 3);
  struct AcdFixture* fx = FinishAndLoad(d);
  if (fx != NULL) {
    struct AcdFixtureRoot r2;
    CHECK(AcdFixtureGetRoot(fx, 2, &r2) == 0 && r2.kind == ACD_FIXTURE_SCHEMA && r2.schema_index == ACD_FIXTURE_NO_SCHEMA);
    struct ArrowSchema* bs = (struct ArrowSchema*)r2.ptr;
    CHECK(strcmp(bs->format, "u") == 0 && bs->n_children == 0 && bs->dictionary == NULL);
    bs->release(bs);
    struct ArrowSchema* ls = (struct ArrowSchema*)AcdFixtureRootPointer(fx, 0);
    struct ArrowArray* la = (struct ArrowArray*)AcdFixtureRootPointer(fx, 1);
    static const int32_t kZeros[4] = {0, 0, 0, 0};
    CHECK(la->length == 0 && la->offset == 2 && la->buffers[0] == NULL && la->buffers[2] != NULL);
    CHECK(Same(la->buffers[1], kZeros, sizeof(kZeros)));
    CHECK_OK(AcdArrayValidate(ls, la, ACD_VALIDATION_FULL, &e), &e);
    ls->release(ls);
    la->release(la);
    CHECK(AcdFixtureFree(fx, NULL, 0) == 0);
  }
  AcdSchemaRelease(&s);
  AcdArrayRelease(&a);
}

// Invalid trees: refused with the validator's message, the image unchanged.
static void TestRefused(void) {
  struct ArrowSchema s;
  struct ArrowArray a;
  struct ArrowDeviceArray da;
  struct AcdError e;
  struct AcdDump* d;
  CHECK_OK(AcdDumpNew(&d, &e), &e);
  CHECK_OK(AcdSchemaInit(&s, "u", "", NULL, 0, 0, 0, &e), &e);
  CHECK_OK(AcdArrayInit(&a, 3, 0, 0, 3, 0, 0, &e), &e);
  int32_t* o = Int32s(&a, 1, 4);
  o[0] = 0, o[1] = 4, o[2] = 2, o[3] = 6;
  memcpy(AcdArrayAllocateBuffer(&a, 2, 6), "abcdef", 6);
  CHECK_FAILS(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_FULL, NULL, &e), EINVAL, &e, "acd_dump: root.buffers[1]: expected offsets");
  CHECK_FAILS(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_MINIMAL, NULL, &e), EINVAL, &e, "DEFAULT (2) or FULL (3)");
  struct ArrowSchema is;
  struct ArrowArray big;  // natively no buffer size is known: the limit refuses 2^42 bytes unread
  CHECK_OK(AcdSchemaInit(&is, "i", "", NULL, 0, 0, 0, &e), &e);
  CHECK_OK(AcdArrayInit(&big, 3, 0, 0, 2, 0, 0, &e), &e);
  Int32s(&big, 1, 3);
  big.length = (int64_t)1 << 40;
#if defined(__wasm__)
  // On wasm the validator sees the range pass the end of the memory first.
  CHECK_FAILS(AcdDumpAddBatch(d, &is, &big, ACD_VALIDATION_FULL, NULL, &e), EINVAL, &e, "expected 1099511627776 values");
#else
  CHECK_FAILS(AcdDumpAddBatch(d, &is, &big, ACD_VALIDATION_FULL, NULL, &e), EFBIG, &e, "limit");
#endif
  big.length = 3;
  AcdSchemaRelease(&is);
  AcdArrayRelease(&big);
  a.length = 3;
  a.n_buffers = 2;
  CHECK_FAILS(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_DEFAULT, NULL, &e), EINVAL, &e, "n_buffers: expected 3");
  a.n_buffers = 3;
  memset(&da, 0, sizeof(da));
  da.array = a;
  da.device_type = ARROW_DEVICE_CUDA;
  CHECK_FAILS(AcdDumpAddDeviceBatch(d, &s, &da, ACD_VALIDATION_FULL, NULL, &e), ENOTSUP, &e, "ARROW_DEVICE_CPU");
  s.format = "+q";
  CHECK_FAILS(AcdDumpAddSchema(d, &s, NULL, &e), EINVAL, &e, "acd_dump: schema");
  s.format = "u";
  CHECK(AcdDumpRootCount(d) == 0);
  AcdDumpSetMaxBytes(d, 700);  // a limit refuses the bytes past it, and the image stays as it was
  o[1] = 1, o[2] = 2;
  CHECK_OK(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_FULL, NULL, &e), &e);
  CHECK_FAILS(AcdDumpAddBatch(d, &s, &a, ACD_VALIDATION_FULL, NULL, &e), EFBIG, &e, "limit of 700 bytes");
  CHECK(AcdDumpRootCount(d) == 2);
  AcdDumpFree(d);
  AcdSchemaRelease(&s);
  AcdArrayRelease(&a);
}

// ---- the corpus ---------------------------------------------------------------

static long g_images, g_same, g_trimmed, g_failing, g_refused, g_skipped, g_on_device;

static uint8_t* ReadFile(const char* path, size_t* size) {
  FILE* f = fopen(path, "rb");
  if (f == NULL) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t* bytes = (uint8_t*)malloc(*size + 1);
  if (bytes != NULL && fread(bytes, 1, *size, f) != *size) {
    free(bytes);
    bytes = NULL;
  }
  fclose(f);
  return bytes;
}

// Dumps the roots of a loaded image (releasing them): a batch, or an array
// stream; -1 for the roots the dumper does not take (device and async streams).
static int DumpFixture(struct AcdFixture* fx, struct AcdDump* d, struct AcdError* e) {
  struct AcdFixtureRoot r0, r1;
  int code = -1;
  AcdFixtureGetRoot(fx, 0, &r0);
  if (AcdFixtureRootCount(fx) == 2 && AcdFixtureGetRoot(fx, 1, &r1) == 0) {
    struct ArrowArray* a = r1.kind == ACD_FIXTURE_ARRAY ? (struct ArrowArray*)r1.ptr : &((struct ArrowDeviceArray*)r1.ptr)->array;
    if (r1.kind == ACD_FIXTURE_ARRAY) code = AcdDumpAddBatch(d, r0.ptr, a, ACD_VALIDATION_FULL, NULL, e);
    else code = AcdDumpAddDeviceBatch(d, r0.ptr, r1.ptr, ACD_VALIDATION_FULL, NULL, e);
    ((struct ArrowSchema*)r0.ptr)->release(r0.ptr);
    a->release(a);
  } else if (r0.kind == ACD_FIXTURE_ARRAY_STREAM) {
    struct ArrowArrayStream* st = (struct ArrowArrayStream*)r0.ptr;
    code = AcdDumpAddArrayStream(d, st, ACD_VALIDATION_FULL, NULL, e);
    st->release(st);
  } else if (r0.kind == ACD_FIXTURE_DEVICE_ARRAY_STREAM) {
    struct ArrowDeviceArrayStream* st = (struct ArrowDeviceArrayStream*)r0.ptr;
    st->release(st);
  }
  return code;
}

// Loads bytes, dumps their roots again into *out; the loader's problems checked.
static int Redump(const uint8_t* bytes, size_t size, uint8_t** out, size_t* out_size, struct AcdError* e) {
  struct AcdFixture* fx = NULL;
  struct AcdFixtureError fe;
  struct AcdDump* d = NULL;
  char report[1024];
  *out = NULL;
  CHECK(AcdFixtureLoad(bytes, size, &fx, &fe) == 0);
  if (fx == NULL) return -1;
  CHECK_OK(AcdDumpNew(&d, e), e);
  int code = DumpFixture(fx, d, e);
  if (code == 0) *out = Finish(d, out_size);
  int problems = AcdFixtureFree(fx, report, sizeof(report));
  CHECK(problems == 0);
  if (problems != 0) fprintf(stderr, "  %s\n", report);
  AcdDumpFree(d);
  return code;
}

static void CorpusImage(const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  size_t size = 0, dumped_size = 0, again_size = 0;
  uint8_t* file = ReadFile(path, &size);
  uint8_t *dumped = NULL, *again = NULL;
  struct AcdError e;
  e.message[0] = '\0';
  CHECK(file != NULL);
  if (file == NULL) return;
  g_images++;
  int code = Redump(file, size, &dumped, &dumped_size, &e);
  if (strncmp(name, "invalid-", 8) == 0) {
    g_refused += code > 0;
    CHECK(code > 0 && strstr(e.message, "acd_dump") != NULL);
    if (code <= 0) fprintf(stderr, "  %s was dumped\n", name);
  } else if (code == -1) {
    g_skipped++;
  } else if (strncmp(name, "on-", 3) == 0) {
    // A batch on a simulated device: the dumper reads host memory, and refuses it by its device_type.
    g_on_device += code == EOPNOTSUPP || code == ENOTSUP;
    CHECK(code > 0 && strstr(e.message, "device_type: expected 1 (ARROW_DEVICE_CPU") != NULL);
    if (code <= 0) fprintf(stderr, "  %s was dumped\n", name);
  } else {
    CHECK_OK(code, &e);
    if (dumped != NULL && dumped_size == size && memcmp(dumped, file, size) == 0) {
      g_same++;
    } else if (dumped != NULL) {
      // The writer keeps a slice's whole buffers, the dumper what a consumer
      // may read (and an empty array's as zeros); a failing stream's script
      // holds its failing batch, never handed out. Either way the dump is a
      // fixed point: dumped again, the same.
      CHECK(Redump(dumped, dumped_size, &again, &again_size, &e) == 0);
      int same = again != NULL && again_size == dumped_size && memcmp(again, dumped, dumped_size) == 0;
      CHECK(same);
      if (!same) fprintf(stderr, "  %s: dumped twice, the images differ\n", name);
      if (strstr(name, "-fail") != NULL) g_failing++;
      else g_trimmed++;
      free(again);
    }
  }
  free(dumped);
  free(file);
}

static int CompareNames(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

static void TestCorpus(const char* dir) {
  DIR* dp = opendir(dir);
  CHECK(dp != NULL);
  if (dp == NULL) return;
  char* names[4096];
  size_t n = 0;
  struct dirent* ent;
  while ((ent = readdir(dp)) != NULL && n < 4096) {
    size_t len = strlen(ent->d_name);
    if (len > 7 && strcmp(ent->d_name + len - 7, ".acdfix") == 0) {
      names[n] = (char*)malloc(len + 1);
      if (names[n] != NULL) memcpy(names[n++], ent->d_name, len + 1);
    }
  }
  closedir(dp);
  qsort(names, n, sizeof(char*), CompareNames);
  for (size_t i = 0; i < n; i++) {
    CorpusImage(dir, names[i]);
    free(names[i]);
  }
  printf("c-dump: corpus %ld images: %ld dumped again byte for byte, %ld rewritten to the bytes read, %ld "
         "failing streams without their failing batch, "
         "%ld invalid refused, %ld on a simulated device refused, %ld not dumped (device and async streams)\n",
         g_images, g_same, g_trimmed, g_failing, g_refused, g_on_device, g_skipped);
}

int main(int argc, char** argv) {
  TestBatch(0);
  TestBatch(1);
  TestStream();
  TestEmpty();
  TestRefused();
  for (int i = 1; i < argc; i++) TestCorpus(argv[i]);
  return CheckSummary("c-dump");
}
