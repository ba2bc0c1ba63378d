// What a node's JSON log lines say, for tests that run limitsd as a process.
#pragma once

#include <cstdint>
#include <regex>
#include <string>
#include <utility>

namespace limits::testing {

// Partitions planned and records to replay, summed over the lifecycle's one summary line
// ("assignment planned") per rebalance.
inline std::pair<int64_t, int64_t> PlannedFromLog(const std::string& log) {
  int64_t partitions = 0, records = 0;
  static const std::regex re("\"msg\":\"assignment planned\",\"partitions\":([0-9]+),.*?\"records_to_replay\":([0-9]+)");
  for (auto it = std::sregex_iterator(log.begin(), log.end(), re); it != std::sregex_iterator(); ++it) {
    partitions += std::stoll((*it)[1]);
    records += std::stoll((*it)[2]);
  }
  return {partitions, records};
}

}  // namespace limits::testing
