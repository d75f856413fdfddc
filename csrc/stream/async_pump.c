// The run queue that drives every C async object (the producer,
// async_producer.c, and the consumer, async_consumer.c): wasm cannot block,
// so their callbacks only record what was asked and queue the object, and its
// steps run here, in AcdAsyncPump, which the embedder calls when the
// scheduler tells it to (TypeScript: from a microtask). Also the counters of
// the live async objects.

#include <errno.h>
#include <string.h>

#include "stream/stream.h"

// ---- the run queue ------------------------------------------------------------

static struct AcdAsyncJob* acd_queue_head = NULL;
static struct AcdAsyncJob* acd_queue_tail = NULL;
static int64_t acd_queue_length = 0;
static AcdAsyncScheduleFn acd_scheduler = NULL;
static void* acd_scheduler_user = NULL;
static struct AcdAsyncStats acd_stats;

void AcdAsyncSetScheduler(AcdAsyncScheduleFn schedule, void* user_data) {
  acd_scheduler = schedule;
  acd_scheduler_user = user_data;
}

void AcdAsyncSchedule(struct AcdAsyncJob* job) {
  if (job->scheduled) return;
  job->scheduled = 1;
  job->next = NULL;
  int was_empty = acd_queue_head == NULL;
  if (was_empty) {
    acd_queue_head = job;
  } else {
    acd_queue_tail->next = job;
  }
  acd_queue_tail = job;
  acd_queue_length++;
  if (was_empty && acd_scheduler != NULL) acd_scheduler(acd_scheduler_user);
}

void AcdAsyncUnschedule(struct AcdAsyncJob* job) {
  if (!job->scheduled) return;
  struct AcdAsyncJob* previous = NULL;
  for (struct AcdAsyncJob* at = acd_queue_head; at != NULL; previous = at, at = at->next) {
    if (at != job) continue;
    if (previous == NULL) {
      acd_queue_head = at->next;
    } else {
      previous->next = at->next;
    }
    if (acd_queue_tail == at) acd_queue_tail = previous;
    acd_queue_length--;
    break;
  }
  job->scheduled = 0;
  job->next = NULL;
}

static int acd_pumping = 0;
// The job whose step runs (for AcdAsyncPumpAbort).
static struct AcdAsyncJob* acd_running = NULL;

int64_t AcdAsyncPump(int64_t max_steps) {
  // Not re-entered from a callback that a step made: a step of an object
  // would otherwise run inside its own previous step.
  if (acd_pumping) return 0;
  acd_pumping = 1;
  int64_t steps = 0;
  while (acd_queue_head != NULL && steps < max_steps) {
    struct AcdAsyncJob* job = acd_queue_head;
    acd_queue_head = job->next;
    if (acd_queue_head == NULL) acd_queue_tail = NULL;
    acd_queue_length--;
    job->scheduled = 0;
    job->next = NULL;
    acd_running = job;
    job->step(job);  // may free the job
    acd_running = NULL;
    steps++;
  }
  acd_pumping = 0;
  return steps;
}

void AcdAsyncPumpAbort(int code, const char* message) {
  struct AcdAsyncJob* job = acd_running;
  acd_running = NULL;
  acd_pumping = 0;
  if (job != NULL && job->abort != NULL) job->abort(job, code == ACD_OK ? EIO : code, message);
}

int64_t AcdAsyncPending(void) { return acd_queue_length; }

void AcdAsyncStatsGet(struct AcdAsyncStats* out) { *out = acd_stats; }

struct AcdAsyncStats* AcdAsyncStatsMutable(void) {
  return &acd_stats;
}

