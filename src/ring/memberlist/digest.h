// The two checksums the gossip wire uses: MD5 (dskit's TCP transport appends one to every
// packet to detect truncation; not used for security) and CRC-32/IEEE (memberlist's
// hasCrcMsg header, protocol version 5). Pure functions, thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace limits::ring::memberlist {

std::array<uint8_t, 16> Md5(std::string_view data);
// CRC-32 with the IEEE polynomial, as Go's crc32.ChecksumIEEE.
uint32_t Crc32Ieee(std::string_view data);

}  // namespace limits::ring::memberlist
