// dskit's TCP transport framing (kv/memberlist/tcp_transport.go): every memberlist "packet"
// is one TCP connection carrying [1][u8 length][sender's advertised host:port][payload]
// [MD5 of payload], closed by the sender; a "stream" is a connection whose first byte is 2,
// followed by memberlist's stream protocol. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::ring::memberlist {

inline constexpr uint8_t kFramePacket = 1;
inline constexpr uint8_t kFrameStream = 2;
inline constexpr size_t kDigestSize = 16;

// The whole connection for one packet, from its first byte.
std::string EncodePacketFrame(std::string_view from_addr, std::string_view payload);

struct PacketFrame {
  std::string from;  // the sender's advertised address, host:port
  std::string payload;
};
// `rest` is everything after the type byte, up to the sender's close. kCorruption when it is
// short, or its digest does not match (dskit only warns; we drop the packet: it was cut).
Result<PacketFrame> DecodePacketFrame(std::string_view rest);

}  // namespace limits::ring::memberlist
