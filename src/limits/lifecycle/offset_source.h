// OffsetSource: the Kafka facts a newly assigned partition's lifecycle depends on, one
// partition at a time, behind an interface so limits/ sees no Kafka type (the implementation
// is kafka/kafka_offset_source.h). Every call honours its timeout and is safe to make from
// several threads at once: a slow partition never holds another's look-up back.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>

#include "common/result.h"

namespace limits {

struct LogBounds {
  int64_t start = -1;  // log start offset (retention has deleted everything below)
  int64_t end = -1;    // next offset to be produced ("last produced" + 1)
};

// What reading "the first record at or after offset X" found.
struct Probe {
  enum class Kind : uint8_t {
    kRecord,   // a record: its offset (>= X; compaction and control records leave gaps) and time
    kNothing,  // no record at or after X before the log end (only control records, or X >= end)
  };
  Kind kind = Kind::kNothing;
  int64_t offset = -1;
  int64_t timestamp_ms = -1;
};

class OffsetSource {
 public:
  virtual ~OffsetSource() = default;

  // Log start and end offsets of one partition.
  virtual Result<LogBounds> Bounds(int32_t partition, std::chrono::milliseconds timeout) = 0;

  // The broker's time index (ListOffsets by time): the first offset whose record time is at
  // or after `time_ms`; nullopt when the broker answers "none" — which real Kafka means as
  // "every record is older" and librdkafka's mock answers always, so callers verify it.
  virtual Result<std::optional<int64_t>> OffsetForTime(int32_t partition, int64_t time_ms,
                                                       std::chrono::milliseconds timeout) = 0;

  // Reads the first record at or after `offset` (a fetch bounded in bytes; concurrent callers
  // are served by one batched fetch). kUnavailable on timeout.
  virtual Result<Probe> ProbeAt(int32_t partition, int64_t offset, std::chrono::milliseconds timeout) = 0;
};

}  // namespace limits
