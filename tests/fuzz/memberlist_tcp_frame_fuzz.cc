// Feeds: any bytes as what follows the type byte of a dskit TCP-transport packet connection
// ([u8 length][sender host:port][payload][MD5 of payload]) to DecodePacketFrame; and a frame
// built around the bytes (the first up to 255 as the address), so the digest matches.
// Checks: a decoded frame encodes back to exactly the bytes received; a built frame decodes
// to its address and payload, and no longer does once its last byte is cut.
#include <algorithm>
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ring/memberlist/tcp_framing.h"

namespace ml = limits::ring::memberlist;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = limits::fuzz::AsView(data, size);
  limits::Result<ml::PacketFrame> frame = ml::DecodePacketFrame(in);
  if (frame.ok()) {
    FUZZ_CHECK(ml::EncodePacketFrame(frame->from, frame->payload).substr(1) == in);
  }

  const size_t addr_len = in.empty() ? 0 : std::min<size_t>(static_cast<uint8_t>(in[0]), in.size() - 1);
  const std::string_view from = in.substr(std::min<size_t>(1, in.size()), addr_len);
  const std::string_view payload = in.substr(std::min(in.size(), 1 + addr_len));
  const std::string built = ml::EncodePacketFrame(from, payload);
  FUZZ_CHECK(static_cast<uint8_t>(built[0]) == ml::kFramePacket);
  limits::Result<ml::PacketFrame> decoded = ml::DecodePacketFrame(std::string_view(built).substr(1));
  FUZZ_CHECK(decoded.ok());
  FUZZ_CHECK(decoded->from == from && decoded->payload == payload);
  FUZZ_CHECK(!ml::DecodePacketFrame(std::string_view(built).substr(1, built.size() - 2)).ok());
  return 0;
}
