#include "common/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/utf8.h"

namespace limits {

void JsonWriter::Newline() {
  if (!pretty_) return;
  out_.push_back('\n');
  out_.append(2 * first_.size(), ' ');
}

void JsonWriter::BeforeValue() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (first_.empty()) return;
  if (!first_.back()) out_.push_back(',');
  first_.back() = false;
  Newline();
}

JsonWriter& JsonWriter::BeginObject() {
  BeforeValue();
  out_.push_back('{');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndObject() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_.push_back('}');
  return *this;
}

JsonWriter& JsonWriter::BeginArray() {
  BeforeValue();
  out_.push_back('[');
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::EndArray() {
  const bool empty = first_.back();
  first_.pop_back();
  if (!empty) Newline();
  out_.push_back(']');
  return *this;
}

JsonWriter& JsonWriter::Key(std::string_view key) {
  BeforeValue();
  out_.append("\"").append(JsonEscape(key)).append(pretty_ ? "\": " : "\":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::String(std::string_view v) {
  BeforeValue();
  out_.append("\"").append(JsonEscape(v)).append("\"");
  return *this;
}

JsonWriter& JsonWriter::Int(int64_t v) {
  BeforeValue();
  out_.append(std::to_string(v));
  return *this;
}

JsonWriter& JsonWriter::Uint(uint64_t v) {
  BeforeValue();
  out_.append(std::to_string(v));
  return *this;
}

JsonWriter& JsonWriter::Double(double v) {
  BeforeValue();
  if (!std::isfinite(v)) {
    out_.append("null");
    return *this;
  }
  out_.append(ShortestDouble(v));
  return *this;
}

JsonWriter& JsonWriter::Bool(bool v) {
  BeforeValue();
  out_.append(v ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::Null() {
  BeforeValue();
  out_.append("null");
  return *this;
}

std::string JsonWriter::Take() {
  if (pretty_) out_.push_back('\n');
  return std::move(out_);
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x80) {
      const size_t n = Utf8SequenceLength(s.substr(i));
      if (n == 0) {
        out.append(kReplacementCharacter);  // one U+FFFD per byte that starts no valid sequence
        ++i;
        continue;
      }
      const std::string_view seq = s.substr(i, n);
      // U+2028 and U+2029 are valid JSON but end a line in JavaScript: escaped, as Go does.
      if (seq == "\xE2\x80\xA8") out.append("\\u2028");
      else if (seq == "\xE2\x80\xA9") out.append("\\u2029");
      else out.append(seq);
      i += n;
      continue;
    }
    switch (c) {
      case '"': out.append("\\\""); break;
      case '\\': out.append("\\\\"); break;
      case '\n': out.append("\\n"); break;
      case '\r': out.append("\\r"); break;
      case '\t': out.append("\\t"); break;
      default:
        if (u < 0x20 || u == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", u);
          out.append(buf);
        } else {
          out.push_back(c);
        }
    }
    ++i;
  }
  return out;
}

std::string ShortestDouble(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);  // shortest that reads back as v
  return ec == std::errc() ? std::string(buf, end) : std::string("null");
}

}  // namespace limits
