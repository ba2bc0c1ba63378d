// UTF-8 checks for text that leaves the process (JSON, log lines, tables) or arrives in it
// (gRPC strings, URL paths). Strict RFC 3629: no overlong forms, no surrogates, nothing above
// U+10FFFF. Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace limits {

// The length (1-4) of the valid UTF-8 sequence at the front of `s`, or 0 when its first
// byte does not start one (an invalid byte, a truncated or overlong sequence, a surrogate).
size_t Utf8SequenceLength(std::string_view s);

// True when all of `s` is valid UTF-8.
bool IsValidUtf8(std::string_view s);

// Byte offset of the first invalid sequence, or npos.
size_t FirstInvalidUtf8(std::string_view s);

inline constexpr std::string_view kReplacementCharacter = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace limits
