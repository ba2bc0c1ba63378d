// StreamProducer: writes accepted streams to the metadata topic so other zones (and this
// partition's next owner) learn of them. Never blocks its caller: a full local queue or a
// failed delivery is counted and logged, not retried by the caller.
// Thread-safe; a poll thread serves delivery reports.
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "kafka/kafka_conf.h"
#include "limits/decision/stream_sink.h"

namespace limits::kafka {

struct ProducerStats {
  std::atomic<uint64_t> attempted{0};       // records handed to librdkafka (Loki's "produced")
  std::atomic<uint64_t> produced{0};        // delivered
  std::atomic<uint64_t> failed{0};          // delivery failed, or rejected by a full queue
};

class StreamProducer final : public StreamSink {
 public:
  struct Options {
    std::string brokers, topic, zone, instance_id;
    // Written in the "limitsd-instance" header: this process's run tag (record_filter.h).
    std::string run_tag;
    int32_t num_partitions = 64;
    Properties properties;
  };

  // `registry` gets limitsd_produce_latency_seconds (queueing to delivery report).
  static Result<std::unique_ptr<StreamProducer>> Create(const Options& options, const Clock& clock,
                                                        prometheus::Registry& registry);
  ~StreamProducer();

  // Queues the record: value StreamMetadataRecord{zone, tenant, metadata}, key tenant,
  // partition hash % num_partitions, timestamp now, header "limitsd-instance" = run tag.
  void Produce(const std::string& tenant, uint64_t stream_hash, uint64_t total_size,
               const std::string& policy) override;
  // Waits up to `timeout` for queued records to be delivered (shutdown).
  Status Flush(std::chrono::milliseconds timeout);

  const ProducerStats& stats() const { return stats_; }

 private:
  class DeliveryReports;
  StreamProducer(Options options, const Clock& clock, prometheus::Histogram& latency);

  const Options options_;
  const Clock& clock_;
  ProducerStats stats_;
  std::unique_ptr<DeliveryReports> reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::atomic<bool> stop_{false};
  std::thread poller_;
};

}  // namespace limits::kafka
