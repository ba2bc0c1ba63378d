// Feeds: any bytes as the Buf of a memberlist compress message (LZW as Go's compress/lzw
// writes it, LSB order, 8-bit literals) to LzwDecompress; and the same bytes compressed by a
// copy of Go's writer, kept here.
// Checks: the output never exceeds max_out; what Go's writer compresses decompresses to the
// original bytes (codes 9 to 12 bits wide, the table's clear and refill included).
#include <cstdint>
#include <string>
#include <unordered_map>

#include "fuzz_check.h"
#include "ring/memberlist/lzw.h"

namespace {

// compress/lzw's Writer (writer.go), LSB, litWidth 8: a clear code first, a code per longest
// known prefix, the table reset with a clear code when the next code would be 4095, then the
// last code, the end code and the final partial byte.
class GoLzwWriter {
 public:
  std::string Compress(std::string_view in) {
    Write(kClear);
    if (in.empty()) {
      Write(kEof);
      return Finish();
    }
    uint32_t code = static_cast<uint8_t>(in[0]);
    for (size_t i = 1; i < in.size(); ++i) {
      const uint32_t literal = static_cast<uint8_t>(in[i]);
      const uint32_t key = code << 8 | literal;
      if (auto it = table_.find(key); it != table_.end()) {
        code = it->second;
        continue;
      }
      Write(code);
      code = literal;
      if (IncHi()) table_[key] = hi_;
    }
    Write(code);
    IncHi();
    Write(kEof);
    return Finish();
  }

 private:
  static constexpr uint32_t kClear = 256;
  static constexpr uint32_t kEof = 257;
  static constexpr uint32_t kMaxCode = 4095;

  void Write(uint32_t code) {
    bits_ |= static_cast<uint64_t>(code) << nbits_;
    nbits_ += width_;
    while (nbits_ >= 8) {
      out_.push_back(static_cast<char>(bits_ & 0xff));
      bits_ >>= 8;
      nbits_ -= 8;
    }
  }
  // False when the codes ran out and the table was reset.
  bool IncHi() {
    ++hi_;
    if (hi_ == overflow_) {
      ++width_;
      overflow_ <<= 1;
    }
    if (hi_ == kMaxCode) {
      Write(kClear);
      width_ = 9;
      hi_ = kEof;
      overflow_ = 512;
      table_.clear();
      return false;
    }
    return true;
  }
  std::string Finish() {
    if (nbits_ > 0) out_.push_back(static_cast<char>(bits_ & 0xff));
    return std::move(out_);
  }

  std::unordered_map<uint32_t, uint32_t> table_;
  uint32_t hi_ = kEof;
  uint32_t overflow_ = 512;
  uint32_t width_ = 9;
  uint64_t bits_ = 0;
  uint32_t nbits_ = 0;
  std::string out_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = limits::fuzz::AsView(data, size);
  constexpr size_t kMaxOut = 1 << 20;
  limits::Result<std::string> out = limits::ring::memberlist::LzwDecompress(in, kMaxOut);
  if (out.ok()) FUZZ_CHECK(out->size() <= kMaxOut);

  const std::string compressed = GoLzwWriter().Compress(in);
  limits::Result<std::string> plain = limits::ring::memberlist::LzwDecompress(compressed, in.size());
  FUZZ_CHECK(plain.ok());
  FUZZ_CHECK(*plain == in);
  return 0;
}
