// Device arrays: validating one without reading its buffers, and copying or
// moving one onto another device. The copy is a new tree laid out as
// model/array.c's (one block per node), whose buffers are allocations of the
// destination device, freed by each node's release; the root also owns the
// sync event, as in the spec's producer example.

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "device/device.h"

struct AcdDeviceArrayPrivate {
  struct AcdArrayBlock block;  // kind ACD_KIND_DEVICE_ARRAY
  struct AcdDevice* device;
  int64_t n_buffers;
  // Allocations of `device`, freed on release.
  void** owned;
  // The root's sync event (NULL elsewhere), destroyed on release.
  struct AcdEvent* event;
};

// Does nothing on a struct whose private_data is not one of our device array
// blocks; AcdArrayRelease reports it.
void AcdDeviceArrayReleaseNode(struct ArrowArray* array) {
  struct AcdDeviceArrayPrivate* private_data = (struct AcdDeviceArrayPrivate*)array->private_data;
  if (!AcdPrivateIs(private_data, ACD_KIND_DEVICE_ARRAY)) return;
  AcdArrayBlockReleaseChildren(&private_data->block);
  for (int64_t i = 0; i < private_data->n_buffers; i++) {
    AcdDeviceFree(private_data->device, private_data->owned[i], NULL);
  }
  if (private_data->event != NULL) {
    AcdEventDestroy(private_data->event);
    AcdFree(private_data->event);
  }
  private_data->block.kind = 0;
  AcdFree(private_data);
  array->release = NULL;
}

// Known to abi/callback.c as an array's release only.
ACD_CONSTRUCTOR(AcdDeviceArrayRegisterCallbacks) {
  ACD_CALLBACK_REGISTER(&AcdDeviceArrayReleaseNode, ACD_ROLE_ARRAY_RELEASE);
}


// Initializes `array` with the shape of `like` (length, counts, offset), NULL
// buffers and zeroed child structs, its buffers to be allocated on `device`.
static int AcdDeviceArrayNodeInit(struct ArrowArray* array, struct AcdDevice* device,
                                  const struct ArrowArray* like, struct AcdError* error) {
  void* block;
  void** owned;
  int code = AcdArrayInitBlock(array, like->length, like->null_count, like->offset,
                               like->n_buffers, like->n_children, like->dictionary != NULL,
                               (int64_t)sizeof(struct AcdDeviceArrayPrivate),
                               ACD_KIND_DEVICE_ARRAY, &AcdDeviceArrayReleaseNode, &block, &owned, error);
  if (code != ACD_OK) return code;
  struct AcdDeviceArrayPrivate* private_data = (struct AcdDeviceArrayPrivate*)block;
  private_data->device = device;
  private_data->n_buffers = like->n_buffers;
  private_data->owned = owned;
  return ACD_OK;
}

// ---- validation ---------------------------------------------------------------

// Every buffer of the tree lies on `device`: for the device kinds, in a live
// allocation of it; for the host kinds, outside the device window.
static int AcdCheckResidency(struct AcdValidation* v, const struct ArrowArray* array,
                             const struct AcdDevice* device, int depth) {
  if (depth >= ACD_VALIDATION_MAX_DEPTH) return ACD_OK;  // MINIMAL already refused it
  for (int64_t i = 0; i < array->n_buffers; i++) {
    const void* ptr = array->buffers[i];
    if (ptr == NULL) continue;
    const struct AcdDeviceBlock* block = AcdDeviceBlockFind(ptr);
    const struct AcdDevice* owner = block != NULL ? block->device : NULL;
    char field[40];
    snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
    char what[256];
    if (device->host_accessible && owner != NULL && !owner->host_accessible) {
      return AcdValidationFail(v, field, EINVAL,
                               "%p is memory of device %s, not host memory as %s's must be",
                               ptr, owner->name, device->name);
    }
    if (device->host_accessible && owner == NULL && AcdDeviceRangeReadable(ptr, 1) == 0) {
      AcdDeviceDescribeAddress(ptr, 1, what, sizeof(what));
      return AcdValidationFail(v, field, EINVAL, "%p is not host memory%s", ptr, what);
    }
    if (!device->host_accessible && owner != device) {
      if (owner != NULL) {
        return AcdValidationFail(v, field, EINVAL,
                                 "%p is memory of %s, not of %s (the array's device): every "
                                 "buffer of a device array is on its one device",
                                 ptr, owner->name, device->name);
      }
      AcdDeviceDescribeAddress(ptr, 1, what, sizeof(what));
      return AcdValidationFail(v, field, EINVAL, "%p is not memory of %s (the array's device)%s",
                               ptr, device->name,
                               what[0] != '\0' ? what : ", but host memory");
    }
  }
  for (int64_t i = 0; i < array->n_children; i++) {
    size_t mark = AcdValidationPushChild(v, i);
    int code = AcdCheckResidency(v, array->children[i], device, depth + 1);
    AcdValidationPop(v, mark);
    if (code != ACD_OK) return code;
  }
  if (array->dictionary == NULL) return ACD_OK;
  size_t mark = AcdValidationPushText(v, ".dictionary");
  int code = AcdCheckResidency(v, array->dictionary, device, depth + 1);
  AcdValidationPop(v, mark);
  return code;
}

int AcdDeviceArrayValidate(const struct ArrowSchema* schema,
                           const struct ArrowDeviceArray* device_array, struct AcdError* error) {
  if (device_array != NULL && !ACD_IS_ALIGNED(device_array, _Alignof(struct ArrowDeviceArray))) {
    return AcdErrorSet(error, EINVAL, "expected a struct ArrowDeviceArray aligned to %d bytes, found %p",
                       (int)_Alignof(struct ArrowDeviceArray), (const void*)device_array);
  }
  if (device_array == NULL || !AcdAddressRangeValid(device_array, sizeof(*device_array))) {
    return AcdErrorSet(error, EINVAL,
                       "expected a struct ArrowDeviceArray in readable memory, found %p",
                       (const void*)device_array);
  }
  if (device_array->array.release == NULL) {
    return AcdErrorSet(error, EINVAL,
                       "expected a live device array, found a released one (release is NULL)");
  }
  struct AcdDevice* device;
  int code = AcdDeviceResolve(device_array->device_type, device_array->device_id, &device, error);
  if (code == ACD_OK) code = AcdEventValidate(device_array->sync_event, device, error);
  if (code != ACD_OK) return code;
  for (int k = 0; k < 3; k++) {
    if (device_array->reserved[k] != 0) {
      return AcdErrorSet(error, EINVAL,
                         "reserved[%d]: expected 0 (the producer must zero the reserved "
                         "bytes), found %" PRId64,
                         k, device_array->reserved[k]);
    }
  }
  code = AcdArrayValidate(schema, &device_array->array, ACD_VALIDATION_MINIMAL, error);
  if (code != ACD_OK) return code;
  struct AcdValidation v;
  AcdValidationInit(&v, error);
  return AcdCheckResidency(&v, &device_array->array, device, 0);
}

int AcdDeviceArraySync(const struct ArrowDeviceArray* device_array, struct AcdError* error) {
  if (device_array->sync_event == NULL) return ACD_OK;
  struct AcdDevice* device;
  int code = AcdDeviceResolve(device_array->device_type, device_array->device_id, &device, error);
  if (code == ACD_OK) code = AcdEventValidate(device_array->sync_event, device, error);
  if (code != ACD_OK) return code;
  return AcdEventSynchronize((const struct AcdEvent*)device_array->sync_event, error);
}

// ---- copies -------------------------------------------------------------------

struct AcdDeviceArrayCopier {
  struct AcdValidation v;
  struct AcdDevice* from;
  struct AcdDevice* to;
};

static int AcdCopyNode(struct AcdDeviceArrayCopier* c, const struct ArrowSchema* schema,
                       const struct ArrowArray* src, struct ArrowArray* dst, int depth);

// The source tree was validated before the copy, but what the copy allocates
// may reuse memory a malformed source points into (a block its producer freed).
// So the copy reads each node once, into a local, sizes everything it writes
// from that local, and checks every pointer it reads from the source again
// before following it: a source that changes under the copy gives an error or
// wrong values, never a write outside what the copy allocated.
static int AcdCopyChanged(struct AcdDeviceArrayCopier* c, const char* what) {
  return AcdValidationFail(&c->v, NULL, EINVAL,
                           "%s changed during the copy (a struct or array in memory that is not "
                           "the producer's any more)", what);
}

// Reads the pointer at slots[i] into *out when the slot and the struct it
// points to (size bytes, aligned to align) are readable.
static int AcdCopyReadPointer(const void* const* slots, int64_t i, int64_t size, int64_t align,
                              const void** out) {
  if (!ACD_IS_ALIGNED(slots, _Alignof(void*)) ||
      !AcdAddressRangeValid(slots + i, (int64_t)sizeof(void*))) {
    return 0;
  }
  const void* ptr = slots[i];
  *out = ptr;
  return ptr != NULL && ACD_IS_ALIGNED(ptr, align) && AcdAddressRangeValid(ptr, size);
}

static int AcdCopyBuffers(struct AcdDeviceArrayCopier* c, const struct ArrowSchema* schema,
                          const struct ArrowArray* src, struct ArrowArray* dst) {
  int64_t* sizes = AcdMalloc(src->n_buffers * (int64_t)sizeof(int64_t));
  if (sizes == NULL) return AcdValidationFail(&c->v, NULL, ENOMEM, "out of memory");
  int code = AcdDeviceBufferSizes(&c->v, schema, src, c->from, sizes);
  struct AcdDeviceArrayPrivate* private_data = (struct AcdDeviceArrayPrivate*)dst->private_data;
  for (int64_t i = 0; i < src->n_buffers && code == ACD_OK; i++) {
    const void* from = src->buffers[i];  // the pointer array was checked in AcdCopyNode
    if (from == NULL) continue;
    // Check the source range before allocating what a bad offset asks for.
    code = AcdDeviceCheckRange(c->from, from, sizes[i], c->v.error);
    void* buffer = NULL;
    if (code == ACD_OK) code = AcdDeviceAllocate(c->to, sizes[i], &buffer, c->v.error);
    if (code == ACD_OK) {
      private_data->owned[i] = buffer;
      dst->buffers[i] = buffer;
      if (c->to->device_type == ARROW_DEVICE_CPU) {
        code = AcdDeviceCopy(c->from, from, c->to, buffer, sizes[i], c->v.error);
      } else {
        code = AcdDeviceCopyAsync(c->from, from, c->to, buffer, sizes[i], c->v.error);
      }
    }
    if (code != ACD_OK) {
      char field[40];
      snprintf(field, sizeof(field), "buffers[%" PRId64 "]", i);
      code = AcdValidationPrefixField(&c->v, field, code);
    }
  }
  AcdFree(sizes);
  return code;
}

// Copies one child (or the dictionary, i == -1) of the node whose local
// copies are s and a; dst's slot was allocated from a.
static int AcdCopyChild(struct AcdDeviceArrayCopier* c, const struct ArrowSchema* s,
                        const struct ArrowArray* a, int64_t i, struct ArrowArray* dst, int depth) {
  const void* child_schema = NULL;
  const void* child_array = NULL;
  int ok = i < 0 ? (s->dictionary != NULL && a->dictionary != NULL &&
                    ACD_IS_ALIGNED(s->dictionary, _Alignof(struct ArrowSchema)) &&
                    AcdAddressRangeValid(s->dictionary, (int64_t)sizeof(struct ArrowSchema)) &&
                    ACD_IS_ALIGNED(a->dictionary, _Alignof(struct ArrowArray)) &&
                    AcdAddressRangeValid(a->dictionary, (int64_t)sizeof(struct ArrowArray)))
                 : (AcdCopyReadPointer((const void* const*)s->children, i, (int64_t)sizeof(struct ArrowSchema),
                                       _Alignof(struct ArrowSchema), &child_schema) &&
                    AcdCopyReadPointer((const void* const*)a->children, i, (int64_t)sizeof(struct ArrowArray),
                                       _Alignof(struct ArrowArray), &child_array));
  if (i < 0) {
    child_schema = s->dictionary;
    child_array = a->dictionary;
  }
  size_t mark = i < 0 ? AcdValidationPushText(&c->v, ".dictionary") : AcdValidationPushChild(&c->v, i);
  int code = ok ? AcdCopyNode(c, child_schema, child_array, dst, depth + 1)
                : AcdCopyChanged(c, "the struct");
  AcdValidationPop(&c->v, mark);
  return code;
}

static int AcdCopyNode(struct AcdDeviceArrayCopier* c, const struct ArrowSchema* schema,
                       const struct ArrowArray* src, struct ArrowArray* dst, int depth) {
  if (depth >= ACD_VALIDATION_MAX_DEPTH) {
    return AcdValidationFail(&c->v, NULL, EINVAL, "nesting deeper than %d levels",
                             ACD_VALIDATION_MAX_DEPTH);
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  memcpy(&s, schema, sizeof(s));  // readable: checked by the caller
  memcpy(&a, src, sizeof(a));
  if (AcdStringLength(s.format) < 0 || a.n_buffers < 0 || a.n_children < 0 ||
      a.n_children != s.n_children || (a.dictionary == NULL) != (s.dictionary == NULL) ||
      !ACD_IS_ALIGNED(a.buffers, _Alignof(void*)) ||
      !AcdValidationReadable(a.buffers, a.n_buffers * (int64_t)sizeof(void*)) ||
      a.n_buffers > INT32_MAX) {
    return AcdCopyChanged(c, "the struct");
  }
  int code = AcdDeviceArrayNodeInit(dst, c->to, &a, c->v.error);
  if (code != ACD_OK) return AcdValidationPrefix(&c->v, code);
  code = AcdCopyBuffers(c, &s, &a, dst);
  for (int64_t i = 0; i < a.n_children && code == ACD_OK; i++) {
    code = AcdCopyChild(c, &s, &a, i, dst->children[i], depth);
  }
  if (code == ACD_OK && a.dictionary != NULL) code = AcdCopyChild(c, &s, &a, -1, dst->dictionary, depth);
  return code;
}

int AcdDeviceArrayCopy(const struct ArrowSchema* schema, const struct ArrowDeviceArray* src,
                       struct AcdDevice* device, struct ArrowDeviceArray* out,
                       struct AcdError* error) {
  out->array.release = NULL;
  int code = AcdDeviceArrayValidate(schema, src, error);
  if (code != ACD_OK) return code;
  struct AcdDeviceArrayCopier c;
  AcdValidationInit(&c.v, error);
  AcdDeviceResolve(src->device_type, src->device_id, &c.from, NULL);  // valid: validated
  c.to = device;
  // The consumer's side of the spec: wait on the producer's event first.
  code = AcdDeviceArraySync(src, error);
  if (code != ACD_OK) return code;

  struct ArrowDeviceArray copy;
  memset(&copy, 0, sizeof(copy));
  code = AcdCopyNode(&c, schema, &src->array, &copy.array, 0);
  struct AcdEvent* event = NULL;
  if (code == ACD_OK && device->event_kind != ACD_EVENT_NONE) {
    event = AcdMalloc(sizeof(struct AcdEvent));
    code = event == NULL ? AcdErrorSet(error, ENOMEM, "out of memory creating an event")
                         : AcdEventInit(event, device, error);
    if (code == ACD_OK) code = AcdEventRecord(event, device, error);
    if (code == ACD_OK) {
      ((struct AcdDeviceArrayPrivate*)copy.array.private_data)->event = event;
    } else if (event != NULL) {
      AcdEventDestroy(event);
      AcdFree(event);
      event = NULL;
    }
  } else if (code == ACD_OK && device->device_type != ARROW_DEVICE_CPU) {
    // No event type: the data must be ready when the consumer gets it.
    AcdDeviceSynchronize(device);
  }
  if (code != ACD_OK) {
    AcdArrayRelease(&copy.array);
    return code;
  }
  AcdDeviceArrayInitDevice(&copy, device->device_type, device->device_id);
  copy.sync_event = event;
  AcdDeviceArrayMove(&copy, out);
  return ACD_OK;
}

int AcdDeviceArrayMoveToDevice(const struct ArrowSchema* schema, struct ArrowDeviceArray* src,
                               struct AcdDevice* device, struct ArrowDeviceArray* out,
                               struct AcdError* error) {
  if (src != NULL && AcdAddressRangeValid(src, sizeof(*src)) &&
      src->device_type == device->device_type && src->device_id == device->device_id) {
    int code = AcdDeviceArrayValidate(schema, src, error);
    if (code != ACD_OK) return code;
    AcdDeviceArrayMove(src, out);
    return ACD_OK;
  }
  int code = AcdDeviceArrayCopy(schema, src, device, out, error);
  if (code != ACD_OK) return code;
  AcdArrayRelease(&src->array);
  return ACD_OK;
}
