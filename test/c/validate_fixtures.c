// The C core's validator built natively, on fixture images loaded by the
// portable loader (csrc/fixtures/): for each image file given (a batch case's:
// root 0 its ArrowSchema, root 1 an ArrowArray or ArrowDeviceArray), the
// array validated against its schema at each level, printed as one JSON line
//   {"image": PATH, "levels": [{"code": N, "message": "..."}, ...]}  (levels 0..3)
// ("levels": null for an image of another kind); then the roots released and
// the fixture freed. Exits 1 when an image does not load or the loader
// reports a struct not released or released twice.
// test/fixtures-invalid.test.ts builds and runs it.

#include <stdio.h>
#include <string.h>

#include "fixtures/acd_fixture.h"
#include "validate/validate.h"

static void PrintJsonString(const char* s) {
  putchar('"');
  for (; *s != '\0'; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '"' || c == '\\') {
      printf("\\%c", c);
    } else if (c < 0x20) {
      printf("\\u%04x", c);
    } else {
      putchar(c);
    }
  }
  putchar('"');
}

static int ValidateImage(const char* path) {
  struct AcdFixture* fx = NULL;
  struct AcdFixtureError error;
  struct AcdFixtureRoot schema_root, array_root;
  char report[1024];
  if (AcdFixtureLoadFile(path, &fx, &error) != 0) {
    fprintf(stderr, "%s: %s\n", path, error.message);
    return 1;
  }
  printf("{\"image\": ");
  PrintJsonString(path);
  if (AcdFixtureRootCount(fx) == 2 && AcdFixtureGetRoot(fx, 0, &schema_root) == 0 &&
      AcdFixtureGetRoot(fx, 1, &array_root) == 0 && schema_root.kind == ACD_FIXTURE_SCHEMA &&
      (array_root.kind == ACD_FIXTURE_ARRAY || array_root.kind == ACD_FIXTURE_DEVICE_ARRAY)) {
    struct ArrowSchema* schema = (struct ArrowSchema*)schema_root.ptr;
    struct ArrowArray* array = array_root.kind == ACD_FIXTURE_ARRAY ? (struct ArrowArray*)array_root.ptr
                                                                    : &((struct ArrowDeviceArray*)array_root.ptr)->array;
    int level;
    printf(", \"levels\": [");
    for (level = 0; level <= 3; level++) {
      struct AcdError e;
      int code;
      e.message[0] = '\0';
      code = AcdArrayValidate(schema, array, (enum AcdValidationLevel)level, &e);
      printf("%s{\"code\": %d, \"message\": ", level == 0 ? "" : ", ", code);
      PrintJsonString(code == 0 ? "" : e.message);
      putchar('}');
    }
    printf("]}\n");
  } else {
    printf(", \"levels\": null}\n");
  }
  // Every root released once, whatever its kind (a stream through its own release).
  {
    uint32_t i;
    struct AcdFixtureRoot r;
    for (i = 0; AcdFixtureGetRoot(fx, i, &r) == 0; i++) {
      if (r.kind == ACD_FIXTURE_SCHEMA && ((struct ArrowSchema*)r.ptr)->release) ((struct ArrowSchema*)r.ptr)->release(r.ptr);
      if ((r.kind == ACD_FIXTURE_ARRAY || r.kind == ACD_FIXTURE_DEVICE_ARRAY) && ((struct ArrowArray*)r.ptr)->release) {
        ((struct ArrowArray*)r.ptr)->release(r.ptr);
      }
      if (r.kind == ACD_FIXTURE_ARRAY_STREAM) ((struct ArrowArrayStream*)r.ptr)->release(r.ptr);
      if (r.kind == ACD_FIXTURE_DEVICE_ARRAY_STREAM) ((struct ArrowDeviceArrayStream*)r.ptr)->release(r.ptr);
    }
  }
  if (AcdFixtureFree(fx, report, sizeof report) != 0) {
    fprintf(stderr, "%s: %s", path, report);
    return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  int i, failed = 0;
  for (i = 1; i < argc; i++) failed |= ValidateImage(argv[i]);
  return failed;
}
