#include "ring/ring_codec.h"

#include <snappy.h>

namespace limits::ring {

std::string EncodeDesc(const ::ring::Desc& desc) {
  std::string raw;
  desc.SerializeToString(&raw);
  std::string out;
  snappy::Compress(raw.data(), raw.size(), &out);
  return out;
}

Result<::ring::Desc> DecodeDesc(std::string_view bytes) {
  std::string raw;
  if (!snappy::Uncompress(bytes.data(), bytes.size(), &raw)) {
    return Status::Corruption("ring value is not snappy-compressed (" + std::to_string(bytes.size()) + " bytes)");
  }
  ::ring::Desc desc;
  if (!desc.ParseFromString(raw)) return Status::Corruption("ring value is not a ring.Desc");
  return desc;
}

}  // namespace limits::ring
