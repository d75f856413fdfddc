// What the two Arrow C++ peer programs of the conformance matrix share
// (async_consumer.cc, async_producer.cc; docs/conformance.md): reading a
// case's expected Arrow IPC stream with Arrow C++'s own reader, and writing
// the JSON lines that test/fixtures-peers-cpp.test.ts reads.
#pragma once

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <arrow/api.h>
#include <arrow/c/bridge.h>
#include <arrow/io/file.h>
#include <arrow/ipc/reader.h>

namespace acdpeer {

// A JSON string literal (UTF-8 passed through; control bytes and bytes that
// are not UTF-8 escaped as \u00XX so that the line stays valid JSON).
inline std::string Quote(const std::string& s) {
  std::string out = "\"";
  char buf[8];
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c >= 0x7f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

// One JSON object, built field by field in order.
class Json {
 public:
  Json& Raw(const std::string& key, const std::string& raw) {
    body_ += (body_.empty() ? "" : ", ") + Quote(key) + ": " + raw;
    return *this;
  }
  Json& Str(const std::string& key, const std::string& value) { return Raw(key, Quote(value)); }
  Json& Int(const std::string& key, long long value) { return Raw(key, std::to_string(value)); }
  Json& Bool(const std::string& key, bool value) { return Raw(key, value ? "true" : "false"); }
  std::string Text() const { return "{" + body_ + "}"; }
  // Printed as one line, flushed at once (a hang later must not lose it).
  void Print() const {
    std::printf("%s\n", Text().c_str());
    std::fflush(stdout);
  }

 private:
  std::string body_;
};

struct IpcStream {
  std::shared_ptr<arrow::Schema> schema;
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
};

// Every batch of an Arrow IPC stream file, read by Arrow C++.
inline arrow::Result<IpcStream> ReadIpc(const std::string& path) {
  ARROW_ASSIGN_OR_RAISE(auto file, arrow::io::ReadableFile::Open(path));
  ARROW_ASSIGN_OR_RAISE(auto reader, arrow::ipc::RecordBatchStreamReader::Open(file));
  IpcStream out;
  out.schema = reader->schema();
  ARROW_ASSIGN_OR_RAISE(out.batches, reader->ToRecordBatches());
  ARROW_RETURN_NOT_OK(file->Close());
  return out;
}

// A status as JSON: its code name and message, and the errno and message of
// an AsyncErrorDetail when it carries one (how an async error crosses).
inline std::string StatusJson(const arrow::Status& st) {
  Json j;
  j.Str("status", st.CodeAsString()).Str("message", st.message());
  if (auto detail = std::dynamic_pointer_cast<arrow::AsyncErrorDetail>(st.detail())) {
    j.Int("errno", detail->code()).Str("detail_message", detail->ToString());
  } else {
    j.Raw("errno", "null");
  }
  return j.Text();
}

}  // namespace acdpeer
