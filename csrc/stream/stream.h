// arrow-c-device, the C core's own API, part 5 of 5: streams. Pull streams
// (the C Stream and Device Stream Interfaces) and async device streams, their
// C producers and consumers. Depends on device/, validate/, model/ and abi/.

#ifndef ACD_STREAM_H_INCLUDED
#define ACD_STREAM_H_INCLUDED

#include <stddef.h>
#include <stdint.h>

#include "device/device.h"

#ifdef __cplusplus
extern "C" {
#endif

// ---- streams (stream.c, calls.c, source.c) --------------------------------
// Pull streams as the C Stream Interface and the C Device Stream Interface
// define them (modelled on nanoarrow's array_stream.c): moves, consumer-side
// calls that enforce the protocol, a C producer over a batch source, and a C
// consumer that drains a stream.

// Bitwise moves: dst takes src's content and src is marked released
// (release = NULL) without its release callback being called.
void AcdArrayStreamMove(struct ArrowArrayStream* src, struct ArrowArrayStream* dst);
void AcdDeviceArrayStreamMove(struct ArrowDeviceArrayStream* src,
                              struct ArrowDeviceArrayStream* dst);

// Calls the release callback when the stream is not released yet (NULL allowed).
void AcdArrayStreamRelease(struct ArrowArrayStream* stream);
void AcdDeviceArrayStreamRelease(struct ArrowDeviceArrayStream* stream);
// The same, with a release that cannot be called reported in error (as
// AcdSchemaReleaseChecked: never called, the stream marked released).
int AcdArrayStreamReleaseChecked(struct ArrowArrayStream* stream, struct AcdError* error);
int AcdDeviceArrayStreamReleaseChecked(struct ArrowDeviceArrayStream* stream,
                                       struct AcdError* error);

// Consumer-side calls of a stream's callbacks. A released stream is refused
// (EINVAL, nothing is called). When the producer returns non-zero, its code is
// returned and error holds "<callback>: " and get_last_error's message (called
// only then, and copied at once), or a generic message when it gives NULL.
// On success the caller owns `out`: a schema, or an array that is released
// (release == NULL) at the end of the stream. The device GetNext also checks
// that a batch's device_type is the stream's: a mismatch releases the batch
// and returns EINVAL. The caller keeps ownership of the stream in every case.
int AcdArrayStreamGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out,
                            struct AcdError* error);
int AcdArrayStreamGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out,
                          struct AcdError* error);
int AcdDeviceArrayStreamGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out,
                                  struct AcdError* error);
int AcdDeviceArrayStreamGetNext(struct ArrowDeviceArrayStream* stream,
                                struct ArrowDeviceArray* out, struct AcdError* error);

// A copy of a schema tree made with AcdSchemaInit (owned by dst, released by
// its release). On failure dst is released and nothing stays allocated.
int AcdSchemaDeepCopy(const struct ArrowSchema* src, struct ArrowSchema* dst,
                      struct AcdError* error);

// A schema and the device arrays of one stream, owned by the core: what the C
// consumers collect and what a list source hands out again.
struct AcdBatchList {
  // Released (release == NULL) until set.
  struct ArrowSchema schema;
  // 0 until set.
  ArrowDeviceType device_type;
  int64_t length;
  int64_t capacity;
  struct ArrowDeviceArray* arrays;
};

// An empty list; allocates nothing.
void AcdBatchListInit(struct AcdBatchList* list);

// Moves *array to the end of the list (array is marked released). On ENOMEM
// the caller keeps array.
int AcdBatchListAppend(struct AcdBatchList* list, struct ArrowDeviceArray* array,
                       struct AcdError* error);

// Releases the schema and every array and frees the storage: the list is
// empty again.
void AcdBatchListReset(struct AcdBatchList* list);

// Where a C producer's batches come from. Same contract as a device stream,
// with the message in `error` instead of get_last_error. Owned by whoever
// holds it; moved like the ABI structs (release == NULL: released).
struct AcdBatchSource {
  ArrowDeviceType device_type;
  int (*get_schema)(struct AcdBatchSource* self, struct ArrowSchema* out,
                    struct AcdError* error);
  int (*get_next)(struct AcdBatchSource* self, struct ArrowDeviceArray* out,
                  struct AcdError* error);
  void (*release)(struct AcdBatchSource* self);
  void* private_data;
};

void AcdBatchSourceMove(struct AcdBatchSource* src, struct AcdBatchSource* dst);
void AcdBatchSourceRelease(struct AcdBatchSource* source);

// A generated stream, for tests and fixtures: struct<id: int32 not null,
// value: double, name: utf8>; row r of the stream (batch b, index i,
// r = b * rows_per_batch + i) has id r, value r * 0.5 (null when r % 7 == 3)
// and name "r<r>" (null when r % 5 == 4).
struct AcdGeneratorOptions {
  int64_t n_batches;
  int64_t rows_per_batch;
  ArrowDeviceType device_type;
  int64_t device_id;
  // get_next fails with fail_code and fail_message at batch fail_at (-1:
  // never; -2: get_schema fails). The message is copied.
  int64_t fail_at;
  int fail_code;
  const char* fail_message;
  // Batch wrong_device_at is labelled ARROW_DEVICE_EXT_DEV instead of
  // device_type (-1: never), to test the consumers' checks.
  int64_t wrong_device_at;
};

// Defaults: 3 batches of 5 rows on the CPU (device_id -1), no failure.
void AcdGeneratorOptionsInit(struct AcdGeneratorOptions* options);

// Initializes source (its old content is ignored). On failure nothing is
// allocated and source->release is NULL.
int AcdBatchSourceInitGenerator(struct AcdBatchSource* source,
                                const struct AcdGeneratorOptions* options,
                                struct AcdError* error);

// A source that hands out the list's batches in order (a copy of its schema
// on each get_schema). On success source owns the list's content and the list
// is empty; on failure the list is unchanged.
int AcdBatchSourceInitList(struct AcdBatchSource* source, struct AcdBatchList* list,
                           struct AcdError* error);

// The C producer: initializes stream (its old content is ignored) to hand out
// source's batches; its device_type is the source's. Each batch must be on the
// stream's device type (the CPU for an ArrowArrayStream), else get_next fails
// with EINVAL. After a failure every later get_next fails the same way. On
// success stream owns source (moved; released with the stream); on failure
// the caller keeps source and stream->release is NULL.
int AcdArrayStreamInitSource(struct ArrowArrayStream* stream, struct AcdBatchSource* source,
                             struct AcdError* error);
int AcdDeviceArrayStreamInitSource(struct ArrowDeviceArrayStream* stream,
                                   struct AcdBatchSource* source, struct AcdError* error);

struct AcdStreamTotals {
  int64_t batches;
  int64_t rows;
};

// The C consumer: takes the schema, then every batch up to the end, checks
// each against the schema (ACD_VALIDATION_DEFAULT on the CPU; on other
// devices, whose memory the host does not read, AcdDeviceArrayValidate) and
// against the stream's device type, and moves it into list (or releases it
// when list is NULL).
// The stream is released in every case. On failure the list keeps the
// batches that came before, totals (NULL allowed) count them, and error says
// which call failed with the producer's message.
int AcdArrayStreamDrain(struct ArrowArrayStream* stream, struct AcdBatchList* list,
                        struct AcdStreamTotals* totals, struct AcdError* error);
int AcdDeviceArrayStreamDrain(struct ArrowDeviceArrayStream* stream, struct AcdBatchList* list,
                              struct AcdStreamTotals* totals, struct AcdError* error);

// ---- async device streams (async_pump.c, async_producer.c, async_consumer.c)
// The C producer and consumer cannot block in wasm, so they are driven by a
// pump: request, cancel and the handler callbacks only record what was asked
// and schedule the object; its work (calling the other side) happens in
// AcdAsyncPump. The scheduler is called whenever work is queued: the embedder
// then calls AcdAsyncPump soon, outside of any callback (TypeScript: from a
// microtask). Nothing here calls a handler synchronously from request.

typedef void (*AcdAsyncScheduleFn)(void* user_data);

// Sets the function called when work is queued (NULL: none; the embedder polls).
void AcdAsyncSetScheduler(AcdAsyncScheduleFn schedule, void* user_data);

// Runs up to max_steps scheduled steps; returns how many ran (0 when called
// from inside a step, i.e. from a callback that the pump made).
int64_t AcdAsyncPump(int64_t max_steps);

// For the embedder when AcdAsyncPump did not return (a trap, or an exception
// thrown through it by a callback): makes the pump usable again and tells the
// object whose step was cut short, which reports code and message to its
// other side (a producer with on_error then release; a consumer as its error,
// cancelling its producer) from a later step. Calls no callback itself.
void AcdAsyncPumpAbort(int code, const char* message);

// How many objects have work scheduled.
int64_t AcdAsyncPending(void);

// Counters of the C async objects, so that tests can check that every task
// was extracted exactly once and nothing outlived its stream.
struct AcdAsyncStats {
  int64_t producers_live;
  int64_t consumers_live;
  int64_t tasks_live;
  int64_t tasks_created;
  int64_t tasks_extracted;
  int64_t tasks_discarded;
};

void AcdAsyncStatsGet(struct AcdAsyncStats* out);

// The C async producer: feeds handler from source. On success it owns source,
// has set handler->producer (device_type = source's, additional_metadata = a
// copy of the given one, NULL allowed, valid until the producer is freed), and
// calls on_schema from the pump; it calls on_next_task only within the credit
// given by request (the end, on_next_task(NULL), also takes one), on_error then
// release on any failure, and only release after cancel or after a non-zero
// return from on_schema / on_next_task. It frees itself after calling
// handler->release. On failure nothing was called: the caller keeps source and
// handler.
int AcdAsyncProducerStart(struct ArrowAsyncDeviceStreamHandler* handler,
                          struct AcdBatchSource* source, const char* additional_metadata,
                          struct AcdError* error);

struct AcdAsyncConsumerOptions {
  // request(window) from on_schema, then request(1) per extracted task.
  int64_t window;
  // 0: extract each task inside on_next_task; 1: copy it and extract it in the pump.
  int extract_later;
  // Cancel once this many batches were taken (-1: never); later tasks are
  // extracted with NULL.
  int64_t cancel_after;
  // on_next_task extracts this task with NULL and returns EINVAL (-1: never).
  int64_t fail_task_at;
  // on_schema returns EINVAL (and releases the schema).
  int fail_schema;
};

// Defaults: window 4, extract in on_next_task, never cancel or fail.
void AcdAsyncConsumerOptionsInit(struct AcdAsyncConsumerOptions* options);

// The C async consumer: a handler that collects the stream into a list.
struct AcdAsyncConsumer;

struct AcdAsyncConsumerState {
  int schema_received;
  // on_next_task(NULL) came.
  int ended;
  // The producer called release: nothing more will come.
  int released;
  // From on_error, or the consumer's own failure (a batch that does not match
  // the schema or the device type); 0 when none.
  int error_code;
  const char* error_message;
  // A copy of the producer's additional_metadata (NULL when it had none).
  const char* additional_metadata;
  int64_t tasks;
  int64_t requested;
  // The schema and batches received so far (owned by the consumer).
  struct AcdBatchList* list;
};

// On success *out is a new consumer, whose handler is ready for callbacks.
int AcdAsyncConsumerNew(const struct AcdAsyncConsumerOptions* options,
                        struct AcdAsyncConsumer** out, struct AcdError* error);

// The handler to give to a producer (owned by the consumer).
struct ArrowAsyncDeviceStreamHandler* AcdAsyncConsumerHandler(struct AcdAsyncConsumer* consumer);

void AcdAsyncConsumerGetState(struct AcdAsyncConsumer* consumer,
                              struct AcdAsyncConsumerState* out);

// Frees the consumer, its list and (extracting them with NULL) the tasks it
// still holds. When a producer holds the handler, the consumer cancels it and
// frees itself when the producer releases it. A producer holds the handler
// once it has set handler->producer (which the spec requires before its first
// call other than release) and until it calls release: a producer that sets
// the member later must not be raced by this call. Cancelled before on_schema,
// the consumer answers on_schema with ECANCELED (the spec's way to refuse a
// stream: the producer then calls release only).
void AcdAsyncConsumerFree(struct AcdAsyncConsumer* consumer);

// Internals shared by async_pump.c, async_producer.c and async_consumer.c: an object of
// the run queue. step runs one unit of work and may free the object.
struct AcdAsyncJob {
  struct AcdAsyncJob* next;
  int scheduled;
  void (*step)(struct AcdAsyncJob* job);
  // Called by AcdAsyncPumpAbort when step did not return (NULL: nothing to do).
  void (*abort)(struct AcdAsyncJob* job, int code, const char* message);
};

// Queues job (once) and calls the scheduler when the queue was empty.
void AcdAsyncSchedule(struct AcdAsyncJob* job);
// Removes job from the queue (before it is freed).
void AcdAsyncUnschedule(struct AcdAsyncJob* job);
// The counters, for the files that create and free async objects.
struct AcdAsyncStats* AcdAsyncStatsMutable(void);


// The C producer's stream callbacks (registered with their roles).
int AcdArraySourceGetSchema(struct ArrowArrayStream* stream, struct ArrowSchema* out);
int AcdArraySourceGetNext(struct ArrowArrayStream* stream, struct ArrowArray* out);
const char* AcdArraySourceGetLastError(struct ArrowArrayStream* stream);
void AcdArraySourceRelease(struct ArrowArrayStream* stream);
int AcdDeviceSourceGetSchema(struct ArrowDeviceArrayStream* stream, struct ArrowSchema* out);
int AcdDeviceSourceGetNext(struct ArrowDeviceArrayStream* stream, struct ArrowDeviceArray* out);
const char* AcdDeviceSourceGetLastError(struct ArrowDeviceArrayStream* stream);
void AcdDeviceSourceRelease(struct ArrowDeviceArrayStream* stream);

#ifdef __cplusplus
}
#endif

#endif  // ACD_STREAM_H_INCLUDED
