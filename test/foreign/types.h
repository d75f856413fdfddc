// Shared by the type cases of the foreign module (types.c, types-nested.c)
// and its consumer (types-consume.c): a C producer's own allocator, builders
// and release callbacks, written from the spec alone (arrow_c_device.h).
#ifndef FOREIGN_TYPES_H
#define FOREIGN_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "arrow_c_device.h"

#define EXPORT(name) __attribute__((export_name(#name)))

// Every case: LEN logical slots from slot OFF of PHYS physical ones; slot 3 is null where the type allows.
#define LEN 4
#define OFF 1
#define PHYS 5
#define VALID "01101"

void* t_alloc(size_t n);
void t_free(void* p);
void* t_dup(const void* src, size_t n);
// A validity (or bool) bitmap: character k of s is '1' for a set bit k.
uint8_t* t_bits(const char* s);
// A schema node with n_children children given after n (owned by it).
struct ArrowSchema* t_schema(const char* format, const char* name, int64_t flags, int64_t n, ...);
// An array node of length and offset with n_buffers NULL buffers and n_children child pointers to fill.
struct ArrowArray* t_array(int64_t length, int64_t offset, int64_t n_buffers, int64_t n_children);
// null_count from buffers[0] over [offset, offset + length) (0 without a bitmap).
void t_nulls(struct ArrowArray* a);
// Fixed-width values: `phys` entries of `width` bytes, the last phys - offset of them in the slice; valid may be NULL.
struct ArrowArray* t_fixed(const void* values, size_t width, int64_t phys, int64_t offset, const char* valid);
// utf8 or binary (large: 64-bit offsets) of phys strings (NULL: a null slot), starting 2 bytes into the data.
struct ArrowArray* t_strings(const char* const* values, int64_t phys, int64_t offset, int large);

typedef struct ArrowSchema* (*SchemaFn)(void);
typedef struct ArrowArray* (*ArrayFn)(void);
struct Case {
  const char* name;
  const char* format;  // a leaf's format; NULL when schema() builds it
  SchemaFn schema;
  ArrayFn array;
};
extern const struct Case nested_cases[];
extern const int nested_count;

#endif
