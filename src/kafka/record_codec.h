// The records on the metadata topic: StreamMetadataRecord values (Loki's format), the tenant
// as key, and our header naming the producing instance.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <optional>
#include <string>

namespace proto {
class StreamMetadataRecord;
}

namespace limits::kafka {

struct DecodedRecord {
  std::string zone;
  std::string tenant;
  uint64_t stream_hash = 0;
  uint64_t total_size = 0;
  std::string policy;
  std::optional<std::string> instance;  // our header; absent on other producers' records
};

// False when the value is not a StreamMetadataRecord (or carries no tenant / metadata).
// `scratch` is reused across calls to avoid an allocation per record.
bool DecodeRecord(RdKafka::Message& message, proto::StreamMetadataRecord& scratch, DecodedRecord* out);

std::string EncodeRecordValue(const std::string& zone, const std::string& tenant, uint64_t stream_hash,
                              uint64_t total_size, const std::string& policy);

}  // namespace limits::kafka
