// The wasm exports of the streams (embind): pull streams, the async device
// stream, the C producers and consumers, and trampolines that call a struct's
// function pointer for TypeScript (a call_indirect whose signature the wasm
// engine checks). Pointers cross as unsigned 32-bit numbers, counts as
// doubles. Fallible calls return an errno-style code; the message of the last
// failure is read with streamLastError().

#include <emscripten/bind.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

#include "stream/stream.h"

namespace {

AcdError stream_error = {{0}, {0}};

template <typename T>
T* Ptr(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

uintptr_t Addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

std::string StreamLastError() { return std::string(stream_error.message); }

// ---- raw trampolines: call the producer's callback, nothing else --------------
// Each checks the callback first (ACD_CALLBACK_CHECK): one that cannot be
// called gives EINVAL (0 for get_last_error) with the message in
// streamLastError, instead of a trap. Void callbacks return ACD_OK when called.

template <typename T>
bool Aligned(const T* p, const char* call) {
  if (reinterpret_cast<uintptr_t>(p) % alignof(T) == 0) return true;
  AcdErrorSet(&stream_error, EINVAL, "%s: the struct at %p is misaligned", call,
              static_cast<const void*>(p));
  return false;
}

#define ACD_TRAMPOLINE_CHECK(ptr, fn, role, name)                                  \
  do {                                                                             \
    stream_error.message[0] = '\0'; /* empty unless this check refuses */          \
    if (!Aligned(ptr, name)) return EINVAL;                                        \
    int code_ = ACD_CALLBACK_CHECK(ptr->fn, role, name, &stream_error);            \
    if (code_ != ACD_OK) return code_;                                             \
  } while (0)

int ArrayStreamCallGetSchema(uintptr_t s, uintptr_t out) {
  auto* stream = Ptr<ArrowArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, get_schema, ACD_ROLE_ARRAY_STREAM_GET_SCHEMA, "get_schema");
  return stream->get_schema(stream, Ptr<ArrowSchema>(out));
}
int ArrayStreamCallGetNext(uintptr_t s, uintptr_t out) {
  auto* stream = Ptr<ArrowArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, get_next, ACD_ROLE_ARRAY_STREAM_GET_NEXT, "get_next");
  return stream->get_next(stream, Ptr<ArrowArray>(out));
}
uintptr_t ArrayStreamCallGetLastError(uintptr_t s) {
  auto* stream = Ptr<ArrowArrayStream>(s);
  if (!Aligned(stream, "get_last_error") ||
      ACD_CALLBACK_CHECK(stream->get_last_error, ACD_ROLE_ARRAY_STREAM_GET_LAST_ERROR,
                         "get_last_error", &stream_error) != ACD_OK) {
    return 0;
  }
  return Addr(stream->get_last_error(stream));
}
int ArrayStreamCallRelease(uintptr_t s) {
  auto* stream = Ptr<ArrowArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, release, ACD_ROLE_ARRAY_STREAM_RELEASE, "release");
  stream->release(stream);
  return ACD_OK;
}
int DeviceArrayStreamCallGetSchema(uintptr_t s, uintptr_t out) {
  auto* stream = Ptr<ArrowDeviceArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, get_schema, ACD_ROLE_DEVICE_STREAM_GET_SCHEMA, "get_schema");
  return stream->get_schema(stream, Ptr<ArrowSchema>(out));
}
int DeviceArrayStreamCallGetNext(uintptr_t s, uintptr_t out) {
  auto* stream = Ptr<ArrowDeviceArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, get_next, ACD_ROLE_DEVICE_STREAM_GET_NEXT, "get_next");
  return stream->get_next(stream, Ptr<ArrowDeviceArray>(out));
}
uintptr_t DeviceArrayStreamCallGetLastError(uintptr_t s) {
  auto* stream = Ptr<ArrowDeviceArrayStream>(s);
  if (!Aligned(stream, "get_last_error") ||
      ACD_CALLBACK_CHECK(stream->get_last_error, ACD_ROLE_DEVICE_STREAM_GET_LAST_ERROR,
                         "get_last_error", &stream_error) != ACD_OK) {
    return 0;
  }
  return Addr(stream->get_last_error(stream));
}
int DeviceArrayStreamCallRelease(uintptr_t s) {
  auto* stream = Ptr<ArrowDeviceArrayStream>(s);
  ACD_TRAMPOLINE_CHECK(stream, release, ACD_ROLE_DEVICE_STREAM_RELEASE, "release");
  stream->release(stream);
  return ACD_OK;
}

int AsyncHandlerCallOnSchema(uintptr_t h, uintptr_t schema) {
  auto* handler = Ptr<ArrowAsyncDeviceStreamHandler>(h);
  ACD_TRAMPOLINE_CHECK(handler, on_schema, ACD_ROLE_HANDLER_ON_SCHEMA, "on_schema");
  return handler->on_schema(handler, Ptr<ArrowSchema>(schema));
}
int AsyncHandlerCallOnNextTask(uintptr_t h, uintptr_t task, uintptr_t metadata) {
  auto* handler = Ptr<ArrowAsyncDeviceStreamHandler>(h);
  ACD_TRAMPOLINE_CHECK(handler, on_next_task, ACD_ROLE_HANDLER_ON_NEXT_TASK, "on_next_task");
  return handler->on_next_task(handler, Ptr<ArrowAsyncTask>(task), Ptr<const char>(metadata));
}
int AsyncHandlerCallOnError(uintptr_t h, int code, uintptr_t message, uintptr_t metadata) {
  auto* handler = Ptr<ArrowAsyncDeviceStreamHandler>(h);
  ACD_TRAMPOLINE_CHECK(handler, on_error, ACD_ROLE_HANDLER_ON_ERROR, "on_error");
  handler->on_error(handler, code, Ptr<const char>(message), Ptr<const char>(metadata));
  return ACD_OK;
}
int AsyncHandlerCallRelease(uintptr_t h) {
  auto* handler = Ptr<ArrowAsyncDeviceStreamHandler>(h);
  ACD_TRAMPOLINE_CHECK(handler, release, ACD_ROLE_HANDLER_RELEASE, "release");
  handler->release(handler);
  return ACD_OK;
}
int AsyncProducerCallRequest(uintptr_t p, double n) {
  auto* producer = Ptr<ArrowAsyncProducer>(p);
  ACD_TRAMPOLINE_CHECK(producer, request, ACD_ROLE_PRODUCER_REQUEST, "producer.request");
  producer->request(producer, static_cast<int64_t>(n));
  return ACD_OK;
}
int AsyncProducerCallCancel(uintptr_t p) {
  auto* producer = Ptr<ArrowAsyncProducer>(p);
  ACD_TRAMPOLINE_CHECK(producer, cancel, ACD_ROLE_PRODUCER_CANCEL, "producer.cancel");
  producer->cancel(producer);
  return ACD_OK;
}
int AsyncTaskCallExtractData(uintptr_t t, uintptr_t out) {
  auto* task = Ptr<ArrowAsyncTask>(t);
  ACD_TRAMPOLINE_CHECK(task, extract_data, ACD_ROLE_TASK_EXTRACT_DATA, "task.extract_data");
  return task->extract_data(task, Ptr<ArrowDeviceArray>(out));
}

// ---- checked consumer calls (the message goes to streamLastError) ------------

int ArrayStreamGetSchema(uintptr_t s, uintptr_t out) {
  return AcdArrayStreamGetSchema(Ptr<ArrowArrayStream>(s), Ptr<ArrowSchema>(out), &stream_error);
}
int ArrayStreamGetNext(uintptr_t s, uintptr_t out) {
  return AcdArrayStreamGetNext(Ptr<ArrowArrayStream>(s), Ptr<ArrowArray>(out), &stream_error);
}
int DeviceArrayStreamGetSchema(uintptr_t s, uintptr_t out) {
  return AcdDeviceArrayStreamGetSchema(Ptr<ArrowDeviceArrayStream>(s), Ptr<ArrowSchema>(out),
                                       &stream_error);
}
int DeviceArrayStreamGetNext(uintptr_t s, uintptr_t out) {
  return AcdDeviceArrayStreamGetNext(Ptr<ArrowDeviceArrayStream>(s), Ptr<ArrowDeviceArray>(out),
                                     &stream_error);
}
void ArrayStreamMove(uintptr_t src, uintptr_t dst) {
  AcdArrayStreamMove(Ptr<ArrowArrayStream>(src), Ptr<ArrowArrayStream>(dst));
}
void DeviceArrayStreamMove(uintptr_t src, uintptr_t dst) {
  AcdDeviceArrayStreamMove(Ptr<ArrowDeviceArrayStream>(src), Ptr<ArrowDeviceArrayStream>(dst));
}
int ArrayStreamRelease(uintptr_t s) {
  return AcdArrayStreamReleaseChecked(Ptr<ArrowArrayStream>(s), &stream_error);
}
int DeviceArrayStreamRelease(uintptr_t s) {
  return AcdDeviceArrayStreamReleaseChecked(Ptr<ArrowDeviceArrayStream>(s), &stream_error);
}

// ---- batch sources and lists -------------------------------------------------

// A new AcdBatchSource struct holding a generator; 0 on failure.
uintptr_t GeneratorSourceNew(double n_batches, double rows_per_batch, int device_type,
                             double device_id, double fail_at, int fail_code, bool has_message,
                             const std::string& fail_message, double wrong_device_at) {
  AcdGeneratorOptions options;
  AcdGeneratorOptionsInit(&options);
  options.n_batches = static_cast<int64_t>(n_batches);
  options.rows_per_batch = static_cast<int64_t>(rows_per_batch);
  options.device_type = device_type;
  options.device_id = static_cast<int64_t>(device_id);
  options.fail_at = static_cast<int64_t>(fail_at);
  options.fail_code = fail_code;
  options.fail_message = has_message ? fail_message.c_str() : nullptr;
  options.wrong_device_at = static_cast<int64_t>(wrong_device_at);
  auto* source = static_cast<AcdBatchSource*>(AcdCalloc(1, sizeof(AcdBatchSource)));
  if (source == nullptr) {
    AcdErrorSet(&stream_error, ENOMEM, "out of memory allocating a source");
    return 0;
  }
  if (AcdBatchSourceInitGenerator(source, &options, &stream_error) != ACD_OK) {
    AcdFree(source);
    return 0;
  }
  return Addr(source);
}

// A new AcdBatchSource struct taking the list's content; 0 on failure.
uintptr_t ListSourceNew(uintptr_t list) {
  auto* source = static_cast<AcdBatchSource*>(AcdCalloc(1, sizeof(AcdBatchSource)));
  if (source == nullptr) {
    AcdErrorSet(&stream_error, ENOMEM, "out of memory allocating a source");
    return 0;
  }
  if (AcdBatchSourceInitList(source, Ptr<AcdBatchList>(list), &stream_error) != ACD_OK) {
    AcdFree(source);
    return 0;
  }
  return Addr(source);
}

// Releases the source when it was not moved out, and frees the struct.
void SourceFree(uintptr_t source) {
  AcdBatchSourceRelease(Ptr<AcdBatchSource>(source));
  AcdFree(Ptr<void>(source));
}

uintptr_t ListNew() {
  auto* list = static_cast<AcdBatchList*>(AcdCalloc(1, sizeof(AcdBatchList)));
  if (list == nullptr) {
    AcdErrorSet(&stream_error, ENOMEM, "out of memory allocating a list");
    return 0;
  }
  AcdBatchListInit(list);
  return Addr(list);
}
void ListFree(uintptr_t list) {
  AcdBatchListReset(Ptr<AcdBatchList>(list));
  AcdFree(Ptr<void>(list));
}
double ListLength(uintptr_t list) { return static_cast<double>(Ptr<AcdBatchList>(list)->length); }
int ListDeviceType(uintptr_t list) { return Ptr<AcdBatchList>(list)->device_type; }
uintptr_t ListSchema(uintptr_t list) { return Addr(&Ptr<AcdBatchList>(list)->schema); }
uintptr_t ListArray(uintptr_t list, double i) {
  auto* l = Ptr<AcdBatchList>(list);
  auto at = static_cast<int64_t>(i);
  return at >= 0 && at < l->length ? Addr(&l->arrays[at]) : 0;
}

// ---- the C pull producer and consumer ----------------------------------------

int ArrayStreamInitSource(uintptr_t stream, uintptr_t source) {
  return AcdArrayStreamInitSource(Ptr<ArrowArrayStream>(stream), Ptr<AcdBatchSource>(source),
                                  &stream_error);
}
int DeviceArrayStreamInitSource(uintptr_t stream, uintptr_t source) {
  return AcdDeviceArrayStreamInitSource(Ptr<ArrowDeviceArrayStream>(stream),
                                        Ptr<AcdBatchSource>(source), &stream_error);
}
// totals: 0, or 16 bytes for two int64 (batches, rows).
int ArrayStreamDrain(uintptr_t stream, uintptr_t list, uintptr_t totals) {
  return AcdArrayStreamDrain(Ptr<ArrowArrayStream>(stream), Ptr<AcdBatchList>(list),
                             Ptr<AcdStreamTotals>(totals), &stream_error);
}
int DeviceArrayStreamDrain(uintptr_t stream, uintptr_t list, uintptr_t totals) {
  return AcdDeviceArrayStreamDrain(Ptr<ArrowDeviceArrayStream>(stream), Ptr<AcdBatchList>(list),
                                   Ptr<AcdStreamTotals>(totals), &stream_error);
}

// ---- the async device stream ---------------------------------------------------

// fn: a table index of a void(void*) function (TypeScript's scheduler), or 0.
void AsyncSetScheduler(uintptr_t fn) {
  AcdAsyncSetScheduler(reinterpret_cast<AcdAsyncScheduleFn>(fn), nullptr);
}
double AsyncPump(double max_steps) { return static_cast<double>(AcdAsyncPump(static_cast<int64_t>(max_steps))); }
// After asyncPump threw: makes the pump usable and tells the object cut short.
void AsyncPumpAbort(int code, std::string message) { AcdAsyncPumpAbort(code, message.c_str()); }
double AsyncPending() { return static_cast<double>(AcdAsyncPending()); }
// out: 48 bytes, the six int64 counters of AcdAsyncStats in order.
void AsyncStats(uintptr_t out) { AcdAsyncStatsGet(Ptr<AcdAsyncStats>(out)); }

int AsyncProducerStart(uintptr_t handler, uintptr_t source, uintptr_t metadata) {
  return AcdAsyncProducerStart(Ptr<ArrowAsyncDeviceStreamHandler>(handler),
                               Ptr<AcdBatchSource>(source), Ptr<const char>(metadata),
                               &stream_error);
}

uintptr_t AsyncConsumerNew(double window, bool extract_later, double cancel_after,
                           double fail_task_at, bool fail_schema) {
  AcdAsyncConsumerOptions options;
  AcdAsyncConsumerOptionsInit(&options);
  options.window = static_cast<int64_t>(window);
  options.extract_later = extract_later ? 1 : 0;
  options.cancel_after = static_cast<int64_t>(cancel_after);
  options.fail_task_at = static_cast<int64_t>(fail_task_at);
  options.fail_schema = fail_schema ? 1 : 0;
  AcdAsyncConsumer* consumer = nullptr;
  if (AcdAsyncConsumerNew(&options, &consumer, &stream_error) != ACD_OK) return 0;
  return Addr(consumer);
}
uintptr_t AsyncConsumerHandler(uintptr_t c) {
  return Addr(AcdAsyncConsumerHandler(Ptr<AcdAsyncConsumer>(c)));
}
AcdAsyncConsumerState ConsumerState(uintptr_t c) {
  AcdAsyncConsumerState state;
  AcdAsyncConsumerGetState(Ptr<AcdAsyncConsumer>(c), &state);
  return state;
}
// Bits: 1 schema received, 2 ended, 4 released.
int AsyncConsumerFlags(uintptr_t c) {
  AcdAsyncConsumerState s = ConsumerState(c);
  return (s.schema_received ? 1 : 0) | (s.ended ? 2 : 0) | (s.released ? 4 : 0);
}
int AsyncConsumerErrorCode(uintptr_t c) { return ConsumerState(c).error_code; }
std::string AsyncConsumerErrorMessage(uintptr_t c) {
  const char* message = ConsumerState(c).error_message;
  return message == nullptr ? std::string() : std::string(message);
}
uintptr_t AsyncConsumerMetadata(uintptr_t c) { return Addr(ConsumerState(c).additional_metadata); }
double AsyncConsumerTasks(uintptr_t c) { return static_cast<double>(ConsumerState(c).tasks); }
double AsyncConsumerRequested(uintptr_t c) { return static_cast<double>(ConsumerState(c).requested); }
uintptr_t AsyncConsumerList(uintptr_t c) { return Addr(ConsumerState(c).list); }
void AsyncConsumerFree(uintptr_t c) { AcdAsyncConsumerFree(Ptr<AcdAsyncConsumer>(c)); }

}  // namespace

EMSCRIPTEN_BINDINGS(arrow_c_device_stream) {
  using emscripten::function;
  function("streamLastError", &StreamLastError);
  function("arrayStreamCallGetSchema", &ArrayStreamCallGetSchema);
  function("arrayStreamCallGetNext", &ArrayStreamCallGetNext);
  function("arrayStreamCallGetLastError", &ArrayStreamCallGetLastError);
  function("arrayStreamCallRelease", &ArrayStreamCallRelease);
  function("deviceArrayStreamCallGetSchema", &DeviceArrayStreamCallGetSchema);
  function("deviceArrayStreamCallGetNext", &DeviceArrayStreamCallGetNext);
  function("deviceArrayStreamCallGetLastError", &DeviceArrayStreamCallGetLastError);
  function("deviceArrayStreamCallRelease", &DeviceArrayStreamCallRelease);
  function("asyncHandlerCallOnSchema", &AsyncHandlerCallOnSchema);
  function("asyncHandlerCallOnNextTask", &AsyncHandlerCallOnNextTask);
  function("asyncHandlerCallOnError", &AsyncHandlerCallOnError);
  function("asyncHandlerCallRelease", &AsyncHandlerCallRelease);
  function("asyncProducerCallRequest", &AsyncProducerCallRequest);
  function("asyncProducerCallCancel", &AsyncProducerCallCancel);
  function("asyncTaskCallExtractData", &AsyncTaskCallExtractData);
  function("arrayStreamGetSchema", &ArrayStreamGetSchema);
  function("arrayStreamGetNext", &ArrayStreamGetNext);
  function("deviceArrayStreamGetSchema", &DeviceArrayStreamGetSchema);
  function("deviceArrayStreamGetNext", &DeviceArrayStreamGetNext);
  function("arrayStreamMove", &ArrayStreamMove);
  function("deviceArrayStreamMove", &DeviceArrayStreamMove);
  function("arrayStreamRelease", &ArrayStreamRelease);
  function("deviceArrayStreamRelease", &DeviceArrayStreamRelease);
  function("generatorSourceNew", &GeneratorSourceNew);
  function("listSourceNew", &ListSourceNew);
  function("sourceFree", &SourceFree);
  function("listNew", &ListNew);
  function("listFree", &ListFree);
  function("listLength", &ListLength);
  function("listDeviceType", &ListDeviceType);
  function("listSchema", &ListSchema);
  function("listArray", &ListArray);
  function("arrayStreamInitSource", &ArrayStreamInitSource);
  function("deviceArrayStreamInitSource", &DeviceArrayStreamInitSource);
  function("arrayStreamDrain", &ArrayStreamDrain);
  function("deviceArrayStreamDrain", &DeviceArrayStreamDrain);
  function("asyncSetScheduler", &AsyncSetScheduler);
  function("asyncPump", &AsyncPump);
  function("asyncPumpAbort", &AsyncPumpAbort);
  function("asyncPending", &AsyncPending);
  function("asyncStats", &AsyncStats);
  function("asyncProducerStart", &AsyncProducerStart);
  function("asyncConsumerNew", &AsyncConsumerNew);
  function("asyncConsumerHandler", &AsyncConsumerHandler);
  function("asyncConsumerFlags", &AsyncConsumerFlags);
  function("asyncConsumerErrorCode", &AsyncConsumerErrorCode);
  function("asyncConsumerErrorMessage", &AsyncConsumerErrorMessage);
  function("asyncConsumerMetadata", &AsyncConsumerMetadata);
  function("asyncConsumerTasks", &AsyncConsumerTasks);
  function("asyncConsumerRequested", &AsyncConsumerRequested);
  function("asyncConsumerList", &AsyncConsumerList);
  function("asyncConsumerFree", &AsyncConsumerFree);
}
