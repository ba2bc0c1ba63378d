// NodeCollector: the metrics derived from state, computed at scrape time (Loki's names where
// Loki has them, limitsd_* otherwise): tenant stream counts, partition states, replay
// progress, checkpoint age, scheduled evictions, consumer/producer record counters and
// RocksDB figures per column family. Never a label per stream.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/registry.h>

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "kafka/consumer.h"
#include "kafka/producer.h"
#include "limits/lifecycle/partition_lifecycler.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/usage_store.h"
#include "storage/db.h"

namespace limits {

class NodeCollector final : public prometheus::Collectable {
 public:
  // All references must outlive the collector.
  NodeCollector(UsageStore& store, PartitionManager& partitions, storage::Db& db, const kafka::ConsumerStats& consumer,
                const kafka::ProducerStats& producer, const LifecycleStats& lifecycle, const Clock& clock);
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  UsageStore& store_;
  PartitionManager& partitions_;
  storage::Db& db_;
  const kafka::ConsumerStats& consumer_;
  const kafka::ProducerStats& producer_;
  const LifecycleStats& lifecycle_;
  const Clock& clock_;
};

// The Prometheus text exposition of the registry's families and the collectables'.
std::string RenderMetrics(const prometheus::Registry& registry,
                          const std::vector<const prometheus::Collectable*>& collectables);

}  // namespace limits
