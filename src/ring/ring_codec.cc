#include "ring/ring_codec.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <snappy.h>

namespace limits::ring {

std::string EncodeDesc(const ::ring::Desc& desc) {
  // Deterministic: map entries (the instances) in key order, so an unchanged ring encodes
  // to the same bytes (protobuf's map order is otherwise unspecified, even per process).
  std::string raw;
  {
    google::protobuf::io::StringOutputStream stream(&raw);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    desc.SerializeToCodedStream(&coded);
  }
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
