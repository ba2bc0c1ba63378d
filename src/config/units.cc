#include "config/units.h"

#include <algorithm>
#include <cctype>
#include <limits>
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

// A non-negative decimal number, kept as text so it can be scaled exactly: integer digits
// and fraction digits, leading zeros of the integer and trailing zeros of the fraction dropped.
struct Decimal {
  std::string_view integer;
  std::string_view fraction;
};

// Parses digits[.digits] (either side may be empty, not both) at the front of `text`.
bool ConsumeNumber(std::string_view* text, Decimal* out) {
  auto digits = [text](size_t from) {
    size_t i = from;
    while (i < text->size() && std::isdigit(static_cast<unsigned char>((*text)[i]))) ++i;
    return i;
  };
  const size_t int_end = digits(0);
  size_t end = int_end;
  size_t frac_end = int_end;
  if (int_end < text->size() && (*text)[int_end] == '.') {
    frac_end = digits(int_end + 1);
    end = frac_end;
  }
  const std::string_view integer = text->substr(0, int_end);
  std::string_view fraction = end > int_end ? text->substr(int_end + 1, frac_end - int_end - 1) : std::string_view();
  if (integer.empty() && fraction.empty()) return false;
  out->integer = integer.substr(std::min(integer.find_first_not_of('0'), integer.size()));
  const size_t last = fraction.find_last_not_of('0');
  out->fraction = last == std::string_view::npos ? std::string_view() : fraction.substr(0, last + 1);
  text->remove_prefix(end);
  return true;
}

enum class Scaled { kOk, kTooLarge, kNotWhole, kTooPrecise };

__extension__ typedef unsigned __int128 u128;  // GCC and Clang; no std 128-bit type in C++20

u128 Gcd(u128 a, u128 b) {
  while (b != 0) {
    const u128 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// number * scale, exactly, when it is a whole number no larger than `max`. Integer
// arithmetic only: 0.07 h is 252000 ms, never 252000.00000000003.
Scaled Scale(const Decimal& number, uint64_t scale, uint64_t max, uint64_t* out) {
  // More integer digits than any 64-bit result has: too large whatever the unit.
  if (number.integer.size() > 20) return Scaled::kTooLarge;
  // 10^38 is the largest power of ten in 128 bits.
  if (number.fraction.size() > 38) return Scaled::kTooPrecise;
  u128 integer = 0;
  for (char c : number.integer) integer = integer * 10 + static_cast<unsigned>(c - '0');
  u128 fraction = 0, denominator = 1;
  for (char c : number.fraction) {
    fraction = fraction * 10 + static_cast<unsigned>(c - '0');
    denominator *= 10;
  }
  // fraction / denominator * scale is whole iff denominator / gcd divides fraction.
  const u128 g = Gcd(scale, denominator);
  const u128 reduced = denominator / g;
  if (fraction % reduced != 0) return Scaled::kNotWhole;
  const u128 total = integer * scale + fraction / reduced * (scale / g);  // < 10^20 * 2^40 + scale
  if (total > max) return Scaled::kTooLarge;
  *out = static_cast<uint64_t>(total);
  return Scaled::kOk;
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
  static constexpr std::pair<std::string_view, uint64_t> kUnits[] = {
      {"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}, {"d", 86'400'000}};
  constexpr uint64_t kMaxMs = std::numeric_limits<int64_t>::max();
  const std::string quoted = Quoted(text);
  if (text.empty()) return Status::InvalidArgument("empty duration; write it like \"30s\", \"5m\" or \"2h\"");
  std::string_view rest = text;
  uint64_t total_ms = 0;
  while (!rest.empty()) {
    Decimal number;
    if (!ConsumeNumber(&rest, &number)) {
      return Status::InvalidArgument("invalid duration " + quoted + "; write it like \"30s\", \"5m\" or \"2h\"");
    }
    std::string_view unit = ConsumeUnit(&rest);
    uint64_t scale = 0;
    for (const auto& [name, ms] : kUnits) {
      if (unit == name) scale = ms;
    }
    if (scale == 0) {
      return Status::InvalidArgument("invalid duration " + quoted +
                                     (unit.empty() ? ": missing unit" : ": unknown unit \"" + std::string(unit) + "\"") +
                                     " (use ms, s, m, h or d)");
    }
    uint64_t ms = 0;
    switch (Scale(number, scale, kMaxMs - total_ms, &ms)) {
      case Scaled::kOk: break;
      case Scaled::kTooLarge: return Status::InvalidArgument("duration " + quoted + " is too large");
      case Scaled::kNotWhole:
      case Scaled::kTooPrecise:
        return Status::InvalidArgument("duration " + quoted + " is not a whole number of milliseconds");
    }
    total_ms += ms;
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
  Decimal number;
  if (!ConsumeNumber(&rest, &number)) {
    return Status::InvalidArgument("invalid size " + quoted + "; write it like \"256MiB\" or \"1GiB\"");
  }
  std::string_view unit = ConsumeUnit(&rest);
  if (!rest.empty()) return Status::InvalidArgument("invalid size " + quoted + "; write it like \"256MiB\"");
  for (const auto& [name, scale] : kUnits) {
    if (unit != name) continue;
    uint64_t bytes = 0;
    switch (Scale(number, scale, std::numeric_limits<uint64_t>::max(), &bytes)) {
      case Scaled::kOk: return bytes;
      case Scaled::kTooLarge: return Status::InvalidArgument("size " + quoted + " is too large");
      case Scaled::kNotWhole:
      case Scaled::kTooPrecise: return Status::InvalidArgument("size " + quoted + " is not a whole number of bytes");
    }
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
