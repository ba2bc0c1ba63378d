// JsonWriter: builds a JSON document into a string, with two-space indentation (or compact);
// commas and nesting are handled here. For limitsctl's --json and the node's HTTP API.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace limits {

class JsonWriter {
 public:
  explicit JsonWriter(bool pretty = true) : pretty_(pretty) {}

  JsonWriter& BeginObject();
  JsonWriter& EndObject();
  JsonWriter& BeginArray();
  JsonWriter& EndArray();
  JsonWriter& Key(std::string_view key);
  JsonWriter& String(std::string_view v);
  JsonWriter& Int(int64_t v);
  JsonWriter& Uint(uint64_t v);
  JsonWriter& Double(double v);  // shortest round-trip form; null when not finite
  JsonWriter& Bool(bool v);
  JsonWriter& Null();

  // Key and value in one call.
  JsonWriter& Field(std::string_view key, std::string_view v) { return Key(key).String(v); }
  JsonWriter& Field(std::string_view key, const std::string& v) { return Key(key).String(v); }
  JsonWriter& Field(std::string_view key, const char* v) { return Key(key).String(v); }
  JsonWriter& Field(std::string_view key, bool v) { return Key(key).Bool(v); }
  JsonWriter& Field(std::string_view key, double v) { return Key(key).Double(v); }
  template <typename Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  JsonWriter& Field(std::string_view key, Int v) {
    if constexpr (std::is_signed_v<Int>) return Key(key).Int(v);
    else return Key(key).Uint(v);
  }

  // The document, with a final newline when pretty.
  std::string Take();

 private:
  void BeforeValue();
  void Newline();
  bool pretty_;
  std::string out_;
  std::vector<bool> first_;  // per open container: nothing written yet
  bool after_key_ = false;
};

// The body of a JSON string (without the quotes): valid UTF-8 passes through, each byte of
// invalid UTF-8 becomes U+FFFD, control characters (and DEL, U+2028, U+2029) are escaped.
std::string JsonEscape(std::string_view s);

// The shortest decimal form that reads back as exactly `v` (std::to_chars): 12345678.9, 1e+16.
// Not for NaN or infinities (JsonWriter writes those as null).
std::string ShortestDouble(double v);

}  // namespace limits
