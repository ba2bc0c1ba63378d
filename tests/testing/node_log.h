// What a node's JSON log lines say, for tests that run limitsd as a process.
#pragma once

#include <cstddef>
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

// The port a component ("rpc", "http") listens on, from its "listening" line; 0 before it.
inline int ListeningPortFromLog(const std::string& log, const std::string& component) {
  std::smatch m;
  const std::regex re("\"component\":\"" + component + "\",\"msg\":\"listening\".*\"port\":([0-9]+)");
  return std::regex_search(log, m, re) ? std::stoi(m[1]) : 0;
}

// What GET /ready answers once every one of `n` assigned partitions is ready.
inline std::string ReadyWithPartitions(size_t n) { return "ready: " + std::to_string(n) + " partitions"; }

}  // namespace limits::testing
