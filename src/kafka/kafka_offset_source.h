// KafkaOffsetSource: partition offsets and single-record probes from the brokers, correct on
// real Kafka and on librdkafka's mock cluster alike (whose ListOffsets by time answers -1).
//   Bounds, OffsetForTime  ListOffsets for one partition on a shared handle (thread-safe:
//                          each call waits only for its own partition's leader).
//   ProbeAt                reads the first record at or after an offset on a second handle
//                          whose fetches are bounded in bytes (one record batch per
//                          partition, no prefetch): concurrent probes of different partitions
//                          share one assign-and-fetch round.
// Neither handle joins the consumer group. Thread-safe.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kafka/kafka_conf.h"
#include "limits/offset_source.h"

namespace limits::kafka {

struct OffsetSourceStats {
  std::atomic<uint64_t> list_offsets{0};  // ListOffsets requests (bounds and time index)
  std::atomic<uint64_t> probes{0};        // single-record reads asked for
  std::atomic<uint64_t> probe_rounds{0};  // assign-and-fetch rounds serving them
};

class KafkaOffsetSource final : public OffsetSource {
 public:
  struct Options {
    std::string brokers;
    std::string topic;
    std::string client_id;
    Properties properties;  // [kafka.properties], for security settings and the like
  };

  static Result<std::unique_ptr<KafkaOffsetSource>> Create(const Options& options);
  ~KafkaOffsetSource() override;

  Result<LogBounds> Bounds(int32_t partition, std::chrono::milliseconds timeout) override;
  Result<std::optional<int64_t>> OffsetForTime(int32_t partition, int64_t time_ms,
                                               std::chrono::milliseconds timeout) override;
  Result<Probe> ProbeAt(int32_t partition, int64_t offset, std::chrono::milliseconds timeout) override;

  const OffsetSourceStats& stats() const { return stats_; }

 private:
  struct ProbeRequest {
    int32_t partition;
    int64_t offset;
    std::chrono::steady_clock::time_point deadline;
    bool done = false;
    Result<Probe> result = Status::Unavailable("probe not run");
  };

  KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> lists,
                    std::unique_ptr<RdKafka::KafkaConsumer> probes);
  Result<int64_t> ListOffset(int32_t partition, int64_t time, std::chrono::milliseconds timeout);
  // Serves every queued request of a distinct partition in one assign-and-fetch round.
  // REQUIRES: round leadership (round_running_ set by this thread), mu_ not held.
  void RunRound(std::vector<ProbeRequest*> round);

  const Options options_;
  OffsetSourceStats stats_;
  std::unique_ptr<RdKafka::KafkaConsumer> lists_;   // ListOffsets only
  std::unique_ptr<RdKafka::KafkaConsumer> probes_;  // assign/consume: one round at a time

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<ProbeRequest*> queued_;  // GUARDED_BY(mu_)
  bool round_running_ = false;         // GUARDED_BY(mu_)
};

}  // namespace limits::kafka
