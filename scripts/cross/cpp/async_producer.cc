// The Arrow C++ async producer of the conformance matrix (docs/conformance.md):
// arrow::ExportAsyncRecordBatchReader drives the C core's own async consumer
// (csrc/stream/async_consumer.c, built natively by scripts/native/build.sh).
// The source is a case's expected IPC stream, read by Arrow C++ (or, for a
// case without one, its LP64 image through the portable C loader and
// ImportRecordBatch): its batches, an empty slice and a slice at offset 1,
// as a generator. Every batch the
// core receives is validated by the core at the FULL level, imported back
// into Arrow C++ (ImportDeviceRecordBatch) and compared (Equals) with its
// source; the core's counters and Arrow C++'s references must come back.
//
//   cpp_async_producer CORPUS_DIR CASE...
//
// prints one JSON line per case and scenario (test/fixtures-peers-cpp.test.ts):
//   inline        window 4, the consumer extracts each task in on_next_task;
//   pumped        window 1, tasks extracted later by the core's pump
//                 (AcdAsyncPump on this thread, Arrow C++ on another);
// and, for the first case only:
//   fails         the generator fails at batch 1;
//   cancel        the consumer cancels after its first batch;
//   refuse-schema the consumer's on_schema returns EINVAL;
//   refuse-task   the consumer's on_next_task returns EINVAL at task 1.
// Arrow C++ calls the handler from its thread in "pumped": every call into
// the core (the handler's callbacks, the pump) holds one mutex.
#include <atomic>
#include <mutex>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include <arrow/util/async_generator.h>

#include "common.h"
extern "C" {
#include "fixtures/acd_fixture.h"
#include "stream/stream.h"
}

using acdpeer::Json;

namespace {

std::recursive_mutex core_mu;

// Between Arrow C++ and the core's handler: takes the lock, and gives the
// core the producer that Arrow C++ set before on_schema.
struct Proxy {
  ArrowAsyncDeviceStreamHandler handler{};
  ArrowAsyncDeviceStreamHandler* core = nullptr;
  std::atomic<bool> released{false};
  // What Arrow C++ called, for the spec's rules on its order.
  int schemas = 0, tasks = 0, ends = 0, errors = 0, releases = 0;
  int error_code = 0;
  std::string error_message;
  // Arrow C++'s exports (the schema, each extracted batch) and the calls of
  // their releases (wrapped: each must be called once).
  std::atomic<int> exported{0}, released_exports{0}, tasks_unextracted{0};
};

// Arrow C++'s struct, moved into a wrapper whose release counts the call.
template <typename T>
struct Counted {
  T inner;
  Proxy* p;
  static void Release(T* s) {
    auto* c = static_cast<Counted*>(s->private_data);
    c->p->released_exports++;
    c->inner.release(&c->inner);
    delete c;
    s->release = nullptr;
  }
  static void Wrap(Proxy* p, T* s) {
    auto* c = new Counted{*s, p};
    s->private_data = c;
    s->release = Release;
    p->exported++;
  }
};

struct CountedTask {
  ArrowAsyncTask inner;
  Proxy* p;
};

int ExtractCounted(ArrowAsyncTask* task, ArrowDeviceArray* out) {
  auto* t = static_cast<CountedTask*>(task->private_data);
  Proxy* p = t->p;
  int code = t->inner.extract_data(&t->inner, out);
  if (code == 0 && out != nullptr && out->array.release != nullptr) Counted<ArrowArray>::Wrap(p, &out->array);
  p->tasks_unextracted--;
  delete t;
  return code;
}

int ProxyOnSchema(ArrowAsyncDeviceStreamHandler* self, ArrowSchema* schema) {
  auto* p = static_cast<Proxy*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(core_mu);
  p->schemas++;
  p->core->producer = self->producer;
  if (schema->release != nullptr) Counted<ArrowSchema>::Wrap(p, schema);
  return p->core->on_schema(p->core, schema);
}

int ProxyOnNextTask(ArrowAsyncDeviceStreamHandler* self, ArrowAsyncTask* task, const char* metadata) {
  auto* p = static_cast<Proxy*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(core_mu);
  (task == nullptr ? p->ends : p->tasks)++;
  if (task == nullptr) return p->core->on_next_task(p->core, nullptr, metadata);
  ArrowAsyncTask counted{};
  counted.extract_data = ExtractCounted;
  counted.private_data = new CountedTask{*task, p};
  p->tasks_unextracted++;
  return p->core->on_next_task(p->core, &counted, metadata);
}

void ProxyOnError(ArrowAsyncDeviceStreamHandler* self, int code, const char* message, const char* metadata) {
  auto* p = static_cast<Proxy*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(core_mu);
  p->errors++;
  p->error_code = code;
  p->error_message = message != nullptr ? message : "(null)";
  p->core->on_error(p->core, code, message, metadata);
}

void ProxyRelease(ArrowAsyncDeviceStreamHandler* self) {
  auto* p = static_cast<Proxy*>(self->private_data);
  std::lock_guard<std::recursive_mutex> lock(core_mu);
  p->releases++;
  p->core->release(p->core);
  p->released = true;
}

struct Scenario {
  const char* name;
  bool first_case_only;
  int64_t window;
  int extract_later;
  int64_t fail_at;  // the generator's failing batch, or -1
  int64_t cancel_after;
  int fail_schema;
  int64_t fail_task_at;
  bool in_child;  // run in a forked process
};

const Scenario kScenarios[] = {
    {"inline", false, 4, 0, -1, -1, 0, -1, false},
    {"pumped", false, 1, 1, -1, -1, 0, -1, false},
    {"fails", true, 4, 0, 1, -1, 0, -1, false},
    {"cancel", true, 4, 0, -1, 1, 0, -1, false},
    {"refuse-schema", true, 4, 0, -1, -1, 1, -1, false},
    {"refuse-task", true, 4, 0, -1, -1, 0, 1, true},
};

using BatchGen = arrow::AsyncGenerator<std::shared_ptr<arrow::RecordBatch>>;

// The batches in order; at fail_at a finished future with an IOError.
BatchGen Generator(std::vector<std::shared_ptr<arrow::RecordBatch>> batches, int64_t fail_at) {
  auto next = std::make_shared<size_t>(0);
  return [batches = std::move(batches), next, fail_at]() -> arrow::Future<std::shared_ptr<arrow::RecordBatch>> {
    size_t i = (*next)++;
    if (fail_at >= 0 && i == static_cast<size_t>(fail_at)) {
      return arrow::Status::IOError("source: batch ", i, " failed");
    }
    if (i >= batches.size()) return arrow::AsyncGeneratorEnd<std::shared_ptr<arrow::RecordBatch>>();
    return batches[i];
  };
}

// References to the sources' column data: exports hold some until released.
long References(const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  long n = 0;
  for (auto& b : batches) {
    for (auto& c : b->column_data()) n += c.use_count();
  }
  return n;
}

void RunScenario(const std::string& name, const arrow::Schema& schema,
                 const std::vector<std::shared_ptr<arrow::RecordBatch>>& sources, const Scenario& sc) {
  Json out;
  out.Str("case", name).Str("scenario", sc.name).Int("sources", static_cast<long long>(sources.size()));
  int64_t bytes_before = AcdBytesAllocated();
  long refs_before = References(sources);
  AcdAsyncConsumerOptions options;
  AcdAsyncConsumerOptionsInit(&options);
  options.window = sc.window;
  options.extract_later = sc.extract_later;
  options.cancel_after = sc.cancel_after;
  options.fail_schema = sc.fail_schema;
  options.fail_task_at = sc.fail_task_at;
  AcdAsyncConsumer* consumer = nullptr;
  AcdError error{};
  if (AcdAsyncConsumerNew(&options, &consumer, &error) != 0) {
    out.Str("outcome", "load-error").Str("message", error.message).Print();
    return;
  }
  Proxy proxy;
  proxy.core = AcdAsyncConsumerHandler(consumer);
  proxy.handler.on_schema = ProxyOnSchema;
  proxy.handler.on_next_task = ProxyOnNextTask;
  proxy.handler.on_error = ProxyOnError;
  proxy.handler.release = ProxyRelease;
  proxy.handler.private_data = &proxy;
  auto schema_ptr = std::make_shared<arrow::Schema>(schema);
  arrow::Status exported;
  std::atomic<bool> done{false};
  // Arrow C++ waits for request() credit in its visitor: off this thread when
  // the core extracts in its pump, which runs here.
  std::thread arrow_side([&] {
    auto fut = arrow::ExportAsyncRecordBatchReader(schema_ptr, Generator(sources, sc.fail_at),
                                                   arrow::DeviceAllocationType::kCPU, &proxy.handler);
    exported = fut.status();
    done = true;
  });
  while (!done || !proxy.released || AcdAsyncPending() > 0) {
    int64_t steps;
    {
      std::lock_guard<std::recursive_mutex> lock(core_mu);
      steps = AcdAsyncPump(64);
    }
    if (steps == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  arrow_side.join();
  AcdAsyncConsumerState state;
  AcdAsyncConsumerGetState(consumer, &state);
  out.Str("outcome", state.schema_received && state.list->schema.release != nullptr ? "accepted" : "refused");
  out.Int("batches", state.list->length).Bool("ended", state.ended).Bool("released", state.released);
  out.Int("error_code", state.error_code).Raw("error_message", state.error_message ? acdpeer::Quote(state.error_message) : "null");
  out.Int("tasks", state.tasks).Int("requested", state.requested);
  out.Raw("export_status", exported.ok() ? "null" : acdpeer::StatusJson(exported));
  Json calls;
  calls.Int("on_schema", proxy.schemas).Int("tasks", proxy.tasks).Int("ends", proxy.ends);
  calls.Int("on_error", proxy.errors).Int("release", proxy.releases);
  if (proxy.errors > 0) calls.Int("error_code", proxy.error_code).Str("error_message", proxy.error_message);
  out.Raw("calls", calls.Text());
  // Each batch: the core's FULL validation, then back into Arrow C++, equal to its source.
  std::vector<std::string> valid, equal;
  for (int64_t i = 0; i < state.list->length; i++) {
    ArrowDeviceArray* array = &state.list->arrays[i];
    int code = AcdArrayValidate(&state.list->schema, &array->array, ACD_VALIDATION_FULL, &error);
    valid.push_back(code == 0 ? "true" : acdpeer::Quote(error.message));
    ArrowSchema copy;
    std::string eq = "false";
    if (AcdSchemaDeepCopy(&state.list->schema, &copy, &error) != 0) {
      eq = acdpeer::Quote(std::string("schema copy: ") + error.message);
    } else {
      ArrowDeviceArray moved;
      AcdDeviceArrayMove(array, &moved);
      auto back = arrow::ImportDeviceRecordBatch(&moved, &copy);
      if (!back.ok()) {
        eq = acdpeer::Quote("ImportDeviceRecordBatch: " + back.status().ToString());
      } else if (i < static_cast<int64_t>(sources.size()) && (*back)->Equals(*sources[i]) &&
                 (*back)->schema()->Equals(*sources[i]->schema())) {
        eq = "true";
      }
    }
    equal.push_back(eq);
  }
  std::string valid_list, equal_list;
  for (auto& v : valid) valid_list += (valid_list.empty() ? "" : ", ") + v;
  for (auto& e : equal) equal_list += (equal_list.empty() ? "" : ", ") + e;
  out.Raw("valid", "[" + valid_list + "]").Raw("equal", "[" + equal_list + "]");
  {
    std::lock_guard<std::recursive_mutex> lock(core_mu);
    AcdAsyncConsumerFree(consumer);
  }
  AcdAsyncStats stats;
  AcdAsyncStatsGet(&stats);
  out.Int("consumers_live", stats.consumers_live).Int("tasks_live", stats.tasks_live);
  out.Int("core_bytes_left", AcdBytesAllocated() - bytes_before);
  out.Int("arrow_exports", proxy.exported).Int("arrow_releases", proxy.released_exports);
  out.Int("tasks_unextracted", proxy.tasks_unextracted);
  out.Int("arrow_references_left", References(sources) - refs_before);
  out.Print();
}

// The sources of a case: its IPC batches, an empty slice, a slice at offset 1.
std::vector<std::shared_ptr<arrow::RecordBatch>> Sources(const acdpeer::IpcStream& ipc) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> out = ipc.batches;
  if (ipc.batches.empty()) return out;
  auto first = ipc.batches.front();
  out.push_back(first->Slice(0, 0));
  if (first->num_rows() > 1) out.push_back(first->Slice(1));
  // Boxes every column now: a RecordBatch caches them (a reference each),
  // which would otherwise count as references left by the exports.
  for (auto& b : out) b->columns();
  return out;
}

// A scenario that may crash the process (Arrow C++ frees the task the
// consumer extracted), in a forked child; a line says how it died.
void RunInChild(const std::string& name, const arrow::Schema& schema,
                const std::vector<std::shared_ptr<arrow::RecordBatch>>& sources, const Scenario& sc) {
  std::fflush(stdout);
  pid_t child = fork();
  if (child == 0) {
    RunScenario(name, schema, sources, sc);
    std::fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    Json().Str("case", name).Str("scenario", sc.name).Str("outcome", "crashed")
        .Int("signal", WIFSIGNALED(status) ? WTERMSIG(status) : 0).Print();
  }
}

// A case without an IPC stream: its image's batch, imported by Arrow C++
// (zero-copy: the fixture must outlive the batch).
arrow::Result<acdpeer::IpcStream> ReadImage(const std::string& path, AcdFixture** fx) {
  AcdFixtureError error{};
  if (AcdFixtureLoadFile(path.c_str(), fx, &error) != 0) return arrow::Status::IOError(error.message);
  for (uint32_t i = 0; i < AcdFixtureRootCount(*fx); i++) {
    AcdFixtureRoot root{};
    AcdFixtureGetRoot(*fx, i, &root);
    if (root.kind != ACD_FIXTURE_ARRAY && root.kind != ACD_FIXTURE_DEVICE_ARRAY) continue;
    auto* schema = static_cast<ArrowSchema*>(AcdFixtureRootPointer(*fx, root.schema_index));
    auto batch = root.kind == ACD_FIXTURE_ARRAY
                     ? arrow::ImportRecordBatch(static_cast<ArrowArray*>(root.ptr), schema)
                     : arrow::ImportDeviceRecordBatch(static_cast<ArrowDeviceArray*>(root.ptr), schema);
    ARROW_RETURN_NOT_OK(batch.status());
    return acdpeer::IpcStream{(*batch)->schema(), {*batch}};
  }
  return arrow::Status::Invalid(path, ": no array root");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR CASE...\n", argv[0]);
    return 2;
  }
  for (int i = 2; i < argc; i++) {
    std::string name = argv[i], dir = argv[1];
    AcdFixture* fx = nullptr;
    std::string ipc_path = dir + "/expected/" + name + ".arrows";
    bool from_ipc = access(ipc_path.c_str(), R_OK) == 0;
    {  // everything imported from the image goes before the fixture
      auto ipc = from_ipc ? acdpeer::ReadIpc(ipc_path) : ReadImage(dir + "/lp64/" + name + ".acdfix", &fx);
      if (!ipc.ok()) {
        Json().Str("case", name).Str("outcome", "load-error").Str("message", ipc.status().ToString()).Print();
      } else {
        auto sources = Sources(*ipc);
        for (const Scenario& sc : kScenarios) {
          if (sc.first_case_only && i != 2) continue;
          if (sc.in_child) {
            RunInChild(name, *ipc->schema, sources, sc);
          } else {
            RunScenario(name, *ipc->schema, sources, sc);
          }
        }
      }
    }
    if (!from_ipc) {
      // The image's structs, imported by Arrow C++, released once each.
      char report[1024] = "";
      int problems = AcdFixtureFree(fx, report, sizeof report);
      Json().Str("case", name).Str("scenario", "image").Int("problems", problems).Str("report", report).Print();
    }
  }
  return 0;
}
