// StreamList: an ExceedsLimitsRequest or UpdateRatesRequest (tenant = 1, streams = 2; both
// shapes are Loki's) read straight from its wire bytes, its streams decoded a slice at a time.
//
// A client controls a request's size (gRPC takes up to 128 MiB), and an empty stream is two
// bytes on the wire: parsed into message objects, one request of 67 million streams took
// ~8 GB. Decoded here, a request costs its bytes plus one slice of StreamUpdates, whatever
// its stream count. Parse checks the whole message first, as protobuf would parse it (unknown
// fields and groups skipped, the last of a repeated scalar wins), so a body that does not
// parse changes nothing; the test agrees with protobuf on valid, mutated and random bytes.
#pragma once

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "limits/usage/usage_store.h"

namespace limits::rpc {

class StreamList {
 public:
  // False when `body` is not a valid request; the views stay valid while `body` does.
  bool Parse(std::string_view body);

  std::string_view tenant() const { return tenant_; }
  size_t size() const { return size_; }

  // Calls `fn` with the streams in request order, at most `slice` at a time, decoded into
  // `buffer`; stops early when `fn` returns false. Policies are views into the body.
  void ForEachSlice(size_t slice, std::vector<StreamUpdate>* buffer,
                    const std::function<bool(std::span<const StreamUpdate>)>& fn) const;

 private:
  std::string_view body_;
  std::string_view tenant_;
  size_t size_ = 0;
};

// A request's bytes in one piece: its only slice, or a copy when gRPC received it in several.
class ContiguousBody {
 public:
  explicit ContiguousBody(const grpc::ByteBuffer& buffer);
  bool ok() const { return ok_; }
  std::string_view view() const {
    return {reinterpret_cast<const char*>(slice_.begin()), slice_.size()};
  }

 private:
  grpc::Slice slice_;
  bool ok_ = false;
};

// ExceedsLimitsResult and UpdateRatesResult share a shape: {uint64 streamHash = 1; varint = 2}.
// Appends one as an element of the response's `results` (field 1), as protobuf writes it.
void AppendResult(std::string* response, uint64_t stream_hash, uint64_t value);

// A response's bytes as gRPC's buffer, without copying them.
grpc::ByteBuffer ToByteBuffer(std::string bytes);

}  // namespace limits::rpc
