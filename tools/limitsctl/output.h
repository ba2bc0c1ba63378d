// Output of limitsctl: aligned text tables for people, JSON for scripts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace limits::ctl {

// Columns padded to their widest cell; printed with Print().
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void Print(FILE* out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// A streaming JSON writer with two-space indentation. Keys and values are emitted in call
// order; commas and nesting are handled here.
class Json {
 public:
  explicit Json(FILE* out) : out_(out) {}
  ~Json();

  Json& BeginObject();
  Json& EndObject();
  Json& BeginArray();
  Json& EndArray();
  Json& Key(std::string_view key);
  Json& String(std::string_view v);
  Json& Int(int64_t v);
  Json& Uint(uint64_t v);
  Json& Double(double v);
  Json& Bool(bool v);
  Json& Null();

  // Key + value in one call.
  template <typename T>
  Json& Field(std::string_view key, const T& v);

 private:
  void BeforeValue();
  void Newline();
  FILE* out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

template <>
inline Json& Json::Field(std::string_view key, const std::string& v) { return Key(key).String(v); }
template <>
inline Json& Json::Field(std::string_view key, const std::string_view& v) { return Key(key).String(v); }
template <>
inline Json& Json::Field(std::string_view key, const bool& v) { return Key(key).Bool(v); }
template <>
inline Json& Json::Field(std::string_view key, const double& v) { return Key(key).Double(v); }
template <typename T>
inline Json& Json::Field(std::string_view key, const T& v) {
  if constexpr (std::is_signed_v<T>) return Key(key).Int(static_cast<int64_t>(v));
  else return Key(key).Uint(static_cast<uint64_t>(v));
}

std::string JsonEscape(std::string_view s);
// RFC 3339 in UTC, "2026-12-02T15:04:05Z"; "-" for 0.
std::string FormatUnixSeconds(int64_t s);
std::string FormatUnixMillis(int64_t ms);
// "1.2 MiB"
std::string FormatBytes(uint64_t bytes);
// Printable form of arbitrary bytes: the text when printable, else 0x-hex.
std::string Printable(std::string_view bytes);
std::string Hex(std::string_view bytes);

}  // namespace limits::ctl
