// Checking a callback before calling it. On wasm a call through a function
// pointer is a call_indirect: an index that is out of the table, NULL, or of
// another signature traps the whole instance. So every call of a function
// pointer read from a struct first asks here: the table (through a JS import
// that knows each slot's wasm signature, ts/abi/wasm-table.ts) and our own
// callbacks (whose role is known exactly, so that a stream's release in an
// array's release is refused although both are void(T*)).

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "abi/abi.h"

#if defined(__EMSCRIPTEN__)
#include <emscripten/em_js.h>
#include <emscripten/emscripten.h>
// The Core sets Module.acdCallbackValid right after loading; until then only
// the table's bounds and NULL slots can be checked.
EM_JS(int, AcdTableSignatureIs, (uintptr_t fn, int signature), {
  var check = Module["acdCallbackValid"];
  if (check) return check(fn, signature);
  return fn > 0 && fn < wasmTable.length && wasmTable.get(fn) !== null ? 1 : 0;
});
#else
static int AcdTableSignatureIs(uintptr_t fn, int signature) {
  (void)signature;
  return fn != 0;
}
#endif

typedef void (*AcdAnyFunction)(void);

struct AcdRoleInfo {
  enum AcdSignature signature;
  const char* prototype;
  const char* what;
};

static const struct AcdRoleInfo acd_roles[ACD_ROLE_COUNT] = {
    [ACD_ROLE_SCHEMA_RELEASE] = {ACD_SIG_V_P, "void(struct ArrowSchema*)", "the release of a struct ArrowSchema"},
    [ACD_ROLE_ARRAY_RELEASE] = {ACD_SIG_V_P, "void(struct ArrowArray*)", "the release of a struct ArrowArray"},
    [ACD_ROLE_ARRAY_STREAM_GET_SCHEMA] = {ACD_SIG_I_PP, "int(struct ArrowArrayStream*, struct ArrowSchema*)", "the get_schema of a struct ArrowArrayStream"},
    [ACD_ROLE_ARRAY_STREAM_GET_NEXT] = {ACD_SIG_I_PP, "int(struct ArrowArrayStream*, struct ArrowArray*)", "the get_next of a struct ArrowArrayStream"},
    [ACD_ROLE_ARRAY_STREAM_GET_LAST_ERROR] = {ACD_SIG_P_P, "const char*(struct ArrowArrayStream*)", "the get_last_error of a struct ArrowArrayStream"},
    [ACD_ROLE_ARRAY_STREAM_RELEASE] = {ACD_SIG_V_P, "void(struct ArrowArrayStream*)", "the release of a struct ArrowArrayStream"},
    [ACD_ROLE_DEVICE_STREAM_GET_SCHEMA] = {ACD_SIG_I_PP, "int(struct ArrowDeviceArrayStream*, struct ArrowSchema*)", "the get_schema of a struct ArrowDeviceArrayStream"},
    [ACD_ROLE_DEVICE_STREAM_GET_NEXT] = {ACD_SIG_I_PP, "int(struct ArrowDeviceArrayStream*, struct ArrowDeviceArray*)", "the get_next of a struct ArrowDeviceArrayStream"},
    [ACD_ROLE_DEVICE_STREAM_GET_LAST_ERROR] = {ACD_SIG_P_P, "const char*(struct ArrowDeviceArrayStream*)", "the get_last_error of a struct ArrowDeviceArrayStream"},
    [ACD_ROLE_DEVICE_STREAM_RELEASE] = {ACD_SIG_V_P, "void(struct ArrowDeviceArrayStream*)", "the release of a struct ArrowDeviceArrayStream"},
    [ACD_ROLE_HANDLER_ON_SCHEMA] = {ACD_SIG_I_PP, "int(struct ArrowAsyncDeviceStreamHandler*, struct ArrowSchema*)", "the on_schema of a struct ArrowAsyncDeviceStreamHandler"},
    [ACD_ROLE_HANDLER_ON_NEXT_TASK] = {ACD_SIG_I_PPP, "int(struct ArrowAsyncDeviceStreamHandler*, struct ArrowAsyncTask*, const char*)", "the on_next_task of a struct ArrowAsyncDeviceStreamHandler"},
    [ACD_ROLE_HANDLER_ON_ERROR] = {ACD_SIG_V_PIPP, "void(struct ArrowAsyncDeviceStreamHandler*, int, const char*, const char*)", "the on_error of a struct ArrowAsyncDeviceStreamHandler"},
    [ACD_ROLE_HANDLER_RELEASE] = {ACD_SIG_V_P, "void(struct ArrowAsyncDeviceStreamHandler*)", "the release of a struct ArrowAsyncDeviceStreamHandler"},
    [ACD_ROLE_PRODUCER_REQUEST] = {ACD_SIG_V_PJ, "void(struct ArrowAsyncProducer*, int64_t)", "the request of a struct ArrowAsyncProducer"},
    [ACD_ROLE_PRODUCER_CANCEL] = {ACD_SIG_V_P, "void(struct ArrowAsyncProducer*)", "the cancel of a struct ArrowAsyncProducer"},
    [ACD_ROLE_TASK_EXTRACT_DATA] = {ACD_SIG_I_PP, "int(struct ArrowAsyncTask*, struct ArrowDeviceArray*)", "the extract_data of a struct ArrowAsyncTask"},
};

// This library's own callbacks, each with the one role it may fill. Filled by
// the files that define them (ACD_CONSTRUCTOR, AcdCallbackRegister), so that
// this folder calls nothing above it.
struct AcdOwnCallback {
  AcdAnyFunction fn;
  enum AcdCallbackRole role;
};

#define ACD_MAX_OWN 32
static struct AcdOwnCallback acd_own[ACD_MAX_OWN];
static size_t acd_own_count = 0;

void AcdCallbackRegister(AcdAnyFunction fn, enum AcdCallbackRole role) {
  for (size_t i = 0; i < acd_own_count; i++) {
    if (acd_own[i].fn == fn) return;
  }
  // The core has 11; a new one beyond the room is a build-time mistake, caught
  // by the tests that check our callbacks' roles.
  if (acd_own_count < ACD_MAX_OWN) acd_own[acd_own_count++] = (struct AcdOwnCallback){fn, role};
}

// The role of one of our own callbacks, or ACD_ROLE_COUNT for any other.
static enum AcdCallbackRole AcdOwnRole(AcdAnyFunction fn) {
  for (size_t i = 0; i < acd_own_count; i++) {
    if (acd_own[i].fn == fn) return acd_own[i].role;
  }
  return ACD_ROLE_COUNT;
}

int AcdCallbackValid(AcdAnyFunction fn, enum AcdCallbackRole role) {
  if (fn == NULL) return 0;
  enum AcdCallbackRole own = AcdOwnRole(fn);
  if (own != ACD_ROLE_COUNT) return own == role;
  return AcdTableSignatureIs((uintptr_t)fn, acd_roles[role].signature);
}

const char* AcdCallbackDescribe(AcdAnyFunction fn, enum AcdCallbackRole role, char* out,
                                size_t size) {
  const struct AcdRoleInfo* expected = &acd_roles[role];
  enum AcdCallbackRole own = AcdOwnRole(fn);
  if (fn == NULL) {
    snprintf(out, size, "expected a function %s, found NULL", expected->prototype);
  } else if (own != ACD_ROLE_COUNT) {
    snprintf(out, size, "expected a function %s, found %s (function table index %lu)",
             expected->prototype, acd_roles[own].what, (unsigned long)(uintptr_t)fn);
  } else {
    snprintf(out, size,
             "expected a function %s in the function table, found index %lu, which is not one",
             expected->prototype, (unsigned long)(uintptr_t)fn);
  }
  return out;
}

int AcdCallbackCheck(AcdAnyFunction fn, enum AcdCallbackRole role, const char* where,
                     struct AcdError* error) {
  if (AcdCallbackValid(fn, role)) return ACD_OK;
  char text[400];
  AcdCallbackDescribe(fn, role, text, sizeof(text));
  return AcdErrorSet(error, EINVAL, "%s: %s", where, text);
}
