// RawConsume: a bare librdkafka consumer reading a whole topic from the beginning (no group,
// no decode, no store): the rate a replay is compared with, on the same broker in the same run.
#pragma once

#include <cstdint>
#include <string>

#include "common/result.h"

namespace limits::bench {

struct RawConsumeResult {
  int64_t records = 0;
  double seconds = 0;          // first record -> end of every partition
  double connect_seconds = 0;  // assign -> first record
  double records_per_s() const { return seconds > 0 ? static_cast<double>(records) / seconds : 0; }
};

Result<RawConsumeResult> RawConsume(const std::string& bootstrap, const std::string& topic, int partitions);

}  // namespace limits::bench
