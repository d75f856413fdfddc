// The foreign window (csrc/abi/window.c), natively and on wasm: an array whose
// buffers live in another memory (here a C array standing for another wasm
// module's memory) is validated through shadow structs whose buffer pointers
// are window addresses, at every level, with the errors it would get in this
// memory. Prints "c-window: N passed, M failed".

#include <errno.h>
#include <stdalign.h>
#include <string.h>

#include "check.h"

// The other memory, and how many fetches (and bytes) the window made of it.
static alignas(16) uint8_t g_memory[65536];
static int g_reads = 0;
static size_t g_fetched = 0;

static int ReadOther(uint64_t address, void* dst, size_t n) {
  if (address > sizeof(g_memory) || n > sizeof(g_memory) - address) return 1;
  memcpy(dst, g_memory + address, n);
  g_reads++;
  g_fetched += n;
  return 0;
}

// The window address of byte `at` of the other memory (mapped from origin 0).
static const void* At(uint64_t at) { return (const void*)(ACD_FOREIGN_ADDRESS_BASE + (uintptr_t)at); }

static void NopSchemaRelease(struct ArrowSchema* s) { s->release = NULL; }
static void NopArrayRelease(struct ArrowArray* a) { a->release = NULL; }

static void Schema(struct ArrowSchema* s, const char* format) {
  memset(s, 0, sizeof(*s));
  s->format = format;
  s->flags = ARROW_FLAG_NULLABLE;
  s->release = NopSchemaRelease;
}

static void Array(struct ArrowArray* a, int64_t length, int64_t null_count, int64_t n_buffers,
                  const void** buffers) {
  memset(a, 0, sizeof(*a));
  a->length = length;
  a->null_count = null_count;
  a->n_buffers = n_buffers;
  a->buffers = buffers;
  a->release = NopArrayRelease;
}

static void Put32(uint64_t at, int32_t x) { memcpy(g_memory + at, &x, sizeof(x)); }

// A string array of three slots (the second null) at bytes 64.. of the other memory.
static void TestStrings(void) {
  struct AcdError error;
  struct ArrowSchema s;
  Schema(&s, "u");
  memset(g_memory, 0, sizeof(g_memory));
  g_memory[0] = 0x5;  // validity 101
  Put32(64, 0);
  Put32(68, 3);
  Put32(72, 3);
  Put32(76, 8);
  memcpy(g_memory + 128, "abcd\xc3\xa9z", 7);
  g_memory[135] = 'q';
  const void* buffers[3] = {At(0), At(64), At(128)};
  struct ArrowArray a;
  Array(&a, 3, 1, 3, buffers);

  // Unmapped: nothing of the window is readable, and the message says what it is.
  AcdForeignMap(NULL, 0, 0);
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), EINVAL, &error,
              "root.buffers[0]: expected 3 validity bits (1 bytes), found");
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), EINVAL, &error,
              "(address 0 of the other module's memory, whose checked part ends at 0)");
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_MINIMAL, &error), &error);

  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), &error);
  a.null_count = 0;
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "root.null_count: expected 1 (the 0 bits of the validity bitmap), found 0");
  a.null_count = 1;
  g_memory[133] = 0xff;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));  // a new mapping drops what was cached
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "expected UTF-8 in slot 2 (bytes 3..8), found an invalid sequence at byte 4");
  g_memory[133] = 0xa9;
  Put32(76, 70000);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), EINVAL, &error,
              "root.buffers[2]: expected 70000 bytes");
  Put32(76, 8);

  // Mapped from an origin: window offset 0 is byte 64 of the other memory.
  const void* shifted[3] = {NULL, At(0), At(64)};
  a.buffers = shifted;
  a.null_count = 0;
  AcdForeignMap(ReadOther, 64, sizeof(g_memory) - 64);
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), &error);
  g_memory[133] = 0xff;
  AcdForeignMap(ReadOther, 64, sizeof(g_memory) - 64);
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "expected UTF-8 in slot 2 (bytes 3..8), found an invalid sequence at byte 4");
  g_memory[133] = 0xa9;
  // The last offset past the mapped part.
  const void* past[3] = {NULL, At(sizeof(g_memory) - 64 - 8), At(64)};
  a.buffers = past;
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), EINVAL, &error,
              "(address 65528 of the other module's memory, whose checked part ends at 65536)");
}

// One long string: UTF-8 sequences cut by the 4096-byte chunks and the
// 16 KiB lines are read whole; an invalid byte is found at its place; the
// scan costs one fetch per line.
static void TestLongString(void) {
  struct AcdError error;
  struct ArrowSchema s;
  Schema(&s, "u");
  memset(g_memory, 'a', sizeof(g_memory));
  const int64_t n = 40000;
  Put32(0, 0);
  Put32(4, (int32_t)n);
  for (int64_t cut = 4094; cut < n; cut += 4096) {
    if (cut != 16382) memcpy(g_memory + 64 + cut, "\xf0\x9f\x98\x80", 4);
  }
  memcpy(g_memory + 64 + 16383, "\xe2\x82\xac", 3);
  const void* buffers[3] = {NULL, At(0), At(64)};
  struct ArrowArray a;
  Array(&a, 1, 0, 3, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), &error);
  CHECK(g_reads <= 5);
  g_memory[64 + 33333] = 0x80;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "found an invalid sequence at byte 33333");
}

// Views (inline and in a data buffer), a dense union's type ids, decimals.
static void TestOtherContent(void) {
  struct AcdError error;
  memset(g_memory, 0, sizeof(g_memory));
  struct ArrowSchema s;
  Schema(&s, "vu");
  // View 0 inline "hi"; view 1: 20 bytes of data buffer 0 at offset 8.
  Put32(0, 2);
  memcpy(g_memory + 4, "hi", 2);
  Put32(16, 20);
  memcpy(g_memory + 20, "0123", 4);
  Put32(24, 0);
  Put32(28, 8);
  memcpy(g_memory + 256 + 8, "0123456789abcdefghij", 20);
  int64_t size = 28;
  memcpy(g_memory + 512, &size, sizeof(size));
  const void* buffers[4] = {NULL, At(0), At(256), At(512)};
  struct ArrowArray a;
  Array(&a, 2, 0, 4, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), &error);
  g_memory[22] = 'X';
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "view 1: expected the prefix to equal the first 4 bytes of its data");

  struct ArrowSchema d;
  Schema(&d, "d:5,0");
  int64_t values[4] = {99999, 0, -100000, 0};  // two decimal128 values
  memcpy(g_memory + 1024, values, sizeof(values));
  const void* dbuffers[2] = {NULL, At(1024)};
  Array(&a, 2, 0, 2, dbuffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_FAILS(AcdArrayValidate(&d, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "decimal128(5, 0) value 1 has more than 5 digits");

  struct ArrowSchema u;
  struct ArrowSchema child;
  struct ArrowSchema* children[1] = {&child};
  Schema(&u, "+ud:3");
  u.flags = 0;
  u.n_children = 1;
  u.children = children;
  Schema(&child, "i");
  struct ArrowArray c;
  Put32(2048, 7);
  const void* cbuffers[2] = {NULL, At(2048)};
  Array(&c, 1, 0, 2, cbuffers);
  struct ArrowArray* carrays[1] = {&c};
  g_memory[2100] = 3;
  g_memory[2101] = 4;
  Put32(2104, 0);
  Put32(2108, 0);
  const void* ubuffers[2] = {At(2100), At(2104)};
  Array(&a, 2, 0, 2, ubuffers);
  a.n_children = 1;
  a.children = carrays;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_FAILS(AcdArrayValidate(&u, &a, ACD_VALIDATION_FULL, &error), EINVAL, &error,
              "expected type_ids[1] to be one of the ids in '+ud:3', found 4");
  g_memory[2101] = 3;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK_OK(AcdArrayValidate(&u, &a, ACD_VALIDATION_FULL, &error), &error);
}

// At DEFAULT the validator reads an offsets buffer's first and last entries,
// far apart: one fetch of the first line's size (64 bytes) each, not a scan,
// and not the bytes between them (issue 14: two calls cost less than those).
static void TestFarReads(void) {
  struct AcdError error;
  struct ArrowSchema s;
  Schema(&s, "u");
  memset(g_memory, 0, sizeof(g_memory));
  const int64_t n = 10000;  // offsets at 0..40004, all 0: empty strings
  const void* buffers[3] = {NULL, At(0), At(50000)};
  struct ArrowArray a;
  Array(&a, n, 0, 3, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  g_fetched = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), &error);
  CHECK(g_reads == 2);
  CHECK(g_fetched <= 2 * 64);
  // Two entries a thousand apart: a fetch each, of 64 bytes.
  Array(&a, 1000, 0, 3, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  g_fetched = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), &error);
  CHECK(g_reads == 2);
  CHECK(g_fetched <= 2 * 64);
  // Two entries ten apart: one fetch holds both.
  Array(&a, 10, 0, 3, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), &error);
  CHECK(g_reads == 1);
  // A scan of them all at FULL: lines that double, a few fetches for 40 KB.
  Array(&a, n, 0, 3, buffers);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_FULL, &error), &error);
  CHECK(g_reads <= 12);
}

// Reads through AcdLoad: a value across two lines, past the mapped part (zeros).
static void TestLoads(void) {
  for (int i = 0; i < 64; i++) g_memory[16352 + i] = (uint8_t)i;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  int64_t x = AcdReadInt(At(16380), 0, 8);
  int64_t expected;
  memcpy(&expected, g_memory + 16380, sizeof(expected));
  CHECK(x == expected);
  CHECK(AcdLoadU8(At(16384)) == 32);
  AcdForeignMap(ReadOther, 0, 100);
  CHECK(!AcdAddressRangeValid(At(96), 8));
  CHECK(AcdAddressRangeValid(At(92), 8));
  AcdForeignMap(NULL, 0, 0);
  CHECK(!AcdAddressRangeValid(At(0), 1));
  // Host memory is read as it always was.
  uint8_t host[3] = {1, 2, 3};
  CHECK(AcdLoadU8(host + 2) == 3);
}

// Preloaded entries (issue 14): a read within one is served from it, with
// no call of the reader; anything else goes to the reader as before.
static void TestPreloads(void) {
  struct AcdError error;
  struct ArrowSchema s;
  Schema(&s, "u");
  memset(g_memory, 0, sizeof(g_memory));
  g_memory[0] = 0x7;
  Put32(64, 0);
  Put32(68, 2);
  Put32(72, 3);
  Put32(76, 5);
  memcpy(g_memory + 128, "abcde", 5);
  const void* buffers[3] = {At(0), At(64), At(128)};
  struct ArrowArray a;
  Array(&a, 3, 0, 3, buffers);
  int32_t first = 0;
  int32_t last = 5;

  // The first and the last offset preloaded: 'default' reads nothing else of the buffers' content.
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK(AcdForeignPreload(64, &first, 4) == 0);
  CHECK(AcdForeignPreload(76, &last, 4) == 0);
  g_reads = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), &error);
  CHECK(g_reads == 0);
  // An entry is what the read gets, even where the memory says otherwise: the embedder copies the bytes.
  int32_t wrong = 70000;
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK(AcdForeignPreload(64, &first, 4) == 0);
  CHECK(AcdForeignPreload(76, &wrong, 4) == 0);
  CHECK_FAILS(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), EINVAL, &error,
              "root.buffers[2]: expected 70000 bytes");
  // A new mapping drops them: the reads go to the memory again (one line holds both offsets).
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  g_reads = 0;
  CHECK_OK(AcdArrayValidate(&s, &a, ACD_VALIDATION_DEFAULT, &error), &error);
  CHECK(g_reads == 1);

  // A read the entry does not hold whole goes to the reader.
  uint8_t x[8];
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  CHECK(AcdForeignPreload(64, &first, 4) == 0);
  g_reads = 0;
  AcdLoad(At(64), x, 8);
  CHECK(g_reads == 1);
  CHECK(memcmp(x, g_memory + 64, 8) == 0);
  g_reads = 0;
  AcdLoad(At(66), x, 2);
  CHECK(g_reads == 0);

  // Refused: no bytes, more than 8, past the mapped size, a full table.
  CHECK(AcdForeignPreload(64, &first, 0) != 0);
  CHECK(AcdForeignPreload(64, x, 9) != 0);
  CHECK(AcdForeignPreload(sizeof(g_memory) - 2, &first, 4) != 0);
  AcdForeignMap(ReadOther, 0, sizeof(g_memory));
  for (int k = 0; k < ACD_FOREIGN_PRELOADS; k++) CHECK(AcdForeignPreload((uint64_t)k * 8, g_memory + k * 8, 8) == 0);
  CHECK(AcdForeignPreload(1024, g_memory + 1024, 4) != 0);

  // Written in place: entries of no size, of more than 8 bytes or past the mapped size are never used.
  AcdForeignMap(ReadOther, 0, 1024);
  struct AcdForeignPreload* table = AcdForeignPreloadTable();
  memset(table, 0, 3 * sizeof(*table));
  table[0].at = 76;
  table[0].size = 12;
  memcpy(table[0].bytes, &wrong, 4);
  table[1].at = 76;
  table[1].size = 0;
  memcpy(table[1].bytes, &wrong, 4);
  table[2].at = 2000;
  table[2].size = 4;
  AcdForeignPreloaded(3);
  g_reads = 0;
  int32_t got = 0;
  AcdLoad(At(76), &got, 4);
  CHECK(got == 5);
  CHECK(g_reads == 1);
  // A count beyond the table is the table.
  AcdForeignPreloaded(1000);
  AcdForeignMap(NULL, 0, 0);
}

int main(void) {
  TestStrings();
  TestLongString();
  TestOtherContent();
  TestFarReads();
  TestLoads();
  TestPreloads();
  return CheckSummary("c-window");
}
