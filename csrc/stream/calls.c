// Pull streams, the consumer's side: moves, releases, and get_schema /
// get_next calls that enforce the protocol and check every callback before
// calling it (a corrupted index would trap the wasm instance).

#include <errno.h>
#include <string.h>

#include "stream/stream.h"

// ---- moves and releases -----------------------------------------------------

void AcdArrayStreamMove(struct ArrowArrayStream* src, struct ArrowArrayStream* dst) {
  memcpy(dst, src, sizeof(struct ArrowArrayStream));
  src->release = NULL;
}

void AcdDeviceArrayStreamMove(struct ArrowDeviceArrayStream* src,
                              struct ArrowDeviceArrayStream* dst) {
  memcpy(dst, src, sizeof(struct ArrowDeviceArrayStream));
  src->release = NULL;
}

// A release that cannot be called is not (ACD_RELEASE_CHECKED).
int AcdArrayStreamReleaseChecked(struct ArrowArrayStream* stream, struct AcdError* error) {
  ACD_RELEASE_CHECKED(stream, ArrowArrayStream, ACD_ROLE_ARRAY_STREAM_RELEASE, "stream", error);
}

int AcdDeviceArrayStreamReleaseChecked(struct ArrowDeviceArrayStream* stream,
                                       struct AcdError* error) {
  ACD_RELEASE_CHECKED(stream, ArrowDeviceArrayStream, ACD_ROLE_DEVICE_STREAM_RELEASE, "stream",
                      error);
}

void AcdArrayStreamRelease(struct ArrowArrayStream* stream) {
  AcdArrayStreamReleaseChecked(stream, NULL);
}

void AcdDeviceArrayStreamRelease(struct ArrowDeviceArrayStream* stream) {
  AcdDeviceArrayStreamReleaseChecked(stream, NULL);
}

// ---- consumer-side calls ------------------------------------------------------

// get_last_error's message is read only when it lies in readable memory and
// ends within this many bytes.
#define ACD_MAX_PRODUCER_MESSAGE 65536

// The producer's message for a failed call, copied at once: get_last_error's
// pointer is only valid until the next call on the stream.
static int AcdStreamFailed(struct AcdError* error, const char* callback, int code,
                           const char* message) {
  if (message != NULL) {
    int64_t n = 0;
    while (n < ACD_MAX_PRODUCER_MESSAGE && AcdAddressRangeValid(message + n, 1) &&
           message[n] != '\0') {
      n++;
    }
    if (n < ACD_MAX_PRODUCER_MESSAGE && AcdAddressRangeValid(message + n, 1)) {
      return AcdErrorSet(error, code, "%s: %s", callback, message);
    }
    return AcdErrorSet(error, code,
                       "%s: error %d (%s), and get_last_error gave an invalid string (%p: not "
                       "NUL-terminated within %d bytes of readable memory)",
                       callback, code, strerror(code), (const void*)message,
                       ACD_MAX_PRODUCER_MESSAGE);
  }
  return AcdErrorSet(error, code, "%s: error %d (%s), and get_last_error gave no message",
                     callback, code, strerror(code));
}

// Every callback of a stream, checked before the first is called, so that a
// stream is refused whole rather than half used. The roles are those of
// kind (array or device), in the struct's member order.
static int AcdStreamCheckCallbacks(void (*const fns[4])(void), const enum AcdCallbackRole roles[4],
                                   struct AcdError* error) {
  static const char* const names[4] = {"get_schema", "get_next", "get_last_error", "release"};
  for (int i = 0; i < 4; i++) {
    int code = AcdCallbackCheck(fns[i], roles[i], names[i], error);
    if (code != ACD_OK) return code;
  }
  return ACD_OK;
}

static int AcdArrayStreamCheck(struct ArrowArrayStream* stream, const char* call,
                               struct AcdError* error) {
  if (!ACD_IS_ALIGNED(stream, _Alignof(struct ArrowArrayStream))) {
    return AcdErrorSet(error, EINVAL, "%s: the struct ArrowArrayStream at %p is misaligned", call,
                       (void*)stream);
  }
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "%s: the stream is released", call);
  static const enum AcdCallbackRole roles[4] = {
      ACD_ROLE_ARRAY_STREAM_GET_SCHEMA, ACD_ROLE_ARRAY_STREAM_GET_NEXT,
      ACD_ROLE_ARRAY_STREAM_GET_LAST_ERROR, ACD_ROLE_ARRAY_STREAM_RELEASE};
  void (*const fns[4])(void) = {
      (void (*)(void))stream->get_schema, (void (*)(void))stream->get_next,
      (void (*)(void))stream->get_last_error, (void (*)(void))stream->release};
  return AcdStreamCheckCallbacks(fns, roles, error);
}

static int AcdDeviceArrayStreamCheck(struct ArrowDeviceArrayStream* stream, const char* call,
                                     struct AcdError* error) {
  if (!ACD_IS_ALIGNED(stream, _Alignof(struct ArrowDeviceArrayStream))) {
    return AcdErrorSet(error, EINVAL,
                       "%s: the struct ArrowDeviceArrayStream at %p is misaligned", call,
                       (void*)stream);
  }
  if (stream->release == NULL) return AcdErrorSet(error, EINVAL, "%s: the stream is released", call);
  static const enum AcdCallbackRole roles[4] = {
      ACD_ROLE_DEVICE_STREAM_GET_SCHEMA, ACD_ROLE_DEVICE_STREAM_GET_NEXT,
      ACD_ROLE_DEVICE_STREAM_GET_LAST_ERROR, ACD_ROLE_DEVICE_STREAM_RELEASE};
  void (*const fns[4])(void) = {
      (void (*)(void))stream->get_schema, (void (*)(void))stream->get_next,
      (void (*)(void))stream->get_last_error, (void (*)(void))stream->release};
  return AcdStreamCheckCallbacks(fns, roles, error);
}

// What a producer's get_schema or get_next writes into: room for the largest
// struct a callback of that signature writes (get_schema and get_next, of an
// array stream or a device stream, all take (stream, out)). A callback of the
// right signature in the wrong slot (a get_next as get_schema) writes an
// ArrowDeviceArray where an ArrowSchema was asked for: into a 48-byte
// allocation, that overran the next block (a fuzz run corrupted the device
// memory registry that way). The producer writes here; the struct asked for
// is then moved (copied) to the caller's out.
union AcdStreamOut {
  struct ArrowSchema schema;
  struct ArrowArray array;
  struct ArrowDeviceArray device_array;
};

int AcdArrayStreamGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out,
                            struct AcdError* error) {
  int code = AcdArrayStreamCheck(stream, "get_schema", error);
  if (code != ACD_OK) return code;
  union AcdStreamOut room;
  memset(&room, 0, sizeof(room));
  code = stream->get_schema(stream, &room.schema);
  memcpy(out, &room.schema, sizeof(*out));
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_schema", code, stream->get_last_error(stream));
  }
  if (out->release == NULL) {
    return AcdErrorSet(error, EINVAL, "get_schema: returned 0 with a released schema");
  }
  return ACD_OK;
}

int AcdArrayStreamGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out,
                          struct AcdError* error) {
  int code = AcdArrayStreamCheck(stream, "get_next", error);
  if (code != ACD_OK) return code;
  union AcdStreamOut room;
  memset(&room, 0, sizeof(room));
  code = stream->get_next(stream, &room.array);
  memcpy(out, &room.array, sizeof(*out));
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_next", code, stream->get_last_error(stream));
  }
  return ACD_OK;
}

int AcdDeviceArrayStreamGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out,
                                  struct AcdError* error) {
  int code = AcdDeviceArrayStreamCheck(stream, "get_schema", error);
  if (code != ACD_OK) return code;
  union AcdStreamOut room;
  memset(&room, 0, sizeof(room));
  code = stream->get_schema(stream, &room.schema);
  memcpy(out, &room.schema, sizeof(*out));
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_schema", code, stream->get_last_error(stream));
  }
  if (out->release == NULL) {
    return AcdErrorSet(error, EINVAL, "get_schema: returned 0 with a released schema");
  }
  return ACD_OK;
}

int AcdDeviceArrayStreamGetNext(struct ArrowDeviceArrayStream* stream,
                                struct ArrowDeviceArray* out, struct AcdError* error) {
  int code = AcdDeviceArrayStreamCheck(stream, "get_next", error);
  if (code != ACD_OK) return code;
  union AcdStreamOut room;
  memset(&room, 0, sizeof(room));
  code = stream->get_next(stream, &room.device_array);
  memcpy(out, &room.device_array, sizeof(*out));
  if (code != ACD_OK) {
    return AcdStreamFailed(error, "get_next", code, stream->get_last_error(stream));
  }
  if (out->array.release != NULL && out->device_type != stream->device_type) {
    int found = out->device_type;
    AcdArrayRelease(&out->array);
    return AcdErrorSet(error, EINVAL,
                       "get_next: device_type: expected %d (the stream's), found %d",
                       stream->device_type, found);
  }
  return ACD_OK;
}

