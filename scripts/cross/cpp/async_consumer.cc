// The Arrow C++ async consumer of the conformance matrix (docs/conformance.md):
// arrow::CreateAsyncDeviceStreamHandler consumes the async device stream that
// the portable C loader (csrc/fixtures/acd_fixture.c) plays from an LP64
// fixture image. Every batch the AsyncRecordBatchGenerator yields is checked
// with ValidateFull and compared (Equals) with the case's expected IPC
// stream; its end or error is reported, and the loader's counts.
//
//   cpp_async_consumer CORPUS_DIR CASE...   (CORPUS_DIR from `fixtures --layout lp64`)
//
// prints one JSON line per case and scenario (test/fixtures-peers-cpp.test.ts):
//   paced     queue_size 5; the loader steps only when every task it gave has
//             come out of the generator (the producer waits for its consumer);
//   credit-1  the same with queue_size 1: each task needs the request(1) that
//             Arrow C++ makes when it takes the previous one;
//   eager     queue_size 5; the loader plays all its credit allows right away
//             (AcdFixtureAsyncPump, the reference play) before the first pull;
//   cancel    paced; after the first batch the application cancels through
//             the handler's producer (Arrow C++'s generator has no cancel).
//
// Arrow C++ calls request and extract_data from its executor's threads and
// releases batches wherever their last reference goes, and the loader is
// not thread-safe: every call into the loader goes through one recursive
// mutex (a proxy handler between the loader and Arrow C++'s handler, a proxy
// producer, wrapped tasks and wrapped array releases). The loader's
// behaviour is unchanged; only its calls are serialized.
#include <chrono>
#include <cstring>
#include <mutex>

#include <arrow/util/thread_pool.h>

#include "common.h"
extern "C" {
#include "fixtures/acd_fixture.h"
}

using acdpeer::Json;

namespace {

using Clock = std::chrono::steady_clock;

struct Driver {
  std::recursive_mutex mu;
  AcdFixtureAsync* play = nullptr;
  ArrowAsyncDeviceStreamHandler arrow{};  // Arrow C++'s handler
  ArrowAsyncDeviceStreamHandler proxy{};  // the one the loader calls
  ArrowAsyncProducer producer{};          // the one Arrow C++ calls
  int64_t delivered = 0;                  // tasks handed to Arrow C++
  int64_t wrapped_live = 0;               // wrapped tasks not extracted
};

struct WrappedTask {
  Driver* d;
  ArrowAsyncTask inner;
};

struct WrappedArray {
  Driver* d;
  ArrowArray inner;
};

void ReleaseLocked(ArrowArray* array) {
  auto* w = static_cast<WrappedArray*>(array->private_data);
  {
    std::lock_guard<std::recursive_mutex> lock(w->d->mu);
    w->inner.release(&w->inner);
  }
  delete w;
  array->release = nullptr;
}

int ExtractLocked(ArrowAsyncTask* task, ArrowDeviceArray* out) {
  auto* w = static_cast<WrappedTask*>(task->private_data);
  Driver* d = w->d;
  std::lock_guard<std::recursive_mutex> lock(d->mu);
  int code = w->inner.extract_data(&w->inner, out);
  if (code == 0 && out != nullptr && out->array.release != nullptr) {
    // The batch's release goes through the lock too, on whichever thread.
    auto* a = new WrappedArray{d, out->array};
    out->array.private_data = a;
    out->array.release = ReleaseLocked;
  }
  d->wrapped_live--;
  delete w;
  return code;
}

void RequestLocked(ArrowAsyncProducer* self, int64_t n) {
  auto* d = static_cast<Driver*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(d->mu);
  d->proxy.producer->request(d->proxy.producer, n);
}

void CancelLocked(ArrowAsyncProducer* self) {
  auto* d = static_cast<Driver*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(d->mu);
  d->proxy.producer->cancel(d->proxy.producer);
}

// The proxy handler: called by the loader (under the lock, from Step or
// Start), forwards to Arrow C++'s handler with the proxy producer in it.
int ProxyOnSchema(ArrowAsyncDeviceStreamHandler* self, ArrowSchema* schema) {
  auto* d = static_cast<Driver*>(self->private_data);
  d->producer.device_type = self->producer->device_type;
  d->producer.additional_metadata = self->producer->additional_metadata;
  d->arrow.producer = &d->producer;
  return d->arrow.on_schema(&d->arrow, schema);
}

int ProxyOnNextTask(ArrowAsyncDeviceStreamHandler* self, ArrowAsyncTask* task, const char* metadata) {
  auto* d = static_cast<Driver*>(self->private_data);
  if (task == nullptr) return d->arrow.on_next_task(&d->arrow, nullptr, metadata);
  auto* w = new WrappedTask{d, *task};  // a copy: the loader's task lives during this call only
  ArrowAsyncTask wrapped{};
  wrapped.extract_data = ExtractLocked;
  wrapped.private_data = w;
  d->delivered++;
  d->wrapped_live++;
  return d->arrow.on_next_task(&d->arrow, &wrapped, metadata);
}

void ProxyOnError(ArrowAsyncDeviceStreamHandler* self, int code, const char* message, const char* metadata) {
  auto* d = static_cast<Driver*>(self->private_data);
  d->arrow.on_error(&d->arrow, code, message, metadata);
}

void ProxyRelease(ArrowAsyncDeviceStreamHandler* self) {
  auto* d = static_cast<Driver*>(self->private_data);
  d->arrow.release(&d->arrow);
}

struct Scenario {
  const char* name;
  uint64_t queue_size;
  bool eager;
  bool cancel_after_first;
};

const Scenario kScenarios[] = {
    {"paced", 5, false, false},
    {"credit-1", 1, false, false},
    {"eager", 5, true, false},
    {"cancel", 5, false, true},
};

// What the generator gave for one pull.
struct Pulled {
  enum Kind { kBatch, kEnd, kError, kPending } kind;
  std::shared_ptr<arrow::RecordBatch> batch;
  arrow::Status status;
};

// Pulls the next item, stepping the loader in this thread while it waits:
// paced, only when every task delivered has come out (`yielded`); eager,
// whenever it can. Pending when nothing came within `wait_s` seconds of no
// progress.
Pulled Pull(Driver& d, const arrow::AsyncGenerator<arrow::RecordBatchWithMetadata>& gen, bool eager,
            int64_t yielded, double wait_s) {
  auto fut = gen();
  auto deadline = Clock::now() + std::chrono::duration<double>(wait_s);
  while (!fut.is_finished()) {
    bool stepped = false;
    {
      std::lock_guard<std::recursive_mutex> lock(d.mu);
      if (eager || d.delivered == yielded) stepped = AcdFixtureAsyncStep(d.play) != 0;
    }
    if (stepped) {
      deadline = Clock::now() + std::chrono::duration<double>(wait_s);
    } else if (!fut.Wait(0.002) && Clock::now() > deadline) {
      return {Pulled::kPending, nullptr, arrow::Status::OK()};
    }
  }
  auto result = fut.result();
  if (!result.ok()) return {Pulled::kError, nullptr, result.status()};
  if (arrow::IsIterationEnd(*result)) return {Pulled::kEnd, nullptr, arrow::Status::OK()};
  return {Pulled::kBatch, result->batch, arrow::Status::OK()};
}

std::string AsyncCountsJson(const AcdFixtureAsyncCounts& c) {
  Json j;
  j.Int("requested", c.requested).Int("request_calls", c.request_calls).Int("cancel_calls", c.cancel_calls);
  j.Int("tasks", c.tasks).Int("extracted", c.extracted).Int("extracted_null", c.extracted_null);
  j.Int("ends", c.ends).Int("errors", c.errors).Int("handler_releases", c.handler_releases);
  j.Int("violations", c.violations);
  return j.Text();
}

// Plays case `name`'s async script into Arrow C++ once, as `sc` says; one JSON line.
// Returns false when Arrow C++ was left waiting (its executor thread is then stuck).
bool RunScenario(const std::string& dir, const std::string& name, const Scenario& sc) {
  Json out;
  out.Str("case", name).Str("scenario", sc.name).Int("queue_size", static_cast<long long>(sc.queue_size));
  auto expected = acdpeer::ReadIpc(dir + "/expected/" + name + ".arrows");
  if (!expected.ok()) {
    out.Str("outcome", "load-error").Str("message", "expected IPC: " + expected.status().ToString()).Print();
    return true;
  }
  AcdFixture* fx = nullptr;
  AcdFixtureError error{};
  std::string image = dir + "/lp64/" + name + ".acdfix";
  if (AcdFixtureLoadFile(image.c_str(), &fx, &error) != 0) {
    out.Str("outcome", "load-error").Str("message", error.message).Print();
    return true;
  }
  uint32_t root = 0;
  while (root < AcdFixtureRootCount(fx)) {
    AcdFixtureRoot r{};
    AcdFixtureGetRoot(fx, root, &r);
    if (r.kind == ACD_FIXTURE_ASYNC_SCRIPT) break;
    root++;
  }
  // A fresh executor per scenario: one left waiting by Arrow C++ is leaked, not joined.
  auto pool = arrow::internal::ThreadPool::Make(1).ValueOrDie();
  auto* d = new Driver;
  // On the heap: the last reference to the generator joins its executor's
  // task, so one that Arrow C++ left waiting is never released.
  auto* held = new arrow::Future<arrow::AsyncRecordBatchGenerator>(
      arrow::CreateAsyncDeviceStreamHandler(&d->arrow, pool.get(), sc.queue_size));
  auto& fut = *held;
  d->proxy.on_schema = ProxyOnSchema;
  d->proxy.on_next_task = ProxyOnNextTask;
  d->proxy.on_error = ProxyOnError;
  d->proxy.release = ProxyRelease;
  d->proxy.private_data = d;
  d->producer.request = RequestLocked;
  d->producer.cancel = CancelLocked;
  d->producer.private_data = d;
  int code;
  {
    std::lock_guard<std::recursive_mutex> lock(d->mu);
    code = AcdFixtureAsyncStart(fx, root, &d->proxy, &d->play, &error);
    if (code == 0 && sc.eager) AcdFixtureAsyncPump(d->play);
  }
  if (code != 0) {
    out.Str("outcome", "load-error").Str("message", error.message).Print();
    AcdFixtureFree(fx, nullptr, 0);
    return true;
  }
  std::vector<std::string> equal, valid;
  std::string end = "pending", end_status = "null";
  int64_t yielded = 0;
  bool cancelled = false;
  if (!fut.Wait(5)) {
    end = "no-schema";  // the loader never called on_schema
  } else if (!fut.result().ok()) {
    end = "error";
    end_status = acdpeer::StatusJson(fut.result().status());
  } else {
    auto gen = fut.result()->generator;
    out.Bool("schema_equal", fut.result()->schema->Equals(*expected->schema));
    for (;;) {
      Pulled p = Pull(*d, gen, sc.eager, yielded, 5.0);
      if (p.kind == Pulled::kBatch) {
        auto st = p.batch->ValidateFull();
        valid.push_back(st.ok() ? "true" : acdpeer::Quote(st.ToString()));
        bool eq = yielded < static_cast<int64_t>(expected->batches.size()) && p.batch->Equals(*expected->batches[yielded]);
        equal.push_back(eq ? "true" : "false");
        yielded++;
        if (sc.cancel_after_first && !cancelled) {
          cancelled = true;
          d->arrow.producer->cancel(d->arrow.producer);
        }
        continue;
      }
      if (p.kind == Pulled::kEnd) end = "end";
      if (p.kind == Pulled::kError) {
        end = "error";
        end_status = acdpeer::StatusJson(p.status);
      }
      break;
    }
  }
  bool stuck = end == "pending" || end == "no-schema";
  AcdFixtureAsyncCounts counts{};
  char async_report[2048] = "", report[2048] = "";
  int async_problems, problems;
  {
    std::lock_guard<std::recursive_mutex> lock(d->mu);
    AcdFixtureAsyncGetCounts(d->play, &counts);
    async_problems = AcdFixtureAsyncFree(d->play, async_report, sizeof async_report);
    d->play = nullptr;
  }
  // Refused: Arrow C++ gave no generator (its on_schema failed, or never came).
  out.Str("outcome", end == "no-schema" || !fut.result().ok() ? "refused" : "accepted");
  out.Int("expected_batches", static_cast<long long>(expected->batches.size())).Int("batches", yielded);
  std::string eq_list, valid_list;
  for (auto& e : equal) eq_list += (eq_list.empty() ? "" : ", ") + e;
  for (auto& v : valid) valid_list += (valid_list.empty() ? "" : ", ") + v;
  out.Raw("equal", "[" + eq_list + "]").Raw("valid", "[" + valid_list + "]");
  out.Str("end", end).Raw("error", end_status);
  out.Int("tasks_never_extracted", d->wrapped_live);
  out.Raw("async", AsyncCountsJson(counts)).Int("async_problems", async_problems).Str("async_report", async_report);
  if (stuck) {
    // Arrow C++ still holds the batches it never extracted nor yielded: the
    // fixture's memory must outlive it, so it is not freed (nor counted).
    static std::vector<std::shared_ptr<arrow::internal::ThreadPool>> stuck_pools;
    stuck_pools.push_back(pool);  // with `held`, `d` and `fx`: never freed
    out.Raw("problems", "null").Str("report", "not freed: Arrow C++ still waits").Print();
    return false;
  }
  // The generator is done: it and its executor can go, then the fixture.
  delete held;
  pool.reset();
  AcdFixtureCounts releases{};
  AcdFixtureGetCounts(fx, &releases);
  problems = AcdFixtureFree(fx, report, sizeof report);
  Json rel;
  rel.Int("release_calls", releases.release_calls).Int("double_releases", releases.double_releases);
  rel.Int("bad_releases", releases.bad_releases).Int("not_released", releases.not_released);
  out.Raw("releases", rel.Text()).Int("problems", problems).Str("report", report).Print();
  if (d->wrapped_live == 0) delete d;
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR CASE...\n", argv[0]);
    return 2;
  }
  bool clean = true;
  for (int i = 2; i < argc; i++) {
    for (const Scenario& sc : kScenarios) clean = RunScenario(argv[1], argv[i], sc) && clean;
  }
  // An executor thread that Arrow C++ left waiting is never joined.
  std::fflush(stdout);
  if (!clean) std::_Exit(0);
  return 0;
}
