// KafkaOffsetSource: partition offsets and single-record probes from the brokers, correct on
// real Kafka and on librdkafka's mock cluster alike (whose ListOffsets by time answers -1).
//   Bounds, OffsetForTime  ListOffsets for one partition on a shared handle (thread-safe:
//                          each call waits only for its own partition's leader).
//   ProbeAt                reads the first record at or after an offset on a second handle,
//                          librdkafka's simple (legacy) consumer: each probe starts and stops
//                          fetching its own partition, with fetches bounded in bytes (about
//                          one record batch, no prefetch). Probes of different partitions run
//                          concurrently, and librdkafka puts every partition fetched from one
//                          broker into one Fetch request. The simple consumer has no group
//                          state machine: librdkafka 2.0.2's KafkaConsumer::assign() could
//                          wait forever for its group thread's reply, which stalled a look-up.
// Neither handle joins the consumer group. Thread-safe.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>

#include "kafka/kafka_conf.h"
#include "limits/lifecycle/offset_source.h"

namespace limits::kafka {

struct OffsetSourceStats {
  std::atomic<uint64_t> list_offsets{0};  // ListOffsets requests (bounds and time index)
  std::atomic<uint64_t> probes{0};        // single-record reads asked for
  std::atomic<uint64_t> probe_fetches{0};  // messages and events consumed serving them
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
  // Records the probe handle still holds for the partition, fetched beyond a probed one: none
  // once a probe has returned.
  size_t HeldRecords(int32_t partition) const;

 private:
  KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> lists,
                    std::unique_ptr<RdKafka::Consumer> probes, std::unique_ptr<RdKafka::Topic> probe_topic);
  Result<int64_t> ListOffset(int32_t partition, int64_t time, std::chrono::milliseconds timeout);
  // One probe at a time per partition (a partition's fetch can be started only once).
  std::mutex& PartitionLock(int32_t partition);

  const Options options_;
  OffsetSourceStats stats_;
  std::unique_ptr<RdKafka::KafkaConsumer> lists_;  // ListOffsets only
  std::unique_ptr<RdKafka::Consumer> probes_;      // simple consumer: start/consume/stop
  std::unique_ptr<RdKafka::Topic> probe_topic_;

  std::mutex mu_;
  std::map<int32_t, std::unique_ptr<std::mutex>> partition_locks_;  // GUARDED_BY(mu_)
};

}  // namespace limits::kafka
