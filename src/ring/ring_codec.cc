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
  // snappy::Uncompress sizes (and zero-fills) its output to the length the block announces
  // before decoding a byte: five bytes from a peer could claim 4 GiB. Validating first costs a
  // pass over the block and allocates nothing; a valid block expands at most ~22 times.
  std::string raw;
  if (!snappy::IsValidCompressedBuffer(bytes.data(), bytes.size()) ||
      !snappy::Uncompress(bytes.data(), bytes.size(), &raw)) {
    return Status::Corruption("ring value is not snappy-compressed (" + std::to_string(bytes.size()) + " bytes)");
  }
  ::ring::Desc desc;
  if (!desc.ParseFromString(raw)) return Status::Corruption("ring value is not a ring.Desc");
  return desc;
}

}  // namespace limits::ring
