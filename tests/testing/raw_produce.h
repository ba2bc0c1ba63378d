// RawProduce: writes a hand-built record batch to a broker with one Kafka Produce request, for
// what librdkafka's producer cannot make the mock cluster hold — here, a transaction's
// control record (commit/abort marker), which takes an offset but is never delivered to a
// consumer. Speaks Produce v3 and RecordBatch v2 (magic 2, CRC-32C) over loopback TCP.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace limits::testing {

// Appends one control batch (transactional + control attributes) holding a commit (or abort)
// marker to `topic`/`partition` on the broker at `host_port` (its leader).
Status ProduceControlRecord(const std::string& host_port, const std::string& topic, int32_t partition, bool commit,
                            int64_t timestamp_ms);

}  // namespace limits::testing
