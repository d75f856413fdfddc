// Writes the seed corpus of the native validator fuzzer (test/fuzz/corpus/)
// from valid struct trees built here in the image format of image.h, with
// the native layout taken from the compiler (no offset literals). Run by
// scripts/fuzz/gen-seeds.sh; the corpus is its output, checked in.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_device.h"
#include "image.h"

struct Img {
  unsigned char b[16384];
  uint64_t n;
};

static uint64_t put(struct Img* img, const void* p, size_t size, size_t align) {
  img->n = (img->n + align - 1) / align * align;
  if (img->n + size > sizeof(img->b)) abort();
  uint64_t at = img->n;
  memcpy(img->b + at, p, size);
  img->n += size;
  return at;
}

#define PTR(off) ((void*)(uintptr_t)(off))

static uint64_t str(struct Img* img, const char* s) { return s == NULL ? 0 : put(img, s, strlen(s) + 1, 1); }

// A release "function": any non-NULL address; the validator never calls it.
static uint64_t release_at;

static uint64_t ptrs(struct Img* img, int n, const uint64_t* offs) {
  if (n == 0) return 0;
  void* p[16];
  for (int i = 0; i < n; i++) p[i] = PTR(offs[i]);
  return put(img, p, (size_t)n * sizeof(void*), sizeof(void*));
}

static uint64_t schema(struct Img* img, const char* format, const char* name, uint64_t metadata,
                       int64_t flags, int n, const uint64_t* children, uint64_t dictionary) {
  struct ArrowSchema s;
  memset(&s, 0, sizeof(s));
  s.format = PTR(str(img, format));
  s.name = PTR(str(img, name));
  s.metadata = PTR(metadata);
  s.flags = flags;
  s.n_children = n;
  s.children = PTR(ptrs(img, n, children));
  s.dictionary = PTR(dictionary);
  s.release = (void (*)(struct ArrowSchema*))(uintptr_t)release_at;
  return put(img, &s, sizeof(s), 8);
}

static uint64_t array(struct Img* img, int64_t length, int64_t null_count, int64_t offset, int n_buffers,
                      const uint64_t* buffers, int n, const uint64_t* children, uint64_t dictionary) {
  struct ArrowArray a;
  memset(&a, 0, sizeof(a));
  a.length = length;
  a.null_count = null_count;
  a.offset = offset;
  a.n_buffers = n_buffers;
  a.n_children = n;
  a.buffers = PTR(ptrs(img, n_buffers, buffers));
  a.children = PTR(ptrs(img, n, children));
  a.dictionary = PTR(dictionary);
  a.release = (void (*)(struct ArrowArray*))(uintptr_t)release_at;
  return put(img, &a, sizeof(a), 8);
}

static uint64_t buf(struct Img* img, const void* p, size_t size) { return put(img, p, size, 8); }

// Metadata {"k": "v", "origin": "seed"} in the C Data Interface encoding.
static uint64_t metadata(struct Img* img) {
  unsigned char m[64];
  size_t n = 0;
  const char* kv[] = {"k", "v", "origin", "seed"};
  int32_t count = 2;
  memcpy(m + n, &count, 4), n += 4;
  for (int i = 0; i < 4; i++) {
    int32_t len = (int32_t)strlen(kv[i]);
    memcpy(m + n, &len, 4), n += 4;
    memcpy(m + n, kv[i], (size_t)len), n += (size_t)len;
  }
  return put(img, m, n, 4);
}

static void begin(struct Img* img) {
  memset(img, 0, sizeof(*img));
  struct AcdFuzzHeader h = {0, 0, 0};
  put(img, &h, sizeof(h), 8);
  uint64_t fn = 0;
  release_at = put(img, &fn, sizeof(fn), 8);
}

static void finish(struct Img* img, const char* dir, const char* name, uint64_t s, uint64_t a, uint64_t flags) {
  struct AcdFuzzHeader h = {s, a, flags};
  memcpy(img->b, &h, sizeof(h));
  char path[512];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL || fwrite(img->b, 1, img->n, f) != img->n || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

static const uint8_t valid5[8] = {0x1b};  // 1,1,0,1,1: two nulls
static const int32_t ints[5] = {1, 2, 0, 4, 5};
static const int32_t offsets[6] = {0, 1, 3, 3, 6, 8};
static const char text[8] = {'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'};

// A leaf int32 column "i" with two nulls.
static uint64_t int_array(struct Img* img, int64_t length, int64_t offset) {
  uint64_t b[2] = {buf(img, valid5, 8), buf(img, ints, sizeof(ints))};
  return array(img, length, offset == 0 ? 1 : 0, offset, 2, b, 0, NULL, 0);
}

static uint64_t utf8_array(struct Img* img, int64_t length, int64_t offset) {
  uint64_t b[3] = {0, buf(img, offsets, sizeof(offsets)), buf(img, text, sizeof(text))};
  return array(img, length, 0, offset, 3, b, 0, NULL, 0);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: gen_seeds <corpus dir>\n");
    return 2;
  }
  const char* dir = argv[1];
  struct Img img;

  begin(&img);
  finish(&img, dir, "int32-nulls", schema(&img, "i", "x", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0), int_array(&img, 5, 0), 0);

  begin(&img);
  finish(&img, dir, "utf8-sliced", schema(&img, "u", "s", 0, 0, 0, NULL, 0), utf8_array(&img, 4, 1), 0);

  {  // A record batch: struct<id: int32, name: utf8> with schema metadata.
    begin(&img);
    uint64_t sc[2] = {schema(&img, "i", "id", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0), schema(&img, "u", "name", 0, 0, 0, NULL, 0)};
    uint64_t s = schema(&img, "+s", "", metadata(&img), 0, 2, sc, 0);
    uint64_t ac[2] = {int_array(&img, 5, 0), utf8_array(&img, 5, 0)};
    uint64_t none[1] = {0};
    finish(&img, dir, "struct-batch", s, array(&img, 5, 0, 0, 1, none, 2, ac, 0), 0);
  }
  {  // The same batch as a CPU ArrowDeviceArray.
    begin(&img);
    uint64_t sc[2] = {schema(&img, "i", "id", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0), schema(&img, "u", "name", 0, 0, 0, NULL, 0)};
    uint64_t s = schema(&img, "+s", "", 0, 0, 2, sc, 0);
    uint64_t ac[2] = {int_array(&img, 5, 0), utf8_array(&img, 5, 0)};
    uint64_t none[1] = {0};
    uint64_t a = array(&img, 5, 0, 0, 1, none, 2, ac, 0);
    struct ArrowDeviceArray d;
    memset(&d, 0, sizeof(d));
    memcpy(&d.array, img.b + a, sizeof(d.array));
    d.device_id = -1;
    d.device_type = ARROW_DEVICE_CPU;
    finish(&img, dir, "device-batch", s, put(&img, &d, sizeof(d), 8), ACD_FUZZ_DEVICE_ARRAY);
  }
  {  // list<int32>: offsets 0,1,3,3,5 over the int column.
    begin(&img);
    uint64_t sc[1] = {schema(&img, "i", "item", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0)};
    uint64_t s = schema(&img, "+l", "l", 0, ARROW_FLAG_NULLABLE, 1, sc, 0);
    static const int32_t lo[5] = {0, 1, 3, 3, 5};
    uint64_t ac[1] = {int_array(&img, 5, 0)};
    uint64_t b[2] = {0, buf(&img, lo, sizeof(lo))};
    finish(&img, dir, "list-int32", s, array(&img, 4, 0, 0, 2, b, 1, ac, 0), 0);
  }
  {  // dictionary<int8 → utf8>
    begin(&img);
    uint64_t s = schema(&img, "c", "d", 0, ARROW_FLAG_NULLABLE, 0, NULL, schema(&img, "u", NULL, 0, 0, 0, NULL, 0));
    static const int8_t idx[6] = {0, 1, 2, 0, 4, 3};
    uint64_t b[2] = {0, buf(&img, idx, sizeof(idx))};
    finish(&img, dir, "dictionary", s, array(&img, 6, 0, 0, 2, b, 0, NULL, utf8_array(&img, 5, 0)), 0);
  }
  {  // Sparse and dense unions of int32 and utf8.
    for (int dense = 0; dense < 2; dense++) {
      begin(&img);
      uint64_t sc[2] = {schema(&img, "i", "a", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0), schema(&img, "u", "b", 0, 0, 0, NULL, 0)};
      uint64_t s = schema(&img, dense ? "+ud:0,1" : "+us:0,1", "un", 0, 0, 2, sc, 0);
      static const int8_t ids[5] = {0, 1, 0, 1, 1};
      static const int32_t uo[5] = {0, 0, 1, 1, 2};
      uint64_t ac[2] = {int_array(&img, 5, 0), utf8_array(&img, 5, 0)};
      uint64_t b[2] = {buf(&img, ids, sizeof(ids)), dense ? buf(&img, uo, sizeof(uo)) : 0};
      finish(&img, dir, dense ? "union-dense" : "union-sparse", s, array(&img, 5, 0, 0, dense ? 2 : 1, b, 2, ac, 0), 0);
    }
  }
  {  // run_end_encoded<int32, int32>: runs ending at 2, 3, 5.
    begin(&img);
    uint64_t sc[2] = {schema(&img, "i", "run_ends", 0, 0, 0, NULL, 0), schema(&img, "i", "values", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0)};
    uint64_t s = schema(&img, "+r", "ree", 0, 0, 2, sc, 0);
    static const int32_t ends[3] = {2, 3, 5};
    uint64_t rb[1] = {0};
    uint64_t re = array(&img, 3, 0, 0, 2, (uint64_t[]){0, buf(&img, ends, sizeof(ends))}, 0, NULL, 0);
    uint64_t ac[2] = {re, int_array(&img, 3, 0)};
    finish(&img, dir, "run-end-encoded", s, array(&img, 5, 0, 0, 0, rb, 2, ac, 0), 0);
  }
  {  // fixed_size_list<int32>[2] and fixed_size_binary(3), bool, decimal, timestamp.
    begin(&img);
    uint64_t sc[1] = {schema(&img, "i", "item", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0)};
    uint64_t s = schema(&img, "+w:2", "fsl", 0, 0, 1, sc, 0);
    uint64_t ac[1] = {int_array(&img, 5, 0)};
    uint64_t b[1] = {0};
    finish(&img, dir, "fixed-size-list", s, array(&img, 2, 0, 0, 1, b, 1, ac, 0), 0);

    static const uint8_t bytes[24] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24};
    const char* formats[] = {"w:3", "b", "d:10,2", "tsu:UTC", "l", "e"};
    const char* names[] = {"fixed-binary", "bool", "decimal128", "timestamp", "int64", "float16"};
    const int64_t lengths[] = {5, 5, 1, 3, 3, 5};
    for (int i = 0; i < 6; i++) {
      begin(&img);
      uint64_t s1 = schema(&img, formats[i], names[i], 0, ARROW_FLAG_NULLABLE, 0, NULL, 0);
      uint64_t b1[2] = {buf(&img, valid5, 8), buf(&img, bytes, sizeof(bytes))};
      finish(&img, dir, names[i], s1, array(&img, lengths[i], -1, 0, 2, b1, 0, NULL, 0), 0);
    }
  }
  {  // map<utf8, int32>
    begin(&img);
    uint64_t kv[2] = {schema(&img, "u", "key", 0, 0, 0, NULL, 0), schema(&img, "i", "value", 0, ARROW_FLAG_NULLABLE, 0, NULL, 0)};
    uint64_t entries = schema(&img, "+s", "entries", 0, 0, 2, kv, 0);
    uint64_t s = schema(&img, "+m", "m", 0, ARROW_FLAG_NULLABLE, 1, &entries, 0);
    static const int32_t mo[3] = {0, 2, 5};
    uint64_t ec[2] = {utf8_array(&img, 5, 0), int_array(&img, 5, 0)};
    uint64_t none[1] = {0};
    uint64_t e = array(&img, 5, 0, 0, 1, none, 2, ec, 0);
    uint64_t b[2] = {0, buf(&img, mo, sizeof(mo))};
    finish(&img, dir, "map", s, array(&img, 2, 0, 0, 2, b, 1, &e, 0), 0);
  }
  return 0;
}
