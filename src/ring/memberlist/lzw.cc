#include "ring/memberlist/lzw.h"

#include <cstdint>
#include <vector>

namespace limits::ring::memberlist {

namespace {

constexpr uint32_t kClear = 256;
constexpr uint32_t kEnd = 257;
constexpr uint32_t kMaxWidth = 12;
constexpr uint32_t kTableSize = 1u << kMaxWidth;
constexpr uint32_t kNoCode = 0xffff;

}  // namespace

Result<std::string> LzwDecompress(std::string_view in, size_t max_out) {
  // Each code above kEnd expands to the expansion of prefix[code] followed by suffix[code].
  std::vector<uint16_t> prefix(kTableSize, 0);
  std::vector<uint8_t> suffix(kTableSize, 0);
  std::vector<uint8_t> scratch;
  std::string out;

  uint32_t width = 9;
  uint32_t next = kEnd;  // the table slot the next code fills
  uint32_t overflow = 1u << width;
  uint32_t last = kNoCode;
  uint64_t bits = 0;
  uint32_t nbits = 0;
  size_t pos = 0;

  auto first_byte = [&](uint32_t code) {
    while (code >= kClear) code = prefix[code];
    return static_cast<uint8_t>(code);
  };
  // Appends the expansion of `code` (a literal or a filled slot) to out.
  auto expand = [&](uint32_t code) {
    scratch.clear();
    while (code >= kClear) {
      scratch.push_back(suffix[code]);
      code = prefix[code];
    }
    scratch.push_back(static_cast<uint8_t>(code));
    for (auto it = scratch.rbegin(); it != scratch.rend(); ++it) out.push_back(static_cast<char>(*it));
  };

  while (true) {
    while (nbits < width) {
      if (pos == in.size()) return Status::Corruption("lzw: stream ends without its end code");
      bits |= static_cast<uint64_t>(static_cast<uint8_t>(in[pos++])) << nbits;
      nbits += 8;
    }
    const auto code = static_cast<uint32_t>(bits & ((1u << width) - 1));
    bits >>= width;
    nbits -= width;

    if (code == kClear) {
      width = 9;
      next = kEnd;
      overflow = 1u << width;
      last = kNoCode;
      continue;
    }
    if (code == kEnd) return out;

    if (code < kClear) {
      out.push_back(static_cast<char>(code));
      if (last != kNoCode) {
        suffix[next] = static_cast<uint8_t>(code);
        prefix[next] = static_cast<uint16_t>(last);
      }
    } else if (code < next && code > kEnd) {
      const uint8_t head = first_byte(code);
      expand(code);
      if (last != kNoCode) {
        suffix[next] = head;
        prefix[next] = static_cast<uint16_t>(last);
      }
    } else if (code == next && last != kNoCode) {
      // The slot being defined: last's expansion followed by its own first byte.
      const uint8_t head = first_byte(last);
      suffix[next] = head;
      prefix[next] = static_cast<uint16_t>(last);
      expand(code);
    } else if (code == next && code > kEnd) {
      // Only once the table is full (next stays on its last, filled slot; no new entries).
      expand(code);
    } else {
      return Status::Corruption("lzw: invalid code " + std::to_string(code));
    }
    if (out.size() > max_out) {
      return Status::Corruption("lzw: output exceeds " + std::to_string(max_out) + " bytes");
    }

    last = code;
    ++next;
    if (next >= overflow) {
      if (width == kMaxWidth) {
        // Table full: no more slots until the next clear code (Go keeps next < overflow).
        last = kNoCode;
        --next;
      } else {
        ++width;
        overflow = 1u << width;
      }
    }
  }
}

}  // namespace limits::ring::memberlist
