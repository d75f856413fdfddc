// Each device's stream: a FIFO of operations (copies and fills) that write
// its memory, executed when an event is waited on or the device synchronized.
// A copy reads its source when it is enqueued (a staging copy, as CUDA makes
// of pageable memory, copy.c), so the source may be freed at once; its
// destination holds ACD_DEVICE_POISON until it executes. This file only
// touches the blocks it is given: the registry of allocations is memory.c's.

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "device/device.h"

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

// Enqueued operations on host-accessible memory, over all devices.
static int64_t acd_pending_host_ops = 0;

int64_t AcdDevicePendingHostOps(void) { return acd_pending_host_ops; }

int AcdDeviceEnqueue(struct AcdDevice* device, struct AcdDeviceBlock* block, int64_t offset,
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
  if (device->host_accessible) acd_pending_host_ops++;
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
    if (device->host_accessible) acd_pending_host_ops--;
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
