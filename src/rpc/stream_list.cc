#include "rpc/stream_list.h"

#include "common/proto_wire.h"

namespace limits::rpc {
namespace {

constexpr uint32_t kTenantField = 1;
constexpr uint32_t kStreamsField = 2;

// One StreamMetadata: streamHash = 1, totalSize = 2 (varints), ingestionPolicy = 3 (bytes).
bool DecodeStream(std::string_view bytes, StreamUpdate* out) {
  *out = {};
  wire::Reader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, type = 0;
    if (!r.Tag(&field, &type)) return false;
    if (field == 1 && type == wire::kVarint) {
      if (!r.Varint(&out->stream_hash)) return false;
    } else if (field == 2 && type == wire::kVarint) {
      if (!r.Varint(&out->bytes)) return false;
    } else if (field == 3 && type == wire::kLengthDelimited) {
      if (!r.Bytes(&out->policy)) return false;
    } else if (!r.Skip(field, type)) {
      return false;
    }
  }
  return true;
}

// Walks the request's top-level fields: `on_stream` gets each stream's bytes.
template <typename OnStream>
bool Walk(std::string_view body, std::string_view* tenant, OnStream on_stream) {
  wire::Reader r(body);
  while (!r.done()) {
    uint32_t field = 0, type = 0;
    if (!r.Tag(&field, &type)) return false;
    std::string_view bytes;
    if (field == kTenantField && type == wire::kLengthDelimited) {
      if (!r.Bytes(tenant)) return false;
    } else if (field == kStreamsField && type == wire::kLengthDelimited) {
      if (!r.Bytes(&bytes) || !on_stream(bytes)) return false;
    } else if (!r.Skip(field, type)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool StreamList::Parse(std::string_view body) {
  body_ = body;
  tenant_ = {};
  size_ = 0;
  StreamUpdate ignored;
  return Walk(body, &tenant_, [&](std::string_view stream) {
    ++size_;
    return DecodeStream(stream, &ignored);
  });
}

void StreamList::ForEachSlice(size_t slice, std::vector<StreamUpdate>* buffer,
                              const std::function<bool(std::span<const StreamUpdate>)>& fn) const {
  buffer->clear();
  buffer->reserve(std::min(slice, size_));
  bool stopped = false;
  std::string_view tenant;
  // Parse has checked every field: decoding cannot fail here.
  Walk(body_, &tenant, [&](std::string_view stream) {
    DecodeStream(stream, &buffer->emplace_back());
    if (buffer->size() == slice) {
      stopped = !fn(*buffer);
      buffer->clear();
    }
    return !stopped;
  });
  if (!stopped && !buffer->empty()) fn(*buffer);
}

ContiguousBody::ContiguousBody(const grpc::ByteBuffer& buffer) {
  if (buffer.Length() == 0) {
    ok_ = true;  // an empty message: slice_ is empty
    return;
  }
  ok_ = buffer.TrySingleSlice(&slice_).ok() || buffer.DumpToSingleSlice(&slice_).ok();
}

void AppendResult(std::string* response, uint64_t stream_hash, uint64_t value) {
  // proto3 leaves out fields holding their default.
  size_t len = 0;
  if (stream_hash != 0) len += 1 + wire::VarintSize(stream_hash);
  if (value != 0) len += 1 + wire::VarintSize(value);
  wire::PutTag(response, 1, wire::kLengthDelimited);
  wire::PutVarint(response, len);
  if (stream_hash != 0) {
    wire::PutTag(response, 1, wire::kVarint);
    wire::PutVarint(response, stream_hash);
  }
  if (value != 0) {
    wire::PutTag(response, 2, wire::kVarint);
    wire::PutVarint(response, value);
  }
}

grpc::ByteBuffer ToByteBuffer(std::string bytes) {
  if (bytes.empty()) {
    // A default ByteBuffer holds no buffer at all, which gRPC refuses to send (it aborts).
    grpc::Slice empty;
    return grpc::ByteBuffer(&empty, 1);
  }
  auto* owned = new std::string(std::move(bytes));
  grpc::Slice slice(owned->data(), owned->size(), [](void* p) { delete static_cast<std::string*>(p); }, owned);
  return grpc::ByteBuffer(&slice, 1);
}

}  // namespace limits::rpc
