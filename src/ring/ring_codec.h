// dskit's proto codec for ring values: protobuf ring.Desc, compressed with snappy's block
// format (dskit/kv/codec). Unknown fields of a newer dskit survive a decode/encode round trip.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"
#include "proto/ring.pb.h"

namespace limits::ring {

// The codec id dskit gossips with ring values (memberlist's KeyValuePair.codec).
inline constexpr char kRingCodecId[] = "ringDesc";

std::string EncodeDesc(const ::ring::Desc& desc);
// kCorruption when the bytes are not snappy or not a ring.Desc.
Result<::ring::Desc> DecodeDesc(std::string_view bytes);

}  // namespace limits::ring
