#include "config/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace limits::config {
namespace {

// '"text"'; built by appending (GCC 12 warns falsely about '"' + std::string(...) + '"').
std::string Quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.append(1, '"').append(text).append(1, '"');
  return out;
}

// Parses a non-negative decimal number at the front of `text`; advances past it.
bool ConsumeNumber(std::string_view* text, double* out) {
  size_t i = 0;
  bool digits = false;
  while (i < text->size() && std::isdigit(static_cast<unsigned char>((*text)[i]))) ++i, digits = true;
  if (i < text->size() && (*text)[i] == '.') {
    ++i;
    while (i < text->size() && std::isdigit(static_cast<unsigned char>((*text)[i]))) ++i, digits = true;
  }
  if (!digits) return false;
  *out = std::strtod(std::string(text->substr(0, i)).c_str(), nullptr);
  text->remove_prefix(i);
  return true;
}

std::string_view ConsumeUnit(std::string_view* text) {
  size_t i = 0;
  while (i < text->size() && std::isalpha(static_cast<unsigned char>((*text)[i]))) ++i;
  std::string_view unit = text->substr(0, i);
  text->remove_prefix(i);
  return unit;
}

}  // namespace

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"ms", 1}, {"s", 1e3}, {"m", 60e3}, {"h", 3600e3}, {"d", 86400e3}};
  const std::string quoted = Quoted(text);
  if (text.empty()) return Status::InvalidArgument("empty duration; write it like \"30s\", \"5m\" or \"2h\"");
  std::string_view rest = text;
  double total_ms = 0;
  while (!rest.empty()) {
    double number = 0;
    if (!ConsumeNumber(&rest, &number)) {
      return Status::InvalidArgument("invalid duration " + quoted + "; write it like \"30s\", \"5m\" or \"2h\"");
    }
    std::string_view unit = ConsumeUnit(&rest);
    double scale = 0;
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) scale = ms;
    }
    if (scale == 0) {
      return Status::InvalidArgument("invalid duration " + quoted +
                                     (unit.empty() ? ": missing unit" : ": unknown unit \"" + std::string(unit) + "\"") +
                                     " (use ms, s, m, h or d)");
    }
    total_ms += number * scale;
  }
  if (total_ms > 1e15) return Status::InvalidArgument("duration " + quoted + " is too large");
  if (total_ms != std::floor(total_ms)) {
    return Status::InvalidArgument("duration " + quoted + " is not a whole number of milliseconds");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

std::string FormatDuration(std::chrono::milliseconds d) {
  int64_t ms = d.count();
  if (ms == 0) return "0s";
  std::string out;
  if (ms < 0) {
    out = "-";
    ms = -ms;
  }
  static constexpr std::pair<const char*, int64_t> kUnits[] = {
      {"h", 3600000}, {"m", 60000}, {"s", 1000}, {"ms", 1}};
  for (const auto& [name, unit] : kUnits) {
    if (ms >= unit) {
      out += std::to_string(ms / unit) + name;
      ms %= unit;
    }
  }
  return out;
}

Result<uint64_t> ParseSize(std::string_view text) {
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"", 1},         {"B", 1},           {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30},
      {"TiB", 1ull << 40}, {"KB", 1000},   {"MB", 1000000},     {"GB", 1000000000},  {"TB", 1000000000000}};
  const std::string quoted = Quoted(text);
  std::string_view rest = text;
  double number = 0;
  if (!ConsumeNumber(&rest, &number)) {
    return Status::InvalidArgument("invalid size " + quoted + "; write it like \"256MiB\" or \"1GiB\"");
  }
  std::string_view unit = ConsumeUnit(&rest);
  if (!rest.empty()) return Status::InvalidArgument("invalid size " + quoted + "; write it like \"256MiB\"");
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    const double bytes = number * static_cast<double>(scale);
    if (bytes > 1.8e19) return Status::InvalidArgument("size " + quoted + " is too large");
    if (bytes != std::floor(bytes)) return Status::InvalidArgument("size " + quoted + " is not a whole number of bytes");
    return static_cast<uint64_t>(bytes);
  }
  return Status::InvalidArgument("invalid size " + quoted + ": unknown unit \"" + std::string(unit) +
                                 "\" (use B, KiB, MiB, GiB, TiB, KB, MB, GB or TB)");
}

std::string FormatSize(uint64_t bytes) {
  static constexpr std::pair<const char*, uint64_t> kUnits[] = {
      {"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10}};
  for (const auto& [name, unit] : kUnits) {
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + name;
  }
  return std::to_string(bytes) + "B";
}

}  // namespace limits::config
