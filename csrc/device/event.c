// Simulated events: what a sync_event points at. An event remembers the tail
// of its device's stream when it was recorded; waiting on it executes the
// stream up to there (queue.c). Live events are registered, so that a
// sync_event from a producer is checked before it is trusted.

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"

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
    AcdAddressDescribe(sync_event, sizeof(struct AcdEvent), what, sizeof(what));
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
