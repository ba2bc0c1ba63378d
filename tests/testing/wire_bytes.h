// Protobuf wire bytes built by hand, for the tests that hold a hand-written decoder against
// protobuf's parser: fields of any number and wire type (groups included), and random bytes
// that are mostly letters.
#pragma once

#include <cstdint>
#include <random>
#include <string>

namespace limits::testing {

inline std::string Varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}

// A tag and `payload`, with its length when `type` is 2 (length-delimited).
inline std::string Field(uint32_t number, uint32_t type, const std::string& payload) {
  std::string out = Varint((uint64_t{number} << 3) | type);
  if (type == 2) out += Varint(payload.size());
  return out + payload;
}

// A group holding a group ... `depth` deep, each closed by its end-group tag.
inline std::string NestedGroups(uint32_t number, int depth) {
  std::string out;
  for (int i = 0; i < depth; ++i) out = Field(number, 3, out) + Field(number, 4, "");
  return out;
}

// Up to `max` bytes: two in three a lower-case letter, the rest any byte.
inline std::string RandomBytes(std::mt19937_64& rng, size_t max) {
  std::string s(rng() % (max + 1), '\0');
  for (char& ch : s) ch = static_cast<char>(rng() % 3 == 0 ? rng() % 256 : 'a' + rng() % 26);
  return s;
}

}  // namespace limits::testing
