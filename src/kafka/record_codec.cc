#include "kafka/record_codec.h"

#include "limits/record_filter.h"
#include "proto/limits.pb.h"

namespace limits::kafka {

bool DecodeRecord(RdKafka::Message& message, proto::StreamMetadataRecord& scratch, DecodedRecord* out) {
  if (message.payload() == nullptr) return false;
  if (!scratch.ParseFromArray(message.payload(), static_cast<int>(message.len()))) return false;
  if (scratch.tenant().empty() || !scratch.has_metadata()) return false;
  out->zone = scratch.zone();
  out->tenant = scratch.tenant();
  out->stream_hash = scratch.metadata().streamhash();
  out->total_size = scratch.metadata().totalsize();
  out->policy = scratch.metadata().ingestionpolicy();
  out->instance.reset();
  if (RdKafka::Headers* headers = message.headers()) {
    const RdKafka::Headers::Header h = headers->get_last(kInstanceHeader);
    if (h.err() == RdKafka::ERR_NO_ERROR && h.value() != nullptr) {
      out->instance.emplace(static_cast<const char*>(h.value()), h.value_size());
    }
  }
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
