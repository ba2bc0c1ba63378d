#include "output.h"

#include <cinttypes>
#include <cmath>
#include <ctime>

#include "common/utf8.h"

namespace limits::ctl {

namespace {

// Columns a cell takes: one per code point (Escaped() leaves only valid UTF-8).
size_t Columns(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

}  // namespace

void Table::Print(FILE* out) const {
  std::vector<std::vector<std::string>> cells;
  std::vector<size_t> width;
  for (const auto& row : rows_) {
    std::vector<std::string>& escaped = cells.emplace_back();
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) {
      escaped.push_back(Escaped(row[i]));
      width[i] = std::max(width[i], Columns(escaped[i]));
    }
  }
  for (const auto& row : cells) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(width[i] - Columns(row[i]) + 2, ' ');
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

std::string Escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto hex = [&out](unsigned char b) {
    static const char* kDigits = "0123456789abcdef";
    out.append("\\x").push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 15]);
  };
  size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    const size_t n = Utf8SequenceLength(text.substr(i));
    if (n == 0) {
      hex(b);  // not UTF-8
      ++i;
    } else if (n == 1) {
      if (b < 0x20 || b == 0x7f) hex(b);
      else if (b == '\\') out.append("\\\\");
      else out.push_back(static_cast<char>(b));
      ++i;
    } else if (b == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      hex(b);  // C1 controls U+0080..U+009F (a terminal takes U+009B as CSI)
      hex(static_cast<unsigned char>(text[i + 1]));
      i += 2;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string FormatUnixSeconds(int64_t s) {
  if (s == 0) return "-";
  const auto t = static_cast<std::time_t>(s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string FormatUnixMillis(int64_t ms) {
  if (ms == 0) return "-";
  std::string s = FormatUnixSeconds(ms / 1000);
  char frac[8];
  std::snprintf(frac, sizeof frac, ".%03d", static_cast<int>(ms % 1000));
  return s.insert(s.size() - 1, frac);
}

std::string FormatBytes(uint64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (unit == 0) std::snprintf(buf, sizeof buf, "%" PRIu64 " B", bytes);
  else std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  return buf;
}

std::string Hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out = "0x";
  for (char c : bytes) {
    out += kDigits[static_cast<unsigned char>(c) >> 4];
    out += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return out;
}

std::string Printable(std::string_view bytes) {
  for (char c : bytes) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) return Hex(bytes);
  }
  return std::string(bytes);
}

}  // namespace limits::ctl
