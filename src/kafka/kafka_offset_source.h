// KafkaOffsetSource: partition offsets from the brokers, correct on real Kafka and on
// librdkafka's mock cluster alike.
//   start, end     ListOffsets for the logical times "beginning" (-2) and "end" (-1).
//   window start   ListOffsets for the time first. A broker answers -1 when no record is at or
//                  after the time — and the mock answers -1 always (MOCK-KAFKA.md) — so -1 is
//                  never trusted: the record at end-1 is read; if it is inside the window, a
//                  binary search over single records' timestamps finds the first that is.
//                  All partitions searched in one batch per step (one round trip per step).
// Uses its own consumer handle (never joins the group); every call honours its timeout.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

#include "kafka/kafka_conf.h"
#include "limits/offset_source.h"

namespace limits::kafka {

class KafkaOffsetSource final : public OffsetSource {
 public:
  struct Options {
    std::string brokers;
    std::string topic;
    std::string client_id;
    Properties properties;  // [kafka.properties], for security settings and the like
    std::chrono::milliseconds timeout{10'000};  // per broker request
    std::chrono::milliseconds read_timeout{5'000};  // per binary-search step
  };

  static Result<std::unique_ptr<KafkaOffsetSource>> Create(const Options& options);
  ~KafkaOffsetSource() override;

  std::vector<PartitionOffsets> Lookup(std::span<const int32_t> partitions, int64_t window_start_ms) override;

  // Single records read to find window starts (end - 1 checks and binary-search steps), one
  // per partition per round; 0 while the broker's time index answers. Any thread.
  uint64_t probes() const { return probes_.load(std::memory_order_relaxed); }

 private:
  explicit KafkaOffsetSource(Options options, std::unique_ptr<RdKafka::KafkaConsumer> consumer);
  // offsetsForTimes for each partition at `time`; errors recorded per partition.
  void ListOffsets(std::vector<PartitionOffsets>& out, int64_t time, int64_t PartitionOffsets::*field);
  // Timestamps of the records at the given offsets of the given partitions (one fetch round).
  std::map<int32_t, int64_t> ReadTimestamps(const std::map<int32_t, int64_t>& offsets);
  void FindWindowStart(std::vector<PartitionOffsets>& out, int64_t window_start_ms);

  const Options options_;
  std::mutex mu_;  // one look-up at a time on the handle
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  std::atomic<uint64_t> probes_{0};
};

}  // namespace limits::kafka
