// Structured logging: one line per event, JSON or logfmt, with level, component and fields.
//   log::Info("store", "opened").Kv("path", path).Kv("streams", n);
// The line is written when the temporary dies, in one write, so lines from threads never interleave.
// Thread-safe. Configure() is meant for startup; a disabled level costs one comparison.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>

namespace limits::log {

enum class Level : uint8_t { kDebug, kInfo, kWarn, kError };
enum class Format : uint8_t { kJson, kLogfmt };

// Parses "debug", "info", "warn", "error" / "json", "logfmt"; false on anything else.
bool ParseLevel(std::string_view text, Level* out);
bool ParseFormat(std::string_view text, Format* out);

void Configure(Level min_level, Format format);
bool Enabled(Level level);

// Replaces stderr as the destination (tests capture lines with it); nullptr restores stderr.
void SetSinkForTest(std::function<void(std::string_view line)> sink);

class Line {
 public:
  Line(Level level, std::string_view component, std::string_view msg);
  ~Line();
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;

  Line& Kv(std::string_view key, std::string_view value);
  Line& Kv(std::string_view key, const char* value) { return Kv(key, std::string_view(value)); }
  Line& Kv(std::string_view key, const std::string& value) { return Kv(key, std::string_view(value)); }
  Line& Kv(std::string_view key, bool value);
  Line& Kv(std::string_view key, double value);
  template <typename Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  Line& Kv(std::string_view key, Int value) {
    if constexpr (std::is_signed_v<Int>) return KvInt(key, static_cast<int64_t>(value));
    else return KvUint(key, static_cast<uint64_t>(value));
  }

 private:
  Line& KvInt(std::string_view key, int64_t value);
  Line& KvUint(std::string_view key, uint64_t value);
  void AppendKey(std::string_view key);
  void AppendString(std::string_view value);

  bool enabled_;
  Format format_;
  std::string buf_;
};

inline Line Debug(std::string_view component, std::string_view msg) { return {Level::kDebug, component, msg}; }
inline Line Info(std::string_view component, std::string_view msg) { return {Level::kInfo, component, msg}; }
inline Line Warn(std::string_view component, std::string_view msg) { return {Level::kWarn, component, msg}; }
inline Line Error(std::string_view component, std::string_view msg) { return {Level::kError, component, msg}; }

}  // namespace limits::log
