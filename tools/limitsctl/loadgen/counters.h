// LoadCounters: what the loads count, shared by their threads and read once a second by the
// Reporter. Counters are relaxed atomics; the error table takes a mutex (errors are rare, and
// a broken server fails every call in the same few ways).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>

#include "loadgen/latency_histogram.h"

namespace limits::loadgen {

struct LoadCounters {
  // Produce load.
  std::atomic<uint64_t> records_queued{0};     // handed to librdkafka
  std::atomic<uint64_t> records_delivered{0};  // acknowledged by the broker
  std::atomic<uint64_t> records_failed{0};     // delivery failed, or refused by librdkafka

  // ExceedsLimits load: requests answered OK, the streams they carried, those rejected by
  // reason (index 1 failed, 2 max streams, 3 rate limited — reason 1001 —, 0 any other reason).
  std::atomic<uint64_t> requests{0};
  std::atomic<uint64_t> request_errors{0};
  std::atomic<uint64_t> streams{0};
  std::array<std::atomic<uint64_t>, 4> rejected{};
  LatencyHistogram exceeds_latency;  // of OK requests

  // UpdateRates load.
  std::atomic<uint64_t> updates{0};
  std::atomic<uint64_t> update_errors{0};
  LatencyHistogram update_latency;

  struct ErrorKind {
    uint64_t count = 0;
    std::string first;  // the first message of this kind, for the summary
  };
  // kind: e.g. "ExceedsLimits UNAVAILABLE", "delivery Local: Message timed out".
  void RecordError(const std::string& kind, const std::string& message) {
    std::lock_guard lock(errors_mu);
    ErrorKind& e = errors[kind];
    if (e.count++ == 0) e.first = message;
  }
  std::map<std::string, ErrorKind> Errors() const {
    std::lock_guard lock(errors_mu);
    return errors;
  }

  mutable std::mutex errors_mu;
  std::map<std::string, ErrorKind> errors;  // GUARDED_BY(errors_mu)
};

}  // namespace limits::loadgen
