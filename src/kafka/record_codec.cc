#include "kafka/record_codec.h"

#include <librdkafka/rdkafka.h>

#include <cstdint>

#include "common/proto_wire.h"
#include "common/utf8.h"
#include "limits/lifecycle/record_filter.h"
#include "proto/limits.pb.h"

namespace limits::kafka {

namespace {

using WireReader = wire::Reader;

bool DecodeMetadata(std::string_view bytes, RecordView* out) {
  WireReader r(bytes);
  while (!r.done()) {
    uint32_t field = 0, type = 0;
    if (!r.Tag(&field, &type)) return false;
    if (field == 1 && type == 0) {
      if (!r.Varint(&out->stream_hash)) return false;
    } else if (field == 2 && type == 0) {
      if (!r.Varint(&out->total_size)) return false;
    } else if (field == 3 && type == 2) {
      if (!r.Bytes(&out->policy) || !IsValidUtf8(out->policy)) return false;
    } else if (!r.Skip(field, type)) {
      return false;
    }
  }
  return true;
}

}  // namespace

bool DecodeRecordValue(std::string_view value, RecordView* out) {
  out->zone = out->tenant = out->policy = {};
  out->stream_hash = out->total_size = 0;
  bool has_metadata = false;
  WireReader r(value);
  while (!r.done()) {
    uint32_t field = 0, type = 0;
    if (!r.Tag(&field, &type)) return false;
    std::string_view bytes;
    if (field == 1 && type == 2) {
      if (!r.Bytes(&out->zone) || !IsValidUtf8(out->zone)) return false;
    } else if (field == 2 && type == 2) {
      if (!r.Bytes(&out->tenant) || !IsValidUtf8(out->tenant)) return false;
    } else if (field == 3 && type == 2) {
      // A message field given twice is merged, as protobuf does.
      if (!r.Bytes(&bytes) || !DecodeMetadata(bytes, out)) return false;
      has_metadata = true;
    } else if (!r.Skip(field, type)) {
      return false;
    }
  }
  return !out->tenant.empty() && has_metadata;
}

bool DecodeRecord(const rd_kafka_message_t& message, RecordView* out, bool read_instance) {
  if (message.payload == nullptr) return false;
  if (!DecodeRecordValue(std::string_view(static_cast<const char*>(message.payload), message.len), out)) {
    return false;
  }
  out->instance.reset();
  if (!read_instance) return true;
  // The C API reads the header in place (the C++ one copies it into a new object per call).
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(&message, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
    const void* value = nullptr;
    size_t size = 0;
    if (rd_kafka_header_get_last(headers, kInstanceHeader, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR &&
        value != nullptr) {
      out->instance.emplace(static_cast<const char*>(value), size);
    }
  }
  return true;
}

bool DecodeRecord(RdKafka::Message& message, DecodedRecord* out) {
  RecordView v;
  if (!DecodeRecord(*message.c_ptr(), &v)) return false;
  out->zone = v.zone;
  out->tenant = v.tenant;
  out->stream_hash = v.stream_hash;
  out->total_size = v.total_size;
  out->policy = v.policy;
  if (v.instance) out->instance.emplace(*v.instance);
  else out->instance.reset();
  return true;
}

std::string EncodeRecordValue(const std::string& zone, const std::string& tenant, uint64_t stream_hash,
                              uint64_t total_size, const std::string& policy) {
  proto::StreamMetadataRecord r;
  r.set_zone(zone);
  r.set_tenant(tenant);
  proto::StreamMetadata* m = r.mutable_metadata();
  m->set_streamhash(stream_hash);
  m->set_totalsize(total_size);
  m->set_ingestionpolicy(policy);
  return r.SerializeAsString();
}

}  // namespace limits::kafka
