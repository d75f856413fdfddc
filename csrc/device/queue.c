// Streams and events. Each device has one stream, a FIFO of operations that
// write its memory; an event remembers the stream's tail when it was recorded,
// and waiting on it executes the stream up to there. A copy reads its source
// when it is enqueued (a staging copy, as CUDA makes of pageable memory), so
// the source may be freed at once; its destination holds ACD_DEVICE_POISON
// until it executes.

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "acd.h"

struct AcdDeviceOp {
  struct AcdDeviceOp* next;
  int64_t number;
  struct AcdDeviceBlock* block;
  int64_t offset;
  int64_t size;
  // A fill of `value` (a kernel's output), else a copy of the staged bytes
  // that follow this struct.
  int fill;
  int value;
};

static int AcdEnqueue(struct AcdDevice* device, struct AcdDeviceBlock* block, int64_t offset,
                      int64_t size, const unsigned char* staged, int value,
                      struct AcdError* error) {
  if (size == 0) return ACD_OK;
  int64_t extra = staged != NULL ? size : 0;
  struct AcdDeviceOp* op = AcdMalloc((int64_t)sizeof(struct AcdDeviceOp) + extra);
  if (op == NULL) {
    return AcdErrorSet(error, ENOMEM, "%s: out of memory enqueueing %" PRId64 " bytes",
                       device->name, size);
  }
  op->next = NULL;
  op->number = ++device->stream.enqueued;
  op->block = block;
  op->offset = offset;
  op->size = size;
  op->fill = staged == NULL;
  op->value = value;
  if (staged != NULL) memcpy(op + 1, staged, (size_t)size);
  memset(block->bytes + offset, ACD_DEVICE_POISON, (size_t)size);
  block->pending_ops++;
  if (device->host_accessible) AcdDevicePendingHostOps(1);
  if (device->stream.tail == NULL) {
    device->stream.head = op;
  } else {
    device->stream.tail->next = op;
  }
  device->stream.tail = op;
  device->ops_enqueued++;
  return ACD_OK;
}

void AcdDeviceStreamExecute(struct AcdDevice* device, int64_t upto) {
  struct AcdDeviceStream* stream = &device->stream;
  while (stream->head != NULL && stream->head->number <= upto) {
    struct AcdDeviceOp* op = stream->head;
    unsigned char* at = op->block->bytes + op->offset;
    if (op->fill) {
      memset(at, op->value, (size_t)op->size);
    } else {
      memcpy(at, op + 1, (size_t)op->size);
    }
    op->block->pending_ops--;
    if (device->host_accessible) AcdDevicePendingHostOps(-1);
    stream->executed = op->number;
    stream->head = op->next;
    if (stream->head == NULL) stream->tail = NULL;
    device->ops_executed++;
    AcdFree(op);
  }
}

void AcdDeviceSynchronize(struct AcdDevice* device) {
  AcdDeviceStreamExecute(device, device->stream.enqueued);
}

int64_t AcdDeviceStreamPendingBytes(const struct AcdDeviceBlock* block, int64_t offset,
                                    int64_t size) {
  // The union of the pending writes' ranges within [offset, offset + size),
  // merged by a sweep over them in order of start.
  int64_t total = 0;
  int64_t covered = offset;
  const int64_t end = offset + size;
  for (;;) {
    // The pending range that reaches furthest among those starting at or
    // before `covered`; else the one that starts first after it.
    int64_t best_start = INT64_MAX;
    int64_t best_end = covered;
    for (const struct AcdDeviceOp* op = block->device->stream.head; op != NULL; op = op->next) {
      if (op->block != block) continue;
      int64_t s = op->offset > covered ? op->offset : covered;
      int64_t e = op->offset + op->size < end ? op->offset + op->size : end;
      if (e <= s) continue;
      if (s == covered) {
        if (best_start != covered || e > best_end) best_end = e;
        best_start = covered;
      } else if (best_start != covered && s < best_start) {
        best_start = s;
        best_end = e;
      }
    }
    if (best_start == INT64_MAX) return total;
    total += best_end - best_start;
    covered = best_end;
  }
}

int AcdDeviceCopyAsync(struct AcdDevice* src_device, const void* src,
                       struct AcdDevice* dst_device, void* dst, int64_t size,
                       struct AcdError* error) {
  if (dst_device->device_type == ARROW_DEVICE_CPU) {
    return AcdErrorSet(error, EINVAL,
                       "the CPU has no stream: copy to host memory with AcdDeviceCopy");
  }
  unsigned char* from;
  unsigned char* to;
  struct AcdDeviceBlock* src_block;
  struct AcdDeviceBlock* dst_block;
  int code = AcdDeviceCheckRange(src_device, src, size, error);
  if (code == ACD_OK) code = AcdDeviceAccess(src_device, src, size, &from, &src_block, error);
  if (code == ACD_OK) code = AcdDeviceAccess(dst_device, dst, size, &to, &dst_block, error);
  if (code != ACD_OK || size == 0) return code;
  if (dst_block == NULL || dst_block->device != dst_device) {
    return AcdErrorSet(error, EINVAL,
                       "%p is not an allocation of %s: asynchronous copies write device "
                       "allocations only",
                       dst, dst_device->name);
  }
  return AcdEnqueue(dst_device, dst_block, (int64_t)(to - dst_block->bytes), size, from, 0,
                    error);
}

int AcdDeviceMemsetAsync(struct AcdDevice* device, void* dst, int value, int64_t size,
                         struct AcdError* error) {
  unsigned char* to;
  struct AcdDeviceBlock* block;
  int code = AcdDeviceAccess(device, dst, size, &to, &block, error);
  if (code != ACD_OK || size == 0) return code;
  if (block == NULL || block->device != device || device->device_type == ARROW_DEVICE_CPU) {
    return AcdErrorSet(error, EINVAL, "%p is not an allocation of %s with a stream", dst,
                       device->name);
  }
  return AcdEnqueue(device, block, (int64_t)(to - block->bytes), size, NULL, value & 0xFF,
                    error);
}

// ---- events -----------------------------------------------------------------

struct AcdEventState {
  struct AcdDevice* device;
  // The stream position recorded; 0 (never recorded) is always complete.
  int64_t number;
};

// Live event states (plain malloc, as the device table), so that a sync_event
// from a producer is checked before it is trusted.
static struct AcdEventState** acd_events = NULL;
static int64_t acd_event_count = 0;
static int64_t acd_event_capacity = 0;
static int64_t acd_events_recorded = 0;
static int64_t acd_events_waited = 0;

int64_t AcdEventsRecorded(void) { return acd_events_recorded; }
int64_t AcdEventsWaited(void) { return acd_events_waited; }

static int64_t AcdEventIndex(const struct AcdEventState* state) {
  for (int64_t i = acd_event_count - 1; i >= 0; i--) {
    if (acd_events[i] == state) return i;
  }
  return -1;
}

static int AcdEventLive(const struct AcdEvent* event, struct AcdError* error) {
  if (event == NULL || AcdEventIndex(event->state) < 0) {
    return AcdErrorSet(error, EINVAL, "event %p is not live (destroyed, or never created)",
                       (const void*)event);
  }
  return ACD_OK;
}

int AcdEventInit(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error) {
  event->kind = ACD_EVENT_NONE;
  event->state = NULL;
  if (device->event_kind == ACD_EVENT_NONE) {
    return AcdErrorSet(error, EINVAL, "%s has no event type: its sync_event is always NULL",
                       device->name);
  }
  if (acd_event_count == acd_event_capacity) {
    int64_t capacity = acd_event_capacity == 0 ? 64 : acd_event_capacity * 2;
    struct AcdEventState** grown =
        realloc(acd_events, (size_t)capacity * sizeof(struct AcdEventState*));
    if (grown == NULL) return AcdErrorSet(error, ENOMEM, "out of memory creating an event");
    acd_events = grown;
    acd_event_capacity = capacity;
  }
  struct AcdEventState* state = AcdMalloc(sizeof(struct AcdEventState));
  if (state == NULL) return AcdErrorSet(error, ENOMEM, "out of memory creating an event");
  state->device = device;
  state->number = 0;
  acd_events[acd_event_count++] = state;
  event->kind = device->event_kind;
  event->state = state;
  return ACD_OK;
}

int AcdEventRecord(struct AcdEvent* event, struct AcdDevice* device, struct AcdError* error) {
  int code = AcdEventLive(event, error);
  if (code != ACD_OK) return code;
  if (event->state->device != device) {
    return AcdErrorSet(error, EINVAL, "the event belongs to %s, the stream to %s",
                       event->state->device->name, device->name);
  }
  event->state->number = device->stream.enqueued;
  device->events_recorded++;
  acd_events_recorded++;
  return ACD_OK;
}

int AcdEventQuery(const struct AcdEvent* event, struct AcdError* error) {
  int code = AcdEventLive(event, error);
  if (code != ACD_OK) return code;
  const struct AcdEventState* state = event->state;
  if (state->device->stream.executed >= state->number) return ACD_OK;
  return AcdErrorSet(error, EBUSY, "the event's work on %s has not executed yet",
                     state->device->name);
}

int AcdEventSynchronize(const struct AcdEvent* event, struct AcdError* error) {
  int code = AcdEventLive(event, error);
  if (code != ACD_OK) return code;
  AcdDeviceStreamExecute(event->state->device, event->state->number);
  event->state->device->events_waited++;
  acd_events_waited++;
  return ACD_OK;
}

int AcdDeviceStreamWaitEvent(struct AcdDevice* device, const struct AcdEvent* event,
                             struct AcdError* error) {
  int code = AcdEventLive(event, error);
  if (code != ACD_OK) return code;
  AcdDeviceStreamExecute(event->state->device, event->state->number);
  device->events_waited++;
  acd_events_waited++;
  return ACD_OK;
}

void AcdEventDestroy(struct AcdEvent* event) {
  if (event == NULL) return;
  int64_t i = AcdEventIndex(event->state);
  if (i >= 0) {
    AcdFree(acd_events[i]);
    acd_events[i] = acd_events[--acd_event_count];
  }
  event->state = NULL;
}

int AcdEventValidate(const void* sync_event, const struct AcdDevice* device,
                     struct AcdError* error) {
  const char* macro = AcdDeviceTypeMacro(device->device_type);
  if (device->event_kind == ACD_EVENT_NONE) {
    if (sync_event == NULL) return ACD_OK;
    return AcdErrorSet(error, EINVAL,
                       "sync_event: expected NULL for %s, which has no event type, found %p",
                       macro, sync_event);
  }
  // The spec: the event can be NULL when no synchronization is needed.
  if (sync_event == NULL) return ACD_OK;

  const char* expected = AcdEventKindName(device->event_kind);
  if (!AcdAddressRangeValid(sync_event, sizeof(struct AcdEvent))) {
    char what[256];
    AcdDeviceDescribeAddress(sync_event, sizeof(struct AcdEvent), what, sizeof(what));
    return AcdErrorSet(error, EINVAL,
                       "sync_event: expected a %s* in readable host memory, found %p%s",
                       expected, sync_event, what);
  }
  struct AcdEvent event;
  memcpy(&event, sync_event, sizeof(event));
  if (event.kind != device->event_kind) {
    const char* found = AcdEventKindName(event.kind);
    if (found != NULL) {
      return AcdErrorSet(error, EINVAL, "sync_event: expected a %s* for %s, found a %s*",
                         expected, macro, found);
    }
    return AcdErrorSet(error, EINVAL,
                       "sync_event: expected a %s* for %s, found %p, whose first member "
                       "(0x%08" PRIx32 ") is not the kind tag of a simulated event",
                       expected, macro, sync_event, event.kind);
  }
  if (AcdEventIndex(event.state) < 0) {
    return AcdErrorSet(error, EINVAL,
                       "sync_event: the %s at %p was destroyed or never created (it is not a "
                       "live simulated event)",
                       expected, sync_event);
  }
  if (event.state->device != device) {
    return AcdErrorSet(error, EINVAL,
                       "sync_event: the event was created on %s, the array is on %s",
                       event.state->device->name, device->name);
  }
  return ACD_OK;
}
