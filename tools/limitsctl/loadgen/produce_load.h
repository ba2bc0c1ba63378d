// ProduceLoad: writes the load's records to the metadata topic at a target rate, as Loki's
// ingest-limits (and limitsd) produce them: value StreamMetadataRecord{zone, tenant,
// {hash, bytes, policy}}, key the tenant, partition hash % partitions, the record timestamp
// now or spread over the past (SpreadTimestampMs) — batched as batch.size / linger.ms allow,
// lz4 by default, so Loki-sized 1 MB batches are possible. Create() checks the topic first: it
// must exist, and its partition count is the modulus (no auto-creation with a wrong count).
// Run() on one thread, which also serves librdkafka's delivery reports; then Flush().
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "common/result.h"
#include "loadgen/counters.h"
#include "loadgen/options.h"
#include "loadgen/pacer.h"
#include "loadgen/universe.h"

namespace limits::loadgen {

class ProduceLoad {
 public:
  static Result<std::unique_ptr<ProduceLoad>> Create(const ProduceOptions& options, const Universe& universe,
                                                     LoadCounters& counters);
  ~ProduceLoad();

  int32_t partitions() const { return partitions_; }
  // One line for the start banner: topic, partitions, rate, batching.
  std::string Describe() const;

  // Produces until `stop`, --records, or `duration` after `start` (the duration also paces
  // the timestamp spread when --records is not given).
  void Run(const std::atomic<bool>& stop, Pacer::Clock::time_point start,
           std::optional<std::chrono::milliseconds> duration);
  // True once --records records have been produced.
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // Waits up to `timeout` for outstanding deliveries; returns how many records are still not
  // delivered (0 when everything was acknowledged or failed).
  uint64_t Flush(std::chrono::milliseconds timeout);

 private:
  class DeliveryReports;
  ProduceLoad(const ProduceOptions& options, const Universe& universe, LoadCounters& counters);
  // False when librdkafka's queue is full (retry after a poll); counts any other refusal.
  bool ProduceOne(uint64_t n, int64_t timestamp_ms);

  const ProduceOptions options_;
  const Universe& universe_;
  LoadCounters& counters_;
  int32_t partitions_ = 0;
  std::string batching_;  // for Describe()
  std::unique_ptr<DeliveryReports> reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::atomic<bool> finished_{false};
};

}  // namespace limits::loadgen
