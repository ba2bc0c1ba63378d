// The records on the metadata topic: StreamMetadataRecord values (Loki's format), the tenant
// as key, and our header naming the producing instance.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace limits::kafka {

// A record's fields as views into the message (or value) it was decoded from.
struct RecordView {
  std::string_view zone;
  std::string_view tenant;
  uint64_t stream_hash = 0;
  uint64_t total_size = 0;
  std::string_view policy;
  std::optional<std::string_view> instance;  // our header; absent on other producers' records
};

// Decodes a StreamMetadataRecord value exactly as protobuf would parse it (unknown fields
// skipped, the last of a repeated scalar wins, repeated metadata merged, strings valid
// UTF-8), without allocating: the consumer decodes every record it replays. False when the
// value does not parse or carries no tenant / metadata. `instance` is left as it was.
bool DecodeRecordValue(std::string_view value, RecordView* out);

// The value and our header of a consumed message; the views live as long as `message`.
// Without `read_instance` the header is not looked at and `instance` is left empty: parsing
// a message's headers allocates their list, and only a ready partition needs it (ShouldApply).
bool DecodeRecord(const rd_kafka_message_t& message, RecordView* out, bool read_instance = true);

// The same, copied out of the message (for tools and tests that keep records).
struct DecodedRecord {
  std::string zone;
  std::string tenant;
  uint64_t stream_hash = 0;
  uint64_t total_size = 0;
  std::string policy;
  std::optional<std::string> instance;
};
bool DecodeRecord(RdKafka::Message& message, DecodedRecord* out);

std::string EncodeRecordValue(const std::string& zone, const std::string& tenant, uint64_t stream_hash,
                              uint64_t total_size, const std::string& policy);

}  // namespace limits::kafka
