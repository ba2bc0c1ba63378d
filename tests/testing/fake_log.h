// FakeLog: an OffsetSource over partition logs described by their records' timestamps, with
// fault injection — for the look-up state machine and the lifecycler without a broker.
// Thread-safe (the lifecycler calls it from its pool).
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <vector>

#include "limits/lifecycle/offset_source.h"

namespace limits::testing {

struct FakePartitionLog {
  int64_t start = 0;
  // ts[i]: the time of the record at offset start + i; -1 for an offset without a record
  // (a control record, or compacted away).
  std::vector<int64_t> ts;
  int64_t end() const { return start + static_cast<int64_t>(ts.size()); }
};

class FakeLog final : public OffsetSource {
 public:
  // Answer ListOffsets by time as real Kafka does (false: -1 always, as the mock).
  bool time_index = false;
  std::map<int32_t, FakePartitionLog> logs;
  // Calls of each kind to fail before answering (per partition); -1: fail forever.
  std::map<int32_t, int> fail_bounds, fail_probes;
  // Partitions whose Bounds() waits until Release() (a slow leader).
  std::map<int32_t, bool> hold_bounds;

  void Release(int32_t partition) {
    {
      std::lock_guard lock(mu_);
      hold_bounds[partition] = false;
    }
    cv_.notify_all();
  }

  Result<LogBounds> Bounds(int32_t partition, std::chrono::milliseconds) override {
    std::unique_lock lock(mu_);
    ++bounds_calls[partition];
    cv_.wait(lock, [&] { return !hold_bounds[partition]; });
    if (Failing(fail_bounds, partition)) return Status::Unavailable("injected ListOffsets failure");
    auto it = logs.find(partition);
    if (it == logs.end()) return LogBounds{0, 0};
    return LogBounds{it->second.start, it->second.end()};
  }

  Result<std::optional<int64_t>> OffsetForTime(int32_t partition, int64_t time_ms,
                                               std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    ++time_calls[partition];
    if (!time_index) return std::optional<int64_t>();
    const FakePartitionLog& log = logs[partition];
    for (size_t i = 0; i < log.ts.size(); ++i) {
      if (log.ts[i] >= time_ms) return std::optional<int64_t>(log.start + static_cast<int64_t>(i));
    }
    return std::optional<int64_t>();
  }

  Result<Probe> ProbeAt(int32_t partition, int64_t offset, std::chrono::milliseconds) override {
    std::lock_guard lock(mu_);
    ++probes[partition];
    if (Failing(fail_probes, partition)) return Status::Unavailable("injected probe timeout");
    const FakePartitionLog& log = logs[partition];
    for (int64_t o = std::max(offset, log.start); o < log.end(); ++o) {
      const int64_t t = log.ts[static_cast<size_t>(o - log.start)];
      if (t >= 0) return Probe{.kind = Probe::Kind::kRecord, .offset = o, .timestamp_ms = t};
    }
    return Probe{.kind = Probe::Kind::kNothing, .offset = log.end(), .timestamp_ms = -1};
  }

  int Calls(int32_t partition) {
    std::lock_guard lock(mu_);
    return bounds_calls[partition] + time_calls[partition] + probes[partition];
  }

  std::map<int32_t, int> bounds_calls, time_calls, probes;  // GUARDED_BY(mu_) once threads run

 private:
  bool Failing(std::map<int32_t, int>& failures, int32_t partition) {
    auto it = failures.find(partition);
    if (it == failures.end() || it->second == 0) return false;
    if (it->second > 0) --it->second;
    return true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
};

// n records `step_ms` apart from `first_ms`, starting at offset `start`.
inline FakePartitionLog EvenLog(int64_t start, int64_t n, int64_t first_ms, int64_t step_ms) {
  FakePartitionLog log{.start = start, .ts = {}};
  for (int64_t i = 0; i < n; ++i) log.ts.push_back(first_ms + i * step_ms);
  return log;
}

}  // namespace limits::testing
