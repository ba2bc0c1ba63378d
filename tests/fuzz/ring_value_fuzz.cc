// Feeds: any bytes as a ring value (dskit's codec: snappy block of a protobuf ring.Desc), as it
// arrives from etcd or in a memberlist KeyValuePair, to ring::DecodeDesc; and the same bytes
// snappy-compressed, so that the fuzzer also reaches the ring.Desc parser without having to
// write snappy.
// Checks: a decoded value encodes (EncodeDesc) to bytes that decode to an equal value, unknown
// fields included, and re-encode to the same bytes (the encoding is deterministic).
#include <google/protobuf/util/message_differencer.h>
#include <snappy.h>

#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ring/ring_codec.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

namespace {

void RoundTrip(std::string_view bytes) {
  limits::Result<::ring::Desc> desc = limits::ring::DecodeDesc(bytes);
  if (!desc.ok()) {
    FUZZ_CHECK(desc.status().code() == limits::StatusCode::kCorruption);
    return;
  }
  const std::string encoded = limits::ring::EncodeDesc(*desc);
  limits::Result<::ring::Desc> again = limits::ring::DecodeDesc(encoded);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(google::protobuf::util::MessageDifferencer::Equals(*desc, *again));
  FUZZ_CHECK(limits::ring::EncodeDesc(*again) == encoded);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = limits::fuzz::AsView(data, size);
  RoundTrip(bytes);
  std::string compressed;
  snappy::Compress(bytes.data(), bytes.size(), &compressed);
  RoundTrip(compressed);
  return 0;
}
