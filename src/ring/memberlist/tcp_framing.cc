#include "ring/memberlist/tcp_framing.h"

#include <cstring>

#include "common/status.h"
#include "ring/memberlist/digest.h"

namespace limits::ring::memberlist {

std::string EncodePacketFrame(std::string_view from_addr, std::string_view payload) {
  LIMITS_CHECK(from_addr.size() <= 255, "advertised address over 255 bytes");
  const auto digest = Md5(payload);
  std::string out;
  out.reserve(2 + from_addr.size() + payload.size() + kDigestSize);
  out.push_back(static_cast<char>(kFramePacket));
  out.push_back(static_cast<char>(from_addr.size()));
  out += from_addr;
  out += payload;
  out.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  return out;
}

Result<PacketFrame> DecodePacketFrame(std::string_view rest) {
  if (rest.empty()) return Status::Corruption("packet: no address length");
  const size_t addr_len = static_cast<uint8_t>(rest[0]);
  rest.remove_prefix(1);
  if (rest.size() < addr_len) return Status::Corruption("packet: truncated sender address");
  PacketFrame frame;
  frame.from.assign(rest.substr(0, addr_len));
  rest.remove_prefix(addr_len);
  if (rest.size() < kDigestSize) {
    return Status::Corruption("packet: " + std::to_string(rest.size()) + " bytes, shorter than its digest");
  }
  const std::string_view payload = rest.substr(0, rest.size() - kDigestSize);
  const std::string_view received = rest.substr(rest.size() - kDigestSize);
  const auto expected = Md5(payload);
  if (std::memcmp(expected.data(), received.data(), kDigestSize) != 0) {
    return Status::Corruption("packet: digest mismatch over " + std::to_string(payload.size()) + " bytes");
  }
  frame.payload.assign(payload);
  return frame;
}

}  // namespace limits::ring::memberlist
