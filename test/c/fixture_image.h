// A tiny fixture image writer for test/c/test_fixture.c, following
// docs/fixtures.md for this process's pointer width: structs are laid out by
// the compiler (offsetof), pointer fields hold body offsets and are listed in
// the relocation table, releases and stream callbacks in the callback table.
// Independent of the TS writer, so that the loader is tested against the
// document, not against one implementation of it.

#ifndef ACD_TEST_FIXTURE_IMAGE_H_INCLUDED
#define ACD_TEST_FIXTURE_IMAGE_H_INCLUDED

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_c_device.h"

// Each test program uses some of these functions.
#if defined(__GNUC__) || defined(__clang__)
#define IMG_FN static __attribute__((unused))
#else
#define IMG_FN static
#endif

#define IMG_BODY 65536
#define IMG_MAX 1024

struct Img {
  unsigned char body[IMG_BODY];
  uint64_t used;
  uint64_t relocs[IMG_MAX];
  uint32_t n_relocs;
  uint64_t cb_off[IMG_MAX];
  uint32_t cb_kind[IMG_MAX];
  uint32_t n_cbs;
  uint32_t root_kind[64], root_schema[64];
  uint64_t root_off[64], root_script[64];
  uint32_t n_roots;
};

IMG_FN void ImgInit(struct Img* img) {
  memset(img, 0, sizeof *img);
  img->used = 64;  // offset 0 stands for NULL
}

IMG_FN uint64_t ImgAlloc(struct Img* img, uint64_t size, uint64_t align) {
  uint64_t off = (img->used + align - 1) / align * align;
  img->used = off + size;
  return off;
}

IMG_FN void ImgPut(struct Img* img, uint64_t off, uint64_t v, int n) {
  int i;
  for (i = 0; i < n; i++) img->body[off + i] = (unsigned char)(v >> (8 * i));
}

// A pointer field at body offset `field` holding image address `target` (0: NULL).
IMG_FN void ImgPtr(struct Img* img, uint64_t field, uint64_t target) {
  ImgPut(img, field, target, (int)sizeof(void*));
  img->relocs[img->n_relocs++] = field;
}

IMG_FN void ImgCallback(struct Img* img, uint64_t field, uint32_t behaviour) {
  img->cb_off[img->n_cbs] = field;
  img->cb_kind[img->n_cbs++] = behaviour;
}

IMG_FN uint64_t ImgRoot(struct Img* img, uint32_t kind, uint32_t schema, uint64_t off, uint64_t script) {
  img->root_kind[img->n_roots] = kind;
  img->root_schema[img->n_roots] = schema;
  img->root_off[img->n_roots] = off;
  img->root_script[img->n_roots] = script;
  return img->n_roots++;
}

IMG_FN uint64_t ImgString(struct Img* img, const char* s) {
  uint64_t off = ImgAlloc(img, strlen(s) + 1, 1);
  memcpy(img->body + off, s, strlen(s) + 1);
  return off;
}

IMG_FN uint64_t ImgBuffer(struct Img* img, const void* bytes, uint64_t size) {
  uint64_t off = ImgAlloc(img, size, 64);
  memcpy(img->body + off, bytes, size);
  return off;
}

// An array of n pointers to the given targets.
IMG_FN uint64_t ImgPointers(struct Img* img, int64_t n, const uint64_t* targets) {
  uint64_t off = ImgAlloc(img, (uint64_t)n * sizeof(void*), 8);
  int64_t i;
  for (i = 0; i < n; i++) ImgPtr(img, off + (uint64_t)i * sizeof(void*), targets[i]);
  return off;
}

#define F(T, f) ((uint64_t)offsetof(struct T, f))

IMG_FN uint64_t ImgSchema(struct Img* img, const char* format, const char* name, int64_t n_children,
                          const uint64_t* children, uint64_t dictionary) {
  uint64_t s = ImgAlloc(img, sizeof(struct ArrowSchema), 8);
  ImgPtr(img, s + F(ArrowSchema, format), ImgString(img, format));
  ImgPtr(img, s + F(ArrowSchema, name), name ? ImgString(img, name) : 0);
  ImgPtr(img, s + F(ArrowSchema, metadata), 0);
  ImgPut(img, s + F(ArrowSchema, flags), 2, 8);
  ImgPut(img, s + F(ArrowSchema, n_children), (uint64_t)n_children, 8);
  ImgPtr(img, s + F(ArrowSchema, children), n_children ? ImgPointers(img, n_children, children) : 0);
  ImgPtr(img, s + F(ArrowSchema, dictionary), dictionary);
  ImgCallback(img, s + F(ArrowSchema, release), 1);
  ImgPtr(img, s + F(ArrowSchema, private_data), 0);
  return s;
}

// An array at `s` (allocated by the caller: inside an ArrowDeviceArray, or 0 for a new one).
IMG_FN uint64_t ImgArrayAt(struct Img* img, uint64_t s, int64_t length, int64_t null_count, int64_t n_buffers,
                           const uint64_t* buffers, int64_t n_children, const uint64_t* children, uint64_t dictionary) {
  if (s == 0) s = ImgAlloc(img, sizeof(struct ArrowArray), 8);
  ImgPut(img, s + F(ArrowArray, length), (uint64_t)length, 8);
  ImgPut(img, s + F(ArrowArray, null_count), (uint64_t)null_count, 8);
  ImgPut(img, s + F(ArrowArray, n_buffers), (uint64_t)n_buffers, 8);
  ImgPut(img, s + F(ArrowArray, n_children), (uint64_t)n_children, 8);
  ImgPtr(img, s + F(ArrowArray, buffers), n_buffers ? ImgPointers(img, n_buffers, buffers) : 0);
  ImgPtr(img, s + F(ArrowArray, children), n_children ? ImgPointers(img, n_children, children) : 0);
  ImgPtr(img, s + F(ArrowArray, dictionary), dictionary);
  ImgCallback(img, s + F(ArrowArray, release), 2);
  ImgPtr(img, s + F(ArrowArray, private_data), 0);
  return s;
}

// An int32 array of n values 1..n (no validity buffer), plus `add` to each.
IMG_FN uint64_t ImgInt32(struct Img* img, int32_t n, int32_t add) {
  int32_t values[64];
  int32_t i;
  uint64_t buffers[2];
  for (i = 0; i < n; i++) values[i] = i + 1 + add;
  buffers[0] = 0;
  buffers[1] = ImgBuffer(img, values, (uint64_t)n * 4);
  return ImgArrayAt(img, 0, n, 0, 2, buffers, 0, NULL, 0);
}

IMG_FN uint64_t ImgDeviceInt32(struct Img* img, int32_t n, int32_t add) {
  uint64_t d = ImgAlloc(img, sizeof(struct ArrowDeviceArray), 8);
  int32_t values[64];
  int32_t i;
  uint64_t buffers[2];
  for (i = 0; i < n; i++) values[i] = i + 1 + add;
  buffers[0] = 0;
  buffers[1] = ImgBuffer(img, values, (uint64_t)n * 4);
  ImgArrayAt(img, d, n, 0, 2, buffers, 0, NULL, 0);
  ImgPut(img, d + F(ArrowDeviceArray, device_id), (uint64_t)-1, 8);
  ImgPut(img, d + F(ArrowDeviceArray, device_type), ARROW_DEVICE_CPU, 4);
  ImgPtr(img, d + F(ArrowDeviceArray, sync_event), 0);
  return d;
}

IMG_FN uint64_t ImgScript(struct Img* img, uint64_t schema, uint64_t n, const uint64_t* batches, int64_t fail_at,
                          int32_t err, const char* message) {
  uint64_t s = ImgAlloc(img, 48, 8), list = ImgAlloc(img, 8 * n + 8, 8), i;
  for (i = 0; i < n; i++) ImgPut(img, list + 8 * i, batches[i], 8);
  ImgPut(img, s, schema, 8);
  ImgPut(img, s + 8, n, 8);
  ImgPut(img, s + 16, list, 8);
  ImgPut(img, s + 24, (uint64_t)fail_at, 8);
  ImgPut(img, s + 32, (uint64_t)(uint32_t)err, 4);
  ImgPut(img, s + 40, message ? ImgString(img, message) : 0, 8);
  return s;
}

// A stream struct (kind 4 or 5) with its four callbacks.
IMG_FN uint64_t ImgStream(struct Img* img, int kind) {
  uint64_t s;
  if (kind == 4) {
    s = ImgAlloc(img, sizeof(struct ArrowArrayStream), 8);
    ImgCallback(img, s + F(ArrowArrayStream, get_schema), 3);
    ImgCallback(img, s + F(ArrowArrayStream, get_next), 4);
    ImgCallback(img, s + F(ArrowArrayStream, get_last_error), 5);
    ImgCallback(img, s + F(ArrowArrayStream, release), 6);
    ImgPtr(img, s + F(ArrowArrayStream, private_data), 0);
  } else {
    s = ImgAlloc(img, sizeof(struct ArrowDeviceArrayStream), 8);
    ImgPut(img, s + F(ArrowDeviceArrayStream, device_type), ARROW_DEVICE_CPU, 4);
    ImgCallback(img, s + F(ArrowDeviceArrayStream, get_schema), 7);
    ImgCallback(img, s + F(ArrowDeviceArrayStream, get_next), 8);
    ImgCallback(img, s + F(ArrowDeviceArrayStream, get_last_error), 9);
    ImgCallback(img, s + F(ArrowDeviceArrayStream, release), 10);
    ImgPtr(img, s + F(ArrowDeviceArrayStream, private_data), 0);
  }
  return s;
}

IMG_FN int ImgCompare(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

// The image file (malloc'd, *size bytes; the caller frees it).
IMG_FN unsigned char* ImgWrite(struct Img* img, size_t* size) {
  uint64_t body_size = (img->used + 63) / 64 * 64, tables = 128;
  uint64_t n_tables = 8 * (uint64_t)img->n_relocs + 16 * (uint64_t)img->n_cbs + 32 * (uint64_t)img->n_roots;
  uint64_t body = (tables + n_tables + 63) / 64 * 64, p, i;
  unsigned char* out = (unsigned char*)calloc(1, body + body_size);
  qsort(img->relocs, img->n_relocs, sizeof img->relocs[0], ImgCompare);
  memcpy(out, "ACDFIX\r\n", 8);
#define PUT(off, v, n) do { int k_; for (k_ = 0; k_ < (n); k_++) out[(off) + k_] = (unsigned char)((uint64_t)(v) >> (8 * k_)); } while (0)
  PUT(8, 1, 2);
  out[10] = (unsigned char)sizeof(void*);
  out[11] = 1;
  PUT(16, body, 8);
  PUT(24, body_size, 8);
  PUT(32, tables, 8);
  PUT(44, img->n_relocs, 4);
  PUT(48, img->n_cbs, 4);
  PUT(52, img->n_roots, 4);
  memcpy(out + 56, sizeof(void*) == 8 ? "lp64\0\0\0\0" : "wasm32\0\0", 8);
  p = tables;
  for (i = 0; i < img->n_relocs; i++, p += 8) PUT(p, img->relocs[i], 8);
  for (i = 0; i < img->n_cbs; i++, p += 16) {
    PUT(p, img->cb_off[i], 8);
    PUT(p + 8, img->cb_kind[i], 4);
  }
  for (i = 0; i < img->n_roots; i++, p += 32) {
    PUT(p, img->root_kind[i], 4);
    PUT(p + 4, img->root_schema[i], 4);
    PUT(p + 8, img->root_off[i], 8);
    PUT(p + 16, img->root_script[i], 8);
  }
#undef PUT
  memcpy(out + body, img->body, body_size);
  *size = (size_t)(body + body_size);
  return out;
}

#endif  // ACD_TEST_FIXTURE_IMAGE_H_INCLUDED
