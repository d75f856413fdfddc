// ArrowDeviceArray fields around an already initialized ArrowArray.

#include <string.h>

#include "acd.h"

void AcdDeviceArrayInitDevice(struct ArrowDeviceArray* device_array,
                              ArrowDeviceType device_type, int64_t device_id) {
  device_array->device_id = device_id;
  device_array->device_type = device_type;
  device_array->sync_event = NULL;
  // The spec requires the producer to zero the reserved bytes.
  memset(device_array->reserved, 0, sizeof(device_array->reserved));
}
