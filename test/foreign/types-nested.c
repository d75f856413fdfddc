// The foreign module's nested type cases (see types.c): lists of every
// kind, fixed-size list, struct, map, unions, dictionary, run-end encoded.
// Each has 4 slots from offset 1 (slot 3 null where the type allows) over
// children that have offsets of their own, as a C producer may build them.

#include <stdlib.h>
#include <string.h>

#include "types.h"

#define NULLABLE ARROW_FLAG_NULLABLE

static struct ArrowArray* node(int64_t n_buffers, int64_t n_children) {
  struct ArrowArray* a = t_array(LEN, OFF, n_buffers, n_children);
  if (n_buffers > 0) a->buffers[0] = t_bits(VALID);
  t_nulls(a);
  return a;
}

// int32, 7 slots from offset 1: 10, 11, null, 13, 14, 15, 16.
static struct ArrowArray* list_child(void) {
  static const int32_t v[] = {-1, 10, 11, -99, 13, 14, 15, 16};
  return t_fixed(v, 4, 8, 1, "11101111");
}
static struct ArrowSchema* item(void) { return t_schema("i", "item", NULLABLE, 0); }

// [[null], [], null, [15, 16]]
static struct ArrowSchema* list_schema(void) { return t_schema("+l", "list", NULLABLE, 1, item()); }
static struct ArrowArray* list_array(void) {
  static const int32_t offsets[] = {0, 2, 3, 3, 5, 7};
  struct ArrowArray* a = node(2, 1);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  a->children[0] = list_child();
  return a;
}

// [[11, null, 13], [], null, [16]]
static struct ArrowSchema* large_list_schema(void) { return t_schema("+L", "large_list", NULLABLE, 1, item()); }
static struct ArrowArray* large_list_array(void) {
  static const int64_t offsets[] = {1, 1, 4, 4, 6, 7};
  struct ArrowArray* a = node(2, 1);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  a->children[0] = list_child();
  return a;
}

// [[15, 16], [10, 11, null], null, []]: out of order, overlapping.
static struct ArrowSchema* list_view_schema(void) { return t_schema("+vl", "list_view", NULLABLE, 1, item()); }
static struct ArrowArray* list_view_array(void) {
  static const int32_t offsets[] = {0, 5, 0, 0, 1};
  static const int32_t sizes[] = {0, 2, 3, 0, 0};
  struct ArrowArray* a = node(3, 1);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  a->buffers[2] = t_dup(sizes, sizeof sizes);
  a->children[0] = list_child();
  return a;
}

// [[16], [11, null], null, [10, 11, null]]
static struct ArrowSchema* large_list_view_schema(void) { return t_schema("+vL", "large_list_view", NULLABLE, 1, item()); }
static struct ArrowArray* large_list_view_array(void) {
  static const int64_t offsets[] = {0, 6, 1, 0, 0};
  static const int64_t sizes[] = {0, 1, 2, 0, 3};
  struct ArrowArray* a = node(3, 1);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  a->buffers[2] = t_dup(sizes, sizeof sizes);
  a->children[0] = list_child();
  return a;
}

// [[22, 23], [24, null], null, [28, 29]]: the child has 10 slots from offset 2.
static struct ArrowSchema* fixed_list_schema(void) { return t_schema("+w:2", "fixed_size_list", NULLABLE, 1, item()); }
static struct ArrowArray* fixed_list_array(void) {
  static const int32_t v[] = {-1, -1, 20, 21, 22, 23, 24, -25, 26, 27, 28, 29};
  struct ArrowArray* a = node(1, 1);
  a->children[0] = t_fixed(v, 4, 12, 2, "111111101111");
  return a;
}

// [{a: 2, b: null}, {a: null, b: "r"}, null, {a: 5, b: "t"}]
static struct ArrowSchema* struct_schema(void) {
  return t_schema("+s", "struct", NULLABLE, 2, t_schema("i", "a", NULLABLE, 0), t_schema("u", "b", NULLABLE, 0));
}
static struct ArrowArray* struct_array(void) {
  static const int32_t a_values[] = {0, 1, 2, -3, 4, 5};
  static const char* const b_values[] = {"p", NULL, "r", "s", "t"};
  struct ArrowArray* a = node(1, 2);
  a->children[0] = t_fixed(a_values, 4, 6, 1, "111011");
  a->children[1] = t_strings(b_values, 5, 0, 0);
  return a;
}

// [{k2: 1, k3: null}, {}, null, {k5: 4, k6: 5}]
static struct ArrowSchema* map_schema(void) {
  return t_schema("+m", "map", NULLABLE, 1,
    t_schema("+s", "entries", 0, 2, t_schema("u", "key", 0, 0), t_schema("i", "value", NULLABLE, 0)));
}
static struct ArrowArray* map_array(void) {
  static const int32_t offsets[] = {0, 1, 3, 3, 4, 6};
  static const char* const keys[] = {"skip", "k1", "k2", "k3", "k4", "k5", "k6"};
  static const int32_t values[] = {0, 1, -2, 3, 4, 5};
  struct ArrowArray* a = node(2, 1);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  struct ArrowArray* entries = t_array(6, 0, 1, 2);
  entries->children[0] = t_strings(keys, 7, 1, 0);
  entries->children[1] = t_fixed(values, 4, 6, 0, "110111");
  a->children[0] = entries;
  return a;
}

// Type ids 3 (int32 "n") and 7 (utf8 "s"): [s1, 102, null (its child's), 104]
static struct ArrowSchema* sparse_schema(void) {
  return t_schema("+us:3,7", "sparse_union", 0, 2, t_schema("i", "n", NULLABLE, 0), t_schema("u", "s", NULLABLE, 0));
}
static struct ArrowArray* sparse_array(void) {
  static const int8_t ids[] = {3, 7, 3, 7, 3};
  static const int32_t n[] = {-1, 100, 101, 102, 103, 104};
  static const char* const s[] = {"s0", "s1", "s2", NULL, "s4"};
  struct ArrowArray* a = t_array(LEN, OFF, 1, 2);
  a->buffers[0] = t_dup(ids, sizeof ids);
  a->children[0] = t_fixed(n, 4, 6, 1, NULL);
  a->children[1] = t_strings(s, 5, 0, 0);
  return a;
}

// Type ids 0 (int32 "n": 7, 8, null) and 1 (utf8 "s": d0, d1): [d0, 8, null, d1]
static struct ArrowSchema* dense_schema(void) {
  return t_schema("+ud:0,1", "dense_union", 0, 2, t_schema("i", "n", NULLABLE, 0), t_schema("u", "s", NULLABLE, 0));
}
static struct ArrowArray* dense_array(void) {
  static const int8_t ids[] = {0, 1, 0, 0, 1};
  static const int32_t offsets[] = {0, 0, 1, 2, 1};
  static const int32_t n[] = {-1, 7, 8, -9};
  static const char* const s[] = {"x", "d0", "d1"};
  struct ArrowArray* a = t_array(LEN, OFF, 2, 2);
  a->buffers[0] = t_dup(ids, sizeof ids);
  a->buffers[1] = t_dup(offsets, sizeof offsets);
  a->children[0] = t_fixed(n, 4, 4, 1, "1110");
  a->children[1] = t_strings(s, 3, 1, 0);
  return a;
}

// int32 indices over utf8 [red, green, blue] (from offset 1): [blue, red, null, green]
static struct ArrowSchema* dictionary_schema(void) {
  struct ArrowSchema* s = t_schema("i", "dictionary", NULLABLE, 0);
  s->dictionary = t_schema("u", "", NULLABLE, 0);
  return s;
}
static struct ArrowArray* dictionary_array(void) {
  static const int32_t indices[] = {5, 2, 0, -1, 1};  // slot 0 (outside) and slot 3 (null) are out of range
  static const char* const values[] = {"zz", "red", "green", "blue"};
  struct ArrowArray* a = t_fixed(indices, 4, PHYS, OFF, VALID);
  a->dictionary = t_strings(values, 4, 1, 0);
  return a;
}

// int32 run ends 2, 3, 5 over utf8 [a, null, c]: [a, null, c, c]
static struct ArrowSchema* ree_schema(void) {
  return t_schema("+r", "run_end_encoded", 0, 2, t_schema("i", "run_ends", 0, 0), t_schema("u", "values", NULLABLE, 0));
}
static struct ArrowArray* ree_array(void) {
  static const int32_t ends[] = {2, 3, 5};
  static const char* const values[] = {"v", "a", NULL, "c"};
  struct ArrowArray* a = t_array(LEN, OFF, 0, 2);
  a->children[0] = t_fixed(ends, 4, 3, 0, NULL);
  a->children[1] = t_strings(values, 4, 1, 0);
  return a;
}

const struct Case nested_cases[] = {
  {"list", NULL, list_schema, list_array},
  {"large_list", NULL, large_list_schema, large_list_array},
  {"list_view", NULL, list_view_schema, list_view_array},
  {"large_list_view", NULL, large_list_view_schema, large_list_view_array},
  {"fixed_size_list", NULL, fixed_list_schema, fixed_list_array},
  {"struct", NULL, struct_schema, struct_array},
  {"map", NULL, map_schema, map_array},
  {"sparse_union", NULL, sparse_schema, sparse_array},
  {"dense_union", NULL, dense_schema, dense_array},
  {"dictionary", NULL, dictionary_schema, dictionary_array},
  {"run_end_encoded", NULL, ree_schema, ree_array},
};
const int nested_count = sizeof nested_cases / sizeof nested_cases[0];
