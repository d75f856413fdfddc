// The checks of the C test programs (test/c/test_*.c): each counts passed
// and failed checks and ends with CheckSummary("c-<name>"), which prints the
// line "c-<name>: N passed, M failed" that test/c-core.test.ts reads.

#ifndef ACD_TEST_CHECK_H_INCLUDED
#define ACD_TEST_CHECK_H_INCLUDED

#include <stdio.h>
#include <string.h>

#include "stream/stream.h"

static int g_passed = 0;
static int g_failed = 0;

static void Check(int ok, const char* what, const char* file, int line) {
  if (ok) {
    g_passed++;
  } else {
    g_failed++;
    const char* base = strrchr(file, '/');
    fprintf(stderr, "%s:%d: check failed: %s\n", base ? base + 1 : file, line, what);
  }
}

#define CHECK(cond) Check((cond) != 0, #cond, __FILE__, __LINE__)

// code must be `expected` and, when fragment is not NULL, the message must
// contain it.
static void CheckCode(int code, int expected, const struct AcdError* error, const char* fragment,
                      const char* what, const char* file, int line) {
  int ok = code == expected &&
           (fragment == NULL || (error != NULL && strstr(error->message, fragment) != NULL));
  Check(ok, what, file, line);
  if (!ok) {
    fprintf(stderr, "  got code %d (expected %d), message: '%s'\n  expected fragment: '%s'\n",
            code, expected, error != NULL ? error->message : "", fragment ? fragment : "");
  }
}

#define CHECK_OK(expr, error) CheckCode((expr), ACD_OK, (error), NULL, #expr, __FILE__, __LINE__)
#define CHECK_FAILS(expr, code, error, fragment) \
  CheckCode((expr), (code), (error), (fragment), #expr, __FILE__, __LINE__)

// Prints the summary line; the program's exit code (0 when nothing failed).
static int CheckSummary(const char* name) {
  printf("%s: %d passed, %d failed\n", name, g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}

#endif  // ACD_TEST_CHECK_H_INCLUDED
