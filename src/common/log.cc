#include "common/log.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <mutex>

#include "common/json.h"

namespace limits::log {
namespace {

std::atomic<Level> g_min_level{Level::kInfo};
std::atomic<Format> g_format{Format::kJson};
std::mutex g_sink_mu;
std::function<void(std::string_view)> g_sink;  // GUARDED_BY(g_sink_mu)

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kDebug: return "debug";
    case Level::kInfo: return "info";
    case Level::kWarn: return "warn";
    case Level::kError: return "error";
  }
  return "info";
}

void AppendTimestamp(std::string* out) {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const int64_t ms = duration_cast<milliseconds>(now.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  out->append(buf);
}

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c <= ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) >= 0x7f) return true;
  }
  return false;
}

}  // namespace

bool ParseLevel(std::string_view text, Level* out) {
  for (Level l : {Level::kDebug, Level::kInfo, Level::kWarn, Level::kError}) {
    if (text == LevelName(l)) {
      *out = l;
      return true;
    }
  }
  return false;
}

bool ParseFormat(std::string_view text, Format* out) {
  if (text == "json") *out = Format::kJson;
  else if (text == "logfmt") *out = Format::kLogfmt;
  else return false;
  return true;
}

void Configure(Level min_level, Format format) {
  g_min_level.store(min_level, std::memory_order_relaxed);
  g_format.store(format, std::memory_order_relaxed);
}

bool Enabled(Level level) { return level >= g_min_level.load(std::memory_order_relaxed); }

void SetSinkForTest(std::function<void(std::string_view)> sink) {
  std::lock_guard lock(g_sink_mu);
  g_sink = std::move(sink);
}

Line::Line(Level level, std::string_view component, std::string_view msg)
    : enabled_(Enabled(level)), format_(g_format.load(std::memory_order_relaxed)) {
  if (!enabled_) return;
  buf_.reserve(160);
  if (format_ == Format::kJson) {
    buf_.append("{\"ts\":\"");
    AppendTimestamp(&buf_);
    buf_.append("\",\"level\":\"").append(LevelName(level)).push_back('"');
  } else {
    buf_.append("ts=");
    AppendTimestamp(&buf_);
    buf_.append(" level=").append(LevelName(level));
  }
  Kv("component", component);
  Kv("msg", msg);
}

Line::~Line() {
  if (!enabled_) return;
  buf_.append(format_ == Format::kJson ? "}\n" : "\n");
  std::lock_guard lock(g_sink_mu);
  if (g_sink) {
    g_sink(std::string_view(buf_).substr(0, buf_.size() - 1));
    return;
  }
  // One write(2) per line: lines from several threads or processes never interleave.
  ssize_t unused = ::write(STDERR_FILENO, buf_.data(), buf_.size());
  (void)unused;
}

void Line::AppendKey(std::string_view key) {
  if (format_ == Format::kJson) {
    buf_.push_back(',');
    AppendString(key);
    buf_.push_back(':');
  } else {
    buf_.push_back(' ');
    buf_.append(key).push_back('=');
  }
}

void Line::AppendString(std::string_view v) {
  if (format_ == Format::kLogfmt && !NeedsQuotes(v)) {
    buf_.append(v);
    return;
  }
  // The same escaping as the JSON writer, for both formats: a name with invalid UTF-8 or
  // control characters never breaks the line or the JSON around it.
  buf_.push_back('"');
  buf_.append(JsonEscape(v));
  buf_.push_back('"');
}

Line& Line::Kv(std::string_view key, std::string_view value) {
  if (!enabled_) return *this;
  AppendKey(key);
  AppendString(value);
  return *this;
}

Line& Line::Kv(std::string_view key, bool value) {
  if (!enabled_) return *this;
  AppendKey(key);
  buf_.append(value ? "true" : "false");
  return *this;
}

Line& Line::Kv(std::string_view key, double value) {
  if (!enabled_) return *this;
  AppendKey(key);
  if (std::isfinite(value)) {
    buf_.append(ShortestDouble(value));
  } else {
    AppendString(std::isnan(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf");  // JSON has no such numbers
  }
  return *this;
}

Line& Line::KvInt(std::string_view key, int64_t value) {
  if (!enabled_) return *this;
  AppendKey(key);
  buf_.append(std::to_string(value));
  return *this;
}

Line& Line::KvUint(std::string_view key, uint64_t value) {
  if (!enabled_) return *this;
  AppendKey(key);
  buf_.append(std::to_string(value));
  return *this;
}

}  // namespace limits::log
