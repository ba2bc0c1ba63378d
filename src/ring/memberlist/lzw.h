// LZW decompression as Go's compress/lzw reads it with LSB bit order and 8-bit literals:
// what HashiCorp memberlist's compressMsg carries (dskit enables compression by default).
// We never compress what we send (memberlist accepts both). Pure function, thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::ring::memberlist {

// kCorruption on an invalid code, a stream without its end code, or output beyond max_out.
Result<std::string> LzwDecompress(std::string_view in, size_t max_out);

}  // namespace limits::ring::memberlist
