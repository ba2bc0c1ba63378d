// Reporter: one line per interval (normally a second) of what the loads did — records
// produced and delivered, ExceedsLimits requests, streams accepted and rejected by reason,
// latency p50/p99 — as an aligned text table or one JSON object per line (--json), and the
// summary of the whole run at the end. Only the main thread calls it.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

#include "loadgen/counters.h"
#include "loadgen/latency_histogram.h"

namespace limits::loadgen {

class Reporter {
 public:
  using Clock = std::chrono::steady_clock;
  struct Shown {
    bool produce = false, exceeds = false, updates = false;
  };

  Reporter(LoadCounters& counters, Shown shown, bool json, FILE* out, Clock::time_point start);

  // The text table's header (nothing in JSON mode).
  void Header();
  // The interval since the previous line, ending at `now`.
  void Line(Clock::time_point now);
  // Whether anything was counted since the previous line.
  bool Pending() const;
  // The whole run until `now` (when the loads stopped: rates leave the final flush out).
  // `undelivered`: records librdkafka still held when the run gave up waiting;
  // `ended_by`: "duration", "records", "signal".
  void Summary(Clock::time_point now, uint64_t undelivered, std::string_view ended_by);

 private:
  struct Totals {
    uint64_t queued = 0, delivered = 0, failed = 0;
    uint64_t requests = 0, request_errors = 0, streams = 0, rejected[4] = {0, 0, 0, 0};
    uint64_t updates = 0, update_errors = 0;
    friend bool operator==(const Totals&, const Totals&) = default;
  };
  Totals Read() const;

  LoadCounters& counters_;
  const Shown shown_;
  const bool json_;
  FILE* const out_;
  const Clock::time_point start_;
  Clock::time_point last_;
  Totals previous_;
  LatencyHistogram exceeds_interval_, exceeds_total_, update_interval_, update_total_;
};

}  // namespace limits::loadgen
