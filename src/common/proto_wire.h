// Protobuf's wire format, as much of it as our hand-written decoders and encoders need: they
// read and write Loki's messages on hot paths without building message objects. Each
// decoder has a test that agrees with protobuf's own parser on valid, mutated and random bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace limits::wire {

class Reader {
 public:
  explicit Reader(std::string_view bytes) : p_(bytes.data()), end_(bytes.data() + bytes.size()) {}
  bool done() const { return p_ == end_; }

  bool Varint(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const auto byte = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool Bytes(std::string_view* v) {
    uint64_t n = 0;
    if (!Varint(&n) || n > static_cast<uint64_t>(end_ - p_)) return false;
    *v = std::string_view(p_, n);
    p_ += n;
    return true;
  }
  // Skips field `field` of wire type `wire_type` (its tag already read), as protobuf keeps a
  // field of another number, or of an unexpected wire type, as an unknown field. That includes
  // a group: everything up to the end-group tag of the same number, nested at most as deep as
  // protobuf's recursion limit.
  bool Skip(uint32_t field, uint32_t wire_type, int depth = 0) {
    uint64_t ignored = 0;
    std::string_view bytes;
    switch (wire_type) {
      case 0: return Varint(&ignored);
      case 1: return Advance(8);
      case 2: return Bytes(&bytes);
      case 3: return SkipGroup(field, depth + 1);
      case 5: return Advance(4);
      default: return false;  // an end-group outside its group, or no wire type at all
    }
  }
  // A tag is at most five bytes; as protobuf's parser does, bits above the 32nd are dropped.
  bool Tag(uint32_t* field, uint32_t* wire_type) {
    uint32_t tag = 0;
    for (int i = 0;; ++i) {
      if (i == 5 || p_ == end_) return false;
      const auto byte = static_cast<uint8_t>(*p_++);
      tag |= static_cast<uint32_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) break;
    }
    *field = tag >> 3;
    *wire_type = tag & 7;
    return *field != 0;
  }

 private:
  static constexpr int kMaxDepth = 100;  // protobuf's default recursion limit

  bool SkipGroup(uint32_t field, int depth) {
    if (depth > kMaxDepth) return false;
    for (;;) {
      uint32_t inner = 0, type = 0;
      if (!Tag(&inner, &type)) return false;
      if (type == 4) return inner == field;
      if (!Skip(inner, type, depth)) return false;
    }
  }
  bool Advance(size_t n) {
    if (n > static_cast<size_t>(end_ - p_)) return false;
    p_ += n;
    return true;
  }
  const char* p_;
  const char* end_;
};

inline void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

inline size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

enum WireType : uint32_t { kVarint = 0, kLengthDelimited = 2 };

inline void PutTag(std::string* out, uint32_t field, WireType type) { PutVarint(out, (uint64_t{field} << 3) | type); }

}  // namespace limits::wire
