// Output of limitsctl: aligned text tables for people, JSON for scripts.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.h"

namespace limits::ctl {

// Columns padded to their widest cell; printed with Print(). Every cell is Escaped(): a
// tenant or policy name is data from the wire and must not drive the terminal.
class Table {
 public:
  explicit Table(std::vector<std::string> headers) : rows_{std::move(headers)} {}
  void Row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void Print(FILE* out) const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

// JSON for --json: the common writer, printed to `out` when it goes out of scope.
class Json : public JsonWriter {
 public:
  explicit Json(FILE* out) : out_(out) {}
  ~Json() { std::fputs(Take().c_str(), out_); }

 private:
  FILE* out_;
};


// RFC 3339 in UTC, "2026-12-02T15:04:05Z"; "-" for 0.
std::string FormatUnixSeconds(int64_t s);
std::string FormatUnixMillis(int64_t ms);
// "1.2 MiB"
std::string FormatBytes(uint64_t bytes);
// Text for a terminal: valid UTF-8 passes through; control characters (C0, DEL, C1) and
// bytes that are not UTF-8 become \xNN, a backslash \\ (so the escapes are unambiguous).
std::string Escaped(std::string_view text);
// Printable form of arbitrary bytes: the text when printable, else 0x-hex.
std::string Printable(std::string_view bytes);
std::string Hex(std::string_view bytes);

}  // namespace limits::ctl
