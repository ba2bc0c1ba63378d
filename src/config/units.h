// Durations and sizes written the way operators write them: "2h", "1h30m", "500ms";
// "256MiB", "1GiB", "64MB", "4096".
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::config {

// Units ms, s, m, h, d; one or more number+unit pairs ("1h30m", "1.5h"). Not negative.
// Decimals are exact ("0.07h" is 252000 ms); a value that is not a whole number of ms, or
// beyond int64 ms, is an error. Keys bound it further (load_config.cc).
Result<std::chrono::milliseconds> ParseDuration(std::string_view text);
// The shortest exact form: 7200000 ms -> "2h", 90000 -> "1m30s", 1500 -> "1s500ms".
std::string FormatDuration(std::chrono::milliseconds d);

// Binary units B, KiB, MiB, GiB, TiB; decimal KB, MB, GB, TB; a bare number is bytes.
// Exact like durations ("1.001MB" is 1001000 bytes); at most 2^64 - 1 bytes.
Result<uint64_t> ParseSize(std::string_view text);
// "256MiB" when exact in a binary unit, else bytes.
std::string FormatSize(uint64_t bytes);

}  // namespace limits::config
