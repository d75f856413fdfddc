// Tests of the simulated devices (device*.c), built natively with ASan/UBSan
// and by emcc (test/c/run.sh): device kinds, memory spaces and accounting,
// streams and events, read-before-wait detection, device arrays moved between
// devices, their validation, and the spec's int32 example.
//
// Prints "c-device: N passed, M failed" and exits non-zero when M > 0.
//
// Longer than 400 lines because it is one test program: every case shares
// the device arrays built by hand and the harness.

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "stream/stream.h"
#include "check.h"
#include "examples/int32_device_array.h"

// ---- helpers -------------------------------------------------------------------

static struct AcdDevice* Device(ArrowDeviceType type, int64_t id) {
  struct AcdDevice* device = NULL;
  AcdDeviceResolve(type, id, &device, NULL);
  return device;
}

static int InWindow(const void* ptr) {
  uintptr_t p = (uintptr_t)ptr;
  return p >= ACD_DEVICE_ADDRESS_BASE && p - ACD_DEVICE_ADDRESS_BASE < ACD_DEVICE_ADDRESS_SIZE;
}

// ---- device kinds -------------------------------------------------------------

static void TestKinds(void) {
  struct AcdError error;
  struct {
    ArrowDeviceType type;
    const char* name;
    int host;
    uint32_t event;
  } kinds[] = {
      {ARROW_DEVICE_CPU, "cpu", 1, ACD_EVENT_NONE},
      {ARROW_DEVICE_CUDA, "cuda", 0, ACD_EVENT_CUDA},
      {ARROW_DEVICE_CUDA_HOST, "cuda_host", 1, ACD_EVENT_CUDA},
      {ARROW_DEVICE_OPENCL, "opencl", 0, ACD_EVENT_OPENCL},
      {ARROW_DEVICE_VULKAN, "vulkan", 0, ACD_EVENT_VULKAN},
      {ARROW_DEVICE_METAL, "metal", 0, ACD_EVENT_METAL},
      {ARROW_DEVICE_VPI, "vpi", 0, ACD_EVENT_NONE},
      {ARROW_DEVICE_ROCM, "rocm", 0, ACD_EVENT_HIP},
      {ARROW_DEVICE_ROCM_HOST, "rocm_host", 1, ACD_EVENT_HIP},
      {ARROW_DEVICE_EXT_DEV, "ext_dev", 0, ACD_EVENT_EXT_DEV},
      {ARROW_DEVICE_CUDA_MANAGED, "cuda_managed", 1, ACD_EVENT_CUDA},
      {ARROW_DEVICE_ONEAPI, "oneapi", 0, ACD_EVENT_SYCL},
      {ARROW_DEVICE_WEBGPU, "webgpu", 0, ACD_EVENT_NONE},
      {ARROW_DEVICE_HEXAGON, "hexagon", 0, ACD_EVENT_NONE},
  };
  for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
    int64_t id = kinds[i].type == ARROW_DEVICE_CPU ? -1 : 3;
    struct AcdDevice* device = NULL;
    CHECK_OK(AcdDeviceResolve(kinds[i].type, id, &device, &error), &error);
    CHECK(device != NULL && device->host_accessible == kinds[i].host);
    CHECK(device != NULL && device->event_kind == kinds[i].event);
    CHECK(strcmp(AcdDeviceTypeName(kinds[i].type), kinds[i].name) == 0);
    ArrowDeviceType back = 0;
    CHECK(AcdDeviceTypeFromName(kinds[i].name, &back) == ACD_OK && back == kinds[i].type);
    // The same (type, id) is the same device.
    CHECK(Device(kinds[i].type, id) == device);
  }
  CHECK(strcmp(Device(ARROW_DEVICE_CUDA, 1)->name, "cuda:1") == 0);
  CHECK(strcmp(AcdDeviceCpu()->name, "cpu") == 0);
  CHECK(Device(ARROW_DEVICE_CUDA, 1) != Device(ARROW_DEVICE_CUDA, 2));
  CHECK(AcdDeviceTypeName(5) == NULL);
  CHECK(strcmp(AcdEventKindName(ACD_EVENT_HIP), "hipEvent_t") == 0);

  struct AcdDevice* device;
  CHECK_FAILS(AcdDeviceResolve(5, 0, &device, &error), ENODEV, &error,
              "device_type: expected a device type of the header");
  // The spec only recommends -1 for the CPU: any id is the one CPU.
  CHECK(AcdDeviceResolve(ARROW_DEVICE_CPU, 0, &device, &error) == ACD_OK && device == AcdDeviceCpu());
  CHECK_FAILS(AcdDeviceResolve(ARROW_DEVICE_CUDA, -1, &device, &error), ENODEV, &error,
              "device_id: expected 0 to 2147483647 for ARROW_DEVICE_CUDA, found -1");
  CHECK_FAILS(AcdDeviceResolve(ARROW_DEVICE_METAL, (int64_t)1 << 40, &device, &error), ENODEV,
              &error, "ARROW_DEVICE_METAL");
  ArrowDeviceType type;
  CHECK(AcdDeviceTypeFromName("tpu", &type) == ENODEV);
}

// ---- memory -------------------------------------------------------------------

static void TestMemory(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct AcdDevice* cuda1 = Device(ARROW_DEVICE_CUDA, 1);
  struct AcdDevice* cuda2 = Device(ARROW_DEVICE_CUDA, 2);
  struct AcdDevice* webgpu = Device(ARROW_DEVICE_WEBGPU, 0);
  int64_t before_bytes = cuda1->bytes_allocated;
  int64_t before_allocations = cuda1->allocations;

  void* a = NULL;
  void* b = NULL;
  void* c = NULL;
  CHECK_OK(AcdDeviceAllocate(cuda1, 100, &a, &error), &error);
  CHECK_OK(AcdDeviceAllocate(cuda2, 0, &b, &error), &error);
  CHECK_OK(AcdDeviceAllocate(webgpu, 5000, &c, &error), &error);
  CHECK(InWindow(a) && InWindow(b) && InWindow(c));
  CHECK((uintptr_t)a % ACD_DEVICE_ALIGN == 0 && (uintptr_t)c % ACD_DEVICE_ALIGN == 0);
  CHECK(a != b && b != c && a != c);
  CHECK(cuda1->allocations == before_allocations + 1);
  CHECK(cuda1->bytes_allocated == before_bytes + ACD_DEVICE_ALIGN);

  // An address names its device; host reads of it are refused.
  ArrowDeviceType type = 0;
  int64_t id = 0;
  CHECK(AcdDeviceOwnerOf((const char*)a + 99, &type, &id) == ACD_OK);
  CHECK(type == ARROW_DEVICE_CUDA && id == 1);
  CHECK(AcdDeviceOwnerOf(b, &type, &id) == ACD_OK && id == 2);
  CHECK(AcdDeviceOwnerOf((const char*)a + 100, NULL, NULL) == ENOENT);  // past its end
  CHECK(AcdDeviceOwnerOf(&error, NULL, NULL) == ENOENT);
  const void* base = NULL;
  int64_t size = 0;
  CHECK(AcdDeviceMemoryRange((const char*)c + 4000, &base, &size) == ACD_OK);
  CHECK(base == c && size == 5000);
  CHECK(!AcdAddressRangeValid(a, 4));
  CHECK(!AcdAddressRangeValid(a, 0));
  char what[256];
  AcdDeviceDescribeAddress(a, 4, what, sizeof(what));
  CHECK(strstr(what, "memory of device cuda:1, not host memory") != NULL);
  AcdDeviceDescribeAddress((const char*)a + 200, 4, what, sizeof(what));
  CHECK(strstr(what, "in no live device allocation") != NULL);
  AcdDeviceDescribeAddress(&error, 4, what, sizeof(what));
  CHECK(what[0] == '\0');

  // Fresh device memory is poison; copies in and out go through the simulation.
  unsigned char bytes[100];
  CHECK_OK(AcdDeviceCopy(cuda1, a, AcdDeviceCpu(), bytes, 100, &error), &error);
  CHECK(bytes[0] == ACD_DEVICE_POISON && bytes[99] == ACD_DEVICE_POISON);
  for (int i = 0; i < 100; i++) bytes[i] = (unsigned char)i;
  CHECK_OK(AcdDeviceCopy(AcdDeviceCpu(), bytes, cuda1, a, 100, &error), &error);
  unsigned char back[100] = {0};
  CHECK_OK(AcdDeviceCopy(cuda1, a, AcdDeviceCpu(), back, 100, &error), &error);
  CHECK(memcmp(bytes, back, 100) == 0);
  int64_t value = 0;
  CHECK_OK(AcdDeviceReadInt(cuda1, a, 2, 4, &value, &error), &error);
  CHECK(value == (8 | 9 << 8 | 10 << 16 | 11 << 24));  // bytes 8..11

  // Bad ranges: past the allocation, the wrong device, host memory for a device.
  CHECK_FAILS(AcdDeviceCopy(cuda1, (const char*)a + 50, AcdDeviceCpu(), back, 60, &error), EINVAL,
              &error, "runs past the end of its cuda:1 allocation of 100 bytes");
  CHECK_FAILS(AcdDeviceCopy(cuda2, a, AcdDeviceCpu(), back, 4, &error), EINVAL, &error,
              "is memory of cuda:1, not of cuda:2");
  CHECK_FAILS(AcdDeviceCopy(cuda1, bytes, AcdDeviceCpu(), back, 4, &error), EINVAL, &error,
              "is not memory of cuda:1, but host memory");
  CHECK_FAILS(AcdDeviceCopy(AcdDeviceCpu(), a, AcdDeviceCpu(), back, 4, &error), EINVAL, &error,
              "is memory of device cuda:1, not host memory");

  CHECK_FAILS(AcdDeviceFree(cuda2, a, &error), EINVAL, &error, "not the start of a live allocation");
  CHECK_FAILS(AcdDeviceFree(cuda1, (char*)a + 4, &error), EINVAL, &error, "not the start");
  CHECK_OK(AcdDeviceFree(cuda1, a, &error), &error);
  CHECK_FAILS(AcdDeviceFree(cuda1, a, &error), EINVAL, &error, "not the start");
  CHECK(AcdDeviceOwnerOf(a, NULL, NULL) == ENOENT);
  CHECK_OK(AcdDeviceFree(cuda2, b, &error), &error);
  CHECK_OK(AcdDeviceFree(webgpu, c, &error), &error);
  CHECK_OK(AcdDeviceFree(webgpu, NULL, &error), &error);
  CHECK(cuda1->allocations == before_allocations && cuda1->bytes_allocated == before_bytes);
  CHECK_FAILS(AcdDeviceAllocate(cuda1, -1, &a, &error), EINVAL, &error, "cannot allocate -1");

  // Host-accessible memory is host memory, counted by its device.
  struct AcdDevice* pinned = Device(ARROW_DEVICE_CUDA_HOST, 0);
  void* h = NULL;
  CHECK_OK(AcdDeviceAllocate(pinned, 10, &h, &error), &error);
  CHECK(!InWindow(h) && AcdAddressRangeValid(h, 10));
  CHECK(AcdDeviceOwnerOf(h, &type, &id) == ACD_OK && type == ARROW_DEVICE_CUDA_HOST && id == 0);
  CHECK(pinned->allocations == 1 && pinned->bytes_allocated == 64);
  memset(h, 7, 10);
  CHECK_OK(AcdDeviceFree(pinned, h, &error), &error);
  CHECK(pinned->allocations == 0 && pinned->bytes_allocated == 0);

  // Many allocations: distinct, never overlapping, and all freed.
  void* many[64];
  for (int i = 0; i < 64; i++) AcdDeviceAllocate(webgpu, 1000 + i, &many[i], NULL);
  int distinct = 1;
  for (int i = 1; i < 64; i++) distinct &= (uintptr_t)many[i] >= (uintptr_t)many[i - 1] + 1000;
  CHECK(distinct);
  for (int i = 0; i < 64; i++) AcdDeviceFree(webgpu, many[i], NULL);
  CHECK(webgpu->allocations == 0 && webgpu->bytes_allocated == 0);
  CHECK(AcdBytesAllocated() == start);
}

// More than the whole window allocated over time: the next-fit cursor wraps
// around and skips the allocations still live.
static void TestWindowWraps(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct AcdDevice* vulkan = Device(ARROW_DEVICE_VULKAN, 0);
  void* kept = NULL;
  CHECK_OK(AcdDeviceAllocate(vulkan, 1000, &kept, &error), &error);
  const int64_t chunk = 4 << 20;
  int64_t rounds = (int64_t)(ACD_DEVICE_ADDRESS_SIZE / (uint64_t)chunk) + 8;
  uintptr_t previous = 0;
  int wrapped = 0;
  int ok = 1;
  for (int64_t i = 0; i < rounds && ok; i++) {
    void* p = NULL;
    ok = AcdDeviceAllocate(vulkan, chunk, &p, &error) == ACD_OK && InWindow(p) &&
         InWindow((char*)p + chunk - 1) &&
         ((uintptr_t)p >= (uintptr_t)kept + 1000 + ACD_DEVICE_ALIGN ||
          (uintptr_t)p + (uintptr_t)chunk + ACD_DEVICE_ALIGN <= (uintptr_t)kept);
    if ((uintptr_t)p < previous) wrapped++;
    previous = (uintptr_t)p;
    AcdDeviceFree(vulkan, p, NULL);
  }
  CHECK(ok);
  CHECK(wrapped == 1);
  CHECK(AcdDeviceOwnerOf(kept, NULL, NULL) == ACD_OK);
  CHECK_OK(AcdDeviceFree(vulkan, kept, &error), &error);
  CHECK(vulkan->allocations == 0 && AcdBytesAllocated() == start);
}

// ---- streams and events -----------------------------------------------------------

static void TestStreams(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct AcdDevice* cuda = Device(ARROW_DEVICE_CUDA, 0);
  struct AcdDevice* rocm = Device(ARROW_DEVICE_ROCM, 0);
  struct AcdDevice* webgpu = Device(ARROW_DEVICE_WEBGPU, 0);
  void* d = NULL;
  CHECK_OK(AcdDeviceAllocate(cuda, 64, &d, &error), &error);
  unsigned char src[64];
  for (int i = 0; i < 64; i++) src[i] = (unsigned char)(i + 1);

  struct AcdEvent event;
  CHECK_OK(AcdEventInit(&event, cuda, &error), &error);
  CHECK(event.kind == ACD_EVENT_CUDA);
  CHECK_OK(AcdEventQuery(&event, &error), &error);  // never recorded: complete
  CHECK_OK(AcdDeviceCopyAsync(AcdDeviceCpu(), src, cuda, d, 64, &error), &error);
  // The source was staged: changing it now changes nothing.
  src[0] = 99;
  CHECK_OK(AcdEventRecord(&event, cuda, &error), &error);
  CHECK_FAILS(AcdEventQuery(&event, &error), EBUSY, &error, "has not executed yet");

  // Reading before waiting: the bytes are not there yet, and the message says so.
  unsigned char out[64];
  CHECK_FAILS(AcdDeviceCopy(cuda, d, AcdDeviceCpu(), out, 64, &error), EBUSY, &error,
              "reading cuda:0 memory at ");
  CHECK(strstr(error.message, "before waiting on its sync event: 64 bytes are not there yet"));
  CHECK_FAILS(AcdDeviceCopy(cuda, (char*)d + 60, AcdDeviceCpu(), out, 4, &error), EBUSY, &error,
              "4 bytes are not there yet");
  int64_t value;
  CHECK_FAILS(AcdDeviceReadInt(cuda, d, 0, 8, &value, &error), EBUSY, &error, "8 bytes");

  CHECK_OK(AcdEventSynchronize(&event, &error), &error);
  CHECK_OK(AcdEventQuery(&event, &error), &error);
  CHECK_OK(AcdDeviceCopy(cuda, d, AcdDeviceCpu(), out, 64, &error), &error);
  CHECK(out[0] == 1 && out[63] == 64);

  // Pending ranges: a fill of bytes 8..24 and a copy of 16..40 leave 32 bytes pending.
  CHECK_OK(AcdDeviceMemsetAsync(cuda, (char*)d + 8, 0x11, 16, &error), &error);
  CHECK_OK(AcdDeviceCopyAsync(AcdDeviceCpu(), src, cuda, (char*)d + 16, 24, &error), &error);
  const struct AcdDeviceBlock* block = AcdDeviceBlockFind(d);
  CHECK(block != NULL && block->pending_ops == 2);
  CHECK(AcdDeviceStreamPendingBytes(block, 0, 64) == 32);
  CHECK(AcdDeviceStreamPendingBytes(block, 20, 4) == 4);
  CHECK(AcdDeviceStreamPendingBytes(block, 40, 24) == 0);
  CHECK_OK(AcdDeviceCopy(cuda, (char*)d + 40, AcdDeviceCpu(), out, 24, &error), &error);
  // A wait on the stream of another device runs this one's work up to the event.
  CHECK_OK(AcdEventRecord(&event, cuda, &error), &error);
  int64_t waited = rocm->events_waited;
  CHECK_OK(AcdDeviceStreamWaitEvent(rocm, &event, &error), &error);
  CHECK(rocm->events_waited == waited + 1);
  CHECK_OK(AcdDeviceCopy(cuda, d, AcdDeviceCpu(), out, 64, &error), &error);
  CHECK(out[8] == 0x11 && out[15] == 0x11 && out[16] == 99 && out[17] == 2 && out[40] == 41);

  // Freeing memory that pending work writes runs that work first (cudaFree does).
  CHECK_OK(AcdDeviceMemsetAsync(cuda, d, 0, 64, &error), &error);
  int64_t executed = cuda->ops_executed;
  CHECK_OK(AcdDeviceFree(cuda, d, &error), &error);
  CHECK(cuda->ops_executed == executed + 1);
  CHECK(cuda->stream.head == NULL && cuda->stream.enqueued == cuda->stream.executed);

  // Events belong to their device and kind.
  struct AcdEvent none;
  CHECK_FAILS(AcdEventInit(&none, webgpu, &error), EINVAL, &error,
              "webgpu:0 has no event type: its sync_event is always NULL");
  CHECK_FAILS(AcdEventRecord(&event, rocm, &error), EINVAL, &error,
              "the event belongs to cuda:0, the stream to rocm:0");
  CHECK_FAILS(AcdDeviceCopyAsync(AcdDeviceCpu(), src, AcdDeviceCpu(), out, 4, &error), EINVAL,
              &error, "the CPU has no stream");
  CHECK_FAILS(AcdDeviceCopyAsync(AcdDeviceCpu(), src, Device(ARROW_DEVICE_CUDA_HOST, 0), out, 4,
                                 &error),
              EINVAL, &error, "asynchronous copies write device allocations only");

  CHECK_OK(AcdEventValidate(NULL, cuda, &error), &error);
  CHECK_OK(AcdEventValidate(&event, cuda, &error), &error);
  CHECK_OK(AcdEventValidate(NULL, webgpu, &error), &error);
  CHECK_FAILS(AcdEventValidate(&event, webgpu, &error), EINVAL, &error,
              "sync_event: expected NULL for ARROW_DEVICE_WEBGPU, which has no event type");
  CHECK_FAILS(AcdEventValidate(&event, rocm, &error), EINVAL, &error,
              "expected a hipEvent_t* for ARROW_DEVICE_ROCM, found a cudaEvent_t*");
  CHECK_FAILS(AcdEventValidate(&event, Device(ARROW_DEVICE_CUDA, 1), &error), EINVAL, &error,
              "the event was created on cuda:0, the array is on cuda:1");
  uint64_t junk[2] = {42, 0};
  CHECK_FAILS(AcdEventValidate(junk, cuda, &error), EINVAL, &error,
              "is not the kind tag of a simulated event");
  struct AcdEvent copy = event;
  AcdEventDestroy(&event);
  CHECK(event.state == NULL);
  CHECK_FAILS(AcdEventValidate(&copy, cuda, &error), EINVAL, &error,
              "was destroyed or never created");
  CHECK_FAILS(AcdEventSynchronize(&copy, &error), EINVAL, &error, "is not live");
  CHECK(AcdBytesAllocated() == start);
}

// Host-accessible memory (pinned): the host may read it, but not before the
// copy into it has executed; AcdAddressRangeValid is the debug check.
static void TestPinnedPending(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct AcdDevice* pinned = Device(ARROW_DEVICE_ROCM_HOST, 0);
  void* h = NULL;
  CHECK_OK(AcdDeviceAllocate(pinned, 32, &h, &error), &error);
  int32_t values[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  struct AcdEvent event;
  CHECK_OK(AcdEventInit(&event, pinned, &error), &error);
  CHECK(event.kind == ACD_EVENT_HIP);
  CHECK_OK(AcdDeviceCopyAsync(AcdDeviceCpu(), values, pinned, h, 32, &error), &error);
  CHECK_OK(AcdEventRecord(&event, pinned, &error), &error);
  CHECK(!AcdAddressRangeValid(h, 32));
  CHECK(((unsigned char*)h)[0] == ACD_DEVICE_POISON);
  char what[256];
  AcdDeviceDescribeAddress(h, 32, what, sizeof(what));
  CHECK(strstr(what, "reading rocm_host:0 memory before waiting on its sync event: 32 bytes") != NULL);
  CHECK_OK(AcdEventSynchronize(&event, &error), &error);
  CHECK(AcdAddressRangeValid(h, 32));
  CHECK(memcmp(h, values, 32) == 0);
  AcdEventDestroy(&event);
  CHECK_OK(AcdDeviceFree(pinned, h, &error), &error);
  CHECK(AcdBytesAllocated() == start);
}

// ---- device arrays ------------------------------------------------------------------

// A record batch {a: int32 (sliced by 1), s: utf8, l: list<int8>} of 4 rows,
// built by hand on the CPU.
static void MakeBatch(struct ArrowSchema* schema, struct ArrowDeviceArray* out) {
  AcdSchemaInit(schema, "+s", NULL, NULL, 0, 3, 0, NULL);
  AcdSchemaInit(schema->children[0], "i", "a", NULL, ARROW_FLAG_NULLABLE, 0, 0, NULL);
  AcdSchemaInit(schema->children[1], "u", "s", NULL, ARROW_FLAG_NULLABLE, 0, 0, NULL);
  AcdSchemaInit(schema->children[2], "+l", "l", NULL, ARROW_FLAG_NULLABLE, 1, 0, NULL);
  AcdSchemaInit(schema->children[2]->children[0], "c", "item", NULL, 0, 0, 0, NULL);

  struct ArrowArray* root = &out->array;
  AcdArrayInit(root, 4, 0, 0, 1, 3, 0, NULL);
  struct ArrowArray* a = root->children[0];
  AcdArrayInit(a, 4, 1, 1, 2, 0, 0, NULL);
  *(uint8_t*)AcdArrayAllocateBuffer(a, 0, 1) = 0x1B;  // slots 0,1,3,4 valid: row 1 (slot 2) null
  int32_t a_values[5] = {9, 1, 0, 3, 4};
  memcpy(AcdArrayAllocateBuffer(a, 1, sizeof(a_values)), a_values, sizeof(a_values));

  struct ArrowArray* s = root->children[1];
  AcdArrayInit(s, 4, 1, 0, 3, 0, 0, NULL);
  *(uint8_t*)AcdArrayAllocateBuffer(s, 0, 1) = 0x0B;
  int32_t s_offsets[5] = {0, 1, 3, 3, 6};
  memcpy(AcdArrayAllocateBuffer(s, 1, sizeof(s_offsets)), s_offsets, sizeof(s_offsets));
  memcpy(AcdArrayAllocateBuffer(s, 2, 6), "xyyzzz", 6);

  struct ArrowArray* l = root->children[2];
  AcdArrayInit(l, 4, 1, 0, 2, 1, 0, NULL);
  *(uint8_t*)AcdArrayAllocateBuffer(l, 0, 1) = 0x0B;
  int32_t l_offsets[5] = {0, 1, 1, 1, 3};
  memcpy(AcdArrayAllocateBuffer(l, 1, sizeof(l_offsets)), l_offsets, sizeof(l_offsets));
  struct ArrowArray* item = l->children[0];
  AcdArrayInit(item, 3, 0, 0, 2, 0, 0, NULL);
  int8_t items[3] = {1, 2, 3};
  memcpy(AcdArrayAllocateBuffer(item, 1, 3), items, 3);
  AcdDeviceArrayInitDevice(out, ARROW_DEVICE_CPU, -1);
}

// Every non-NULL buffer of the tree is owned by (type, id).
static int AllOn(const struct ArrowArray* a, ArrowDeviceType type, int64_t id) {
  for (int64_t i = 0; i < a->n_buffers; i++) {
    ArrowDeviceType t;
    int64_t d;
    if (a->buffers[i] != NULL &&
        (AcdDeviceOwnerOf(a->buffers[i], &t, &d) != ACD_OK || t != type || d != id)) {
      return 0;
    }
  }
  for (int64_t i = 0; i < a->n_children; i++) {
    if (!AllOn(a->children[i], type, id)) return 0;
  }
  return 1;
}

static int SameBatch(const struct ArrowArray* root) {
  const struct ArrowArray* a = root->children[0];
  const struct ArrowArray* s = root->children[1];
  const struct ArrowArray* l = root->children[2];
  const int32_t* a_values = (const int32_t*)a->buffers[1];
  const int32_t* l_offsets = (const int32_t*)l->buffers[1];
  const int8_t* items = (const int8_t*)l->children[0]->buffers[1];
  return root->length == 4 && a->offset == 1 && a_values[1] == 1 && a_values[4] == 4 &&
         *(const uint8_t*)a->buffers[0] == 0x1B && memcmp(s->buffers[2], "xyyzzz", 6) == 0 &&
         ((const int32_t*)s->buffers[1])[4] == 6 && l_offsets[4] == 3 && items[2] == 3 &&
         l->null_count == 1;
}

static void TestDeviceArrays(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct AcdDevice* cuda1 = Device(ARROW_DEVICE_CUDA, 1);
  struct AcdDevice* rocm = Device(ARROW_DEVICE_ROCM, 0);
  struct AcdDevice* webgpu = Device(ARROW_DEVICE_WEBGPU, 0);
  int64_t cuda1_bytes = cuda1->bytes_allocated;
  struct ArrowSchema schema;
  struct ArrowDeviceArray host;
  MakeBatch(&schema, &host);
  CHECK_OK(AcdArrayValidate(&schema, &host.array, ACD_VALIDATION_FULL, &error), &error);
  CHECK_OK(AcdDeviceArrayValidate(&schema, &host, &error), &error);

  // Host → cuda:1: every buffer of every child there, an event, the source released.
  struct ArrowDeviceArray on_cuda;
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &host, cuda1, &on_cuda, &error), &error);
  CHECK(host.array.release == NULL);
  CHECK(on_cuda.device_type == ARROW_DEVICE_CUDA && on_cuda.device_id == 1);
  CHECK(on_cuda.reserved[0] == 0 && on_cuda.reserved[1] == 0 && on_cuda.reserved[2] == 0);
  CHECK(on_cuda.sync_event != NULL && ((struct AcdEvent*)on_cuda.sync_event)->kind == ACD_EVENT_CUDA);
  CHECK(AllOn(&on_cuda.array, ARROW_DEVICE_CUDA, 1));
  CHECK(cuda1->bytes_allocated > cuda1_bytes);
  CHECK_OK(AcdDeviceArrayValidate(&schema, &on_cuda, &error), &error);
  // The copies wait on the stream until a consumer waits on the event.
  int64_t value;
  CHECK_FAILS(AcdDeviceReadInt(cuda1, on_cuda.array.children[0]->buffers[1], 1, 4, &value, &error),
              EBUSY, &error, "before waiting on its sync event");

  // A host consumer reading the buffers directly gets an error naming the device.
  CHECK_FAILS(AcdArrayValidate(&schema, &on_cuda.array, ACD_VALIDATION_DEFAULT, &error), EINVAL,
              &error, "root.children[0].buffers[0]: expected 5 validity bits (1 bytes), found 0x");
  CHECK(strstr(error.message, ", which is memory of device cuda:1, not host memory: copy it to the "
                              "host first (import policy 'copy') or keep it on the device"));

  // cuda:1 → rocm:0 → webgpu:0 (no event type: synchronized, NULL sync_event) → CPU.
  struct ArrowDeviceArray on_rocm;
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &on_cuda, rocm, &on_rocm, &error), &error);
  CHECK(on_cuda.array.release == NULL);
  CHECK(((struct AcdEvent*)on_rocm.sync_event)->kind == ACD_EVENT_HIP);
  CHECK(AllOn(&on_rocm.array, ARROW_DEVICE_ROCM, 0));
  CHECK(cuda1->bytes_allocated == cuda1_bytes);
  struct ArrowDeviceArray on_webgpu;
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &on_rocm, webgpu, &on_webgpu, &error), &error);
  CHECK(on_webgpu.sync_event == NULL && AllOn(&on_webgpu.array, ARROW_DEVICE_WEBGPU, 0));
  CHECK_OK(AcdDeviceReadInt(webgpu, on_webgpu.array.children[0]->buffers[1], 1, 4, &value, &error),
           &error);
  CHECK(value == 1);

  // A copy leaves the source with the caller; the copy on the CPU reads as the original.
  struct ArrowDeviceArray back;
  CHECK_OK(AcdDeviceArrayCopy(&schema, &on_webgpu, AcdDeviceCpu(), &back, &error), &error);
  CHECK(on_webgpu.array.release != NULL);
  CHECK(back.device_type == ARROW_DEVICE_CPU && back.device_id == -1 && back.sync_event == NULL);
  CHECK_OK(AcdArrayValidate(&schema, &back.array, ACD_VALIDATION_FULL, &error), &error);
  CHECK(SameBatch(&back.array));
  // A child moved out survives its parent's release.
  struct ArrowArray child;
  AcdArrayMove(back.array.children[1], &child);
  AcdArrayRelease(&back.array);
  CHECK(memcmp(child.buffers[2], "xyyzzz", 6) == 0);
  AcdArrayRelease(&child);

  // Onto a host-accessible device: host buffers, an event, pending until waited on.
  struct ArrowDeviceArray pinned;
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &on_webgpu, Device(ARROW_DEVICE_CUDA_HOST, 0),
                                      &pinned, &error),
           &error);
  CHECK(AllOn(&pinned.array, ARROW_DEVICE_CUDA_HOST, 0) && !InWindow(pinned.array.children[0]->buffers[1]));
  CHECK_FAILS(AcdArrayValidate(&schema, &pinned.array, ACD_VALIDATION_DEFAULT, &error), EINVAL,
              &error, "reading cuda_host:0 memory before waiting on its sync event");
  CHECK_OK(AcdDeviceArraySync(&pinned, &error), &error);
  CHECK_OK(AcdArrayValidate(&schema, &pinned.array, ACD_VALIDATION_FULL, &error), &error);
  CHECK(SameBatch(&pinned.array));
  // Moving to the device it is on is a move, not a copy.
  struct ArrowDeviceArray same;
  const void* first = pinned.array.children[0]->buffers[1];
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &pinned, Device(ARROW_DEVICE_CUDA_HOST, 0), &same,
                                      &error),
           &error);
  CHECK(pinned.array.release == NULL && same.array.children[0]->buffers[1] == first);
  AcdArrayRelease(&same.array);

  AcdSchemaRelease(&schema);
  CHECK(cuda1->bytes_allocated == cuda1_bytes && rocm->bytes_allocated == 0 &&
        webgpu->bytes_allocated == 0 && Device(ARROW_DEVICE_CUDA_HOST, 0)->bytes_allocated == 0);
  CHECK(AcdBytesAllocated() == start);
}

static void TestDeviceArrayValidation(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  struct ArrowSchema schema;
  struct ArrowDeviceArray host;
  MakeBatch(&schema, &host);
  struct ArrowDeviceArray on_cuda;
  CHECK_OK(AcdDeviceArrayMoveToDevice(&schema, &host, Device(ARROW_DEVICE_CUDA, 0), &on_cuda,
                                      &error),
           &error);

  on_cuda.reserved[1] = 7;
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "reserved[1]: expected 0 (the producer must zero the reserved bytes), found 7");
  on_cuda.reserved[1] = 0;
  on_cuda.device_id = 1;  // its buffers and event are cuda:0's
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "the event was created on cuda:0, the array is on cuda:1");
  void* event = on_cuda.sync_event;
  on_cuda.sync_event = NULL;
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "root.children[0].buffers[0]: 0x");
  CHECK(strstr(error.message, "is memory of cuda:0, not of cuda:1 (the array's device)"));
  on_cuda.device_type = ARROW_DEVICE_CPU;
  on_cuda.device_id = -1;
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "is memory of device cuda:0, not host memory as cpu's must be");
  on_cuda.device_type = 6;
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), ENODEV, &error, "found 6");
  on_cuda.device_type = ARROW_DEVICE_CUDA;
  on_cuda.device_id = 0;
  on_cuda.sync_event = event;
  CHECK_OK(AcdDeviceArrayValidate(&schema, &on_cuda, &error), &error);

  // A host buffer in a CUDA array.
  const void* saved = on_cuda.array.children[1]->buffers[2];
  char host_bytes[8] = "xyyzzz";
  on_cuda.array.children[1]->buffers[2] = host_bytes;
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "root.children[1].buffers[2]: 0x");
  CHECK(strstr(error.message, "is not memory of cuda:0 (the array's device), but host memory"));
  on_cuda.array.children[1]->buffers[2] = saved;

  // A copy onto the CPU is refused when the source is bad, and allocates nothing.
  int64_t before = AcdBytesAllocated();
  struct ArrowDeviceArray out;
  on_cuda.array.children[1]->length = 2;  // shorter than the parent
  CHECK_FAILS(AcdDeviceArrayCopy(&schema, &on_cuda, AcdDeviceCpu(), &out, &error), EINVAL, &error,
              "root.children[1].length");
  CHECK(out.array.release == NULL && AcdBytesAllocated() == before);
  on_cuda.array.children[1]->length = 4;
  // Offsets that point past the data allocation: the copy fails, nothing leaks.
  // (Waiting executes the staged copies, whose staging memory is then freed.)
  CHECK_OK(AcdDeviceArraySync(&on_cuda, &error), &error);
  before = AcdBytesAllocated();
  int32_t bad_last = 1000;
  CHECK_OK(AcdDeviceCopy(AcdDeviceCpu(), &bad_last, Device(ARROW_DEVICE_CUDA, 0),
                         (char*)(uintptr_t)on_cuda.array.children[1]->buffers[1] + 16, 4, &error),
           &error);
  CHECK_FAILS(AcdDeviceArrayCopy(&schema, &on_cuda, AcdDeviceCpu(), &out, &error), EINVAL, &error,
              "root.children[1].buffers[2]: 0x");
  CHECK(strstr(error.message, "(+1000 bytes) runs past the end of its cuda:0 allocation of 6 bytes"));
  // The path on its own, for callers that must not parse the message.
  CHECK(strcmp(error.path, "root.children[1].buffers[2]") == 0);
  CHECK(out.array.release == NULL && AcdBytesAllocated() == before);

  on_cuda.array.release(&on_cuda.array);
  CHECK_FAILS(AcdDeviceArrayValidate(&schema, &on_cuda, &error), EINVAL, &error,
              "found a released one");
  AcdSchemaRelease(&schema);
  CHECK(AcdBytesAllocated() == start);
}

// ---- the spec's example ----------------------------------------------------------------

static void TestSpecExample(void) {
  struct AcdError error;
  int64_t start = AcdBytesAllocated();
  int32_t values[4] = {10, 20, 30, 40};
  void* data = NULL;
  cudaStream_t stream;
  CHECK(cudaSetDevice(2) == cudaSuccess);
  CHECK(cudaMalloc(&data, sizeof(values)) == cudaSuccess);
  CHECK(cudaStreamCreate(&stream) == cudaSuccess);
  CHECK(cudaMemcpyAsync(data, values, sizeof(values), cudaMemcpyHostToDevice, stream) ==
        cudaSuccess);
  struct ArrowDeviceArray array;
  export_int32_device_array(data, stream, 4, &array);
  CHECK(array.device_type == ARROW_DEVICE_CUDA && array.device_id == 2);
  CHECK(array.reserved[0] == 0 && array.reserved[2] == 0);

  // The exported struct is a valid device array for this simulation's checks.
  struct ArrowSchema schema;
  AcdSchemaInit(&schema, "i", NULL, NULL, 0, 0, 0, NULL);
  CHECK_OK(AcdDeviceArrayValidate(&schema, &array, &error), &error);

  // Before the wait: the event is pending and a read fails, naming the device.
  CHECK(cudaEventQuery(*(cudaEvent_t*)array.sync_event) == cudaErrorNotReady);
  int32_t early[4];
  CHECK(cudaMemcpy(early, data, sizeof(early), cudaMemcpyDeviceToHost) == cudaErrorNotReady);
  CHECK(strstr(acdSimLastErrorMessage(), "reading cuda:2 memory at ") != NULL);
  CHECK(strstr(acdSimLastErrorMessage(), "16 bytes are not there yet") != NULL);
  CHECK(cudaMemcpy(early, data, sizeof(early), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);

  // The consumer waits, then reads the values back, then releases.
  int32_t out[4] = {0};
  CHECK(consume_int32_device_array(&array, out, 4, &error) == 4);
  CHECK(out[0] == 10 && out[3] == 40);
  CHECK(array.array.release == NULL);

  // A consumer of another device type refuses it.
  data = NULL;
  CHECK(cudaMalloc(&data, 4) == cudaSuccess);
  export_int32_device_array(data, stream, 1, &array);
  array.device_type = ARROW_DEVICE_ROCM;
  CHECK(consume_int32_device_array(&array, out, 4, &error) == -1);
  CHECK(strstr(error.message, "expected ARROW_DEVICE_CUDA (2), found 10") != NULL);
  array.array.release(&array.array);
  AcdSchemaRelease(&schema);
  CHECK(Device(ARROW_DEVICE_CUDA, 2)->bytes_allocated == 0);
  CHECK(AcdBytesAllocated() == start);
  cudaSetDevice(0);
}

int main(void) {
  TestKinds();
  TestMemory();
  TestWindowWraps();
  TestStreams();
  TestPinnedPending();
  TestDeviceArrays();
  TestDeviceArrayValidation();
  TestSpecExample();
  return CheckSummary("c-device");
}
