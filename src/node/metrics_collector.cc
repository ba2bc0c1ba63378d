#include "node/metrics_collector.h"

#include <prometheus/text_serializer.h>

#include <map>

namespace limits {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

MetricFamily Family(const std::string& name, const std::string& help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void AddGauge(MetricFamily& f, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

void AddCounter(MetricFamily& f, double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  f.metric.push_back(std::move(m));
}

// A family of one unlabelled series.
MetricFamily Single(const std::string& name, const std::string& help, MetricType type, double value) {
  MetricFamily f = Family(name, help, type);
  if (type == MetricType::Counter)
    AddCounter(f, value);
  else
    AddGauge(f, value);
  return f;
}

double Load(const std::atomic<uint64_t>& v) { return static_cast<double>(v.load(std::memory_order_relaxed)); }

// Loki's loki_ingest_limits_partitions values: 0 unknown, 1 pending, 2 replaying, 3 ready.
double LokiStateValue(PartitionState s) {
  switch (s) {
    case PartitionState::kPending: return 1;
    case PartitionState::kReplaying: return 2;
    case PartitionState::kReady: return 3;
  }
  return 0;
}

}  // namespace

NodeCollector::NodeCollector(UsageStore& store, PartitionManager& partitions, storage::Db& db,
                             const kafka::ConsumerStats& consumer, const kafka::ProducerStats& producer,
                             const LifecycleStats& lifecycle, const Clock& clock)
    : store_(store),
      partitions_(partitions),
      db_(db),
      consumer_(consumer),
      producer_(producer),
      lifecycle_(lifecycle),
      clock_(clock) {}

std::vector<MetricFamily> NodeCollector::Collect() const {
  std::vector<MetricFamily> out;

  const int64_t now_ms = clock_.NowMillis();
  MetricFamily states = Family("loki_ingest_limits_partitions",
                               "The state of each assigned partition: 1 pending, 2 replaying, 3 ready.", MetricType::Gauge);
  MetricFamily not_ready = Family("limitsd_partitions_not_ready",
                                  "Assigned partitions not ready (pending or replaying), whatever /ready latched.",
                                  MetricType::Gauge);
  size_t not_ready_n = 0;
  MetricFamily target = Family("limitsd_replay_target_offset", "Offset a replaying partition is ready at.", MetricType::Gauge);
  MetricFamily current = Family("limitsd_replay_current_offset", "Next offset a replaying partition processes.",
                                MetricType::Gauge);
  MetricFamily remaining = Family("limitsd_replay_remaining_records", "Records a replaying partition has left.",
                                  MetricType::Gauge);
  MetricFamily speed = Family("limitsd_replay_records_per_second", "Replay speed of a replaying partition.",
                              MetricType::Gauge);
  MetricFamily eta = Family("limitsd_replay_eta_seconds", "Estimated seconds until a replaying partition is ready.",
                            MetricType::Gauge);
  MetricFamily age = Family("limitsd_checkpoint_age_seconds",
                            "Age of the newest record an assigned partition's checkpoint covers.", MetricType::Gauge);
  for (const PartitionInfo& info : partitions_.Snapshot()) {
    const ClientMetric::Label label{"partition", std::to_string(info.partition)};
    AddGauge(states, LokiStateValue(info.state), {label});
    if (info.state != PartitionState::kReady) ++not_ready_n;
    if (info.state == PartitionState::kReplaying) {
      AddGauge(target, static_cast<double>(info.replay.target_offset), {label});
      AddGauge(current, static_cast<double>(info.replay.current_offset), {label});
      AddGauge(remaining, static_cast<double>(info.replay.remaining()), {label});
      AddGauge(speed, info.replay.records_per_s, {label});
      if (info.replay.eta_s >= 0) AddGauge(eta, info.replay.eta_s, {label});
    }
    if (std::optional<storage::Checkpoint> cp = store_.CheckpointOf(info.partition); cp && cp->newest_record_ms > 0) {
      AddGauge(age, static_cast<double>(now_ms - cp->newest_record_ms) / 1000.0, {label});
    }
  }
  AddGauge(not_ready, static_cast<double>(not_ready_n));
  for (MetricFamily* f : {&states, &not_ready, &target, &current, &remaining, &speed, &eta, &age}) {
    out.push_back(std::move(*f));
  }

  MetricFamily scheduled = Family("limitsd_scheduled_evictions",
                                  "Revoked partitions whose data is dropped unless they are assigned again.",
                                  MetricType::Gauge);
  MetricFamily evict_in = Family("limitsd_scheduled_eviction_seconds",
                                 "Seconds until a revoked partition's data is dropped.", MetricType::Gauge);
  if (auto revoked = store_.Revoked(); revoked.ok()) {
    AddGauge(scheduled, static_cast<double>(revoked->size()));
    for (const auto& [p, meta] : *revoked) {
      AddGauge(evict_in, static_cast<double>(meta.evict_after_ms - now_ms) / 1000.0, {{"partition", std::to_string(p)}});
    }
  }
  out.push_back(std::move(scheduled));
  out.push_back(std::move(evict_in));

  const std::pair<const char*, double> counters[] = {
      {"loki_ingest_limits_records_fetched_total", Load(consumer_.fetched)},
      {"loki_ingest_limits_records_discarded_total", Load(consumer_.discarded)},
      {"loki_ingest_limits_records_invalid_total", Load(consumer_.invalid)},
      {"loki_ingest_limits_records_produced_total", Load(producer_.attempted)},
      {"limitsd_records_delivered_total", Load(producer_.produced)},
      {"loki_ingest_limits_records_produced_failed_total", Load(producer_.failed)},
      {"limitsd_records_applied_total", Load(consumer_.applied)},
      {"limitsd_records_outside_window_total", Load(consumer_.outside_window)},
      {"limitsd_records_redelivered_total", Load(consumer_.redelivered)},
      {"limitsd_store_flushes_total", Load(consumer_.flushes)},
      {"limitsd_fetch_wakeups_total", Load(consumer_.fetch_wakeups)},
      {"limitsd_records_misrouted_total", Load(consumer_.misrouted)},
      {"limitsd_records_foreign_total", Load(consumer_.foreign_records)},
      {"limitsd_foreign_partitions_total", Load(consumer_.foreign_partitions)},
      {"limitsd_stall_lookup_failures_total", Load(consumer_.stall_lookup_failures)},
      {"limitsd_lookups_total", Load(lifecycle_.lookups)},
      {"limitsd_lookup_give_ups_total", Load(lifecycle_.give_ups)},
      {"limitsd_lookup_fallbacks_total", Load(lifecycle_.fallbacks)},
      {"limitsd_lookup_retries_total", Load(lifecycle_.retries)},
      {"limitsd_lookup_time_index_total", Load(lifecycle_.time_index)},
      {"limitsd_lookup_edge_probes_total", Load(lifecycle_.edge_probes)},
      {"limitsd_lookup_search_probes_total", Load(lifecycle_.search_probes)},
      {"limitsd_partitions_dropped_before_replay_total", Load(lifecycle_.dropped)},
  };
  const std::map<std::string, std::string> help = {
      {"loki_ingest_limits_records_fetched_total", "The total number of records fetched."},
      {"loki_ingest_limits_records_discarded_total",
       "The total number of records discarded: this instance's own records on a ready partition."},
      {"loki_ingest_limits_records_invalid_total", "The total number of records that could not be decoded."},
      {"loki_ingest_limits_records_produced_total",
       "The total number of records produced (attempts, failures included, as Loki counts them)."},
      {"limitsd_records_delivered_total", "Records produced and acknowledged by the brokers."},
      {"loki_ingest_limits_records_produced_failed_total", "The total number of records that could not be produced."},
      {"limitsd_records_applied_total", "Records applied to the usage store."},
      {"limitsd_records_outside_window_total", "Records older than the active window: nothing kept."},
      {"limitsd_records_redelivered_total", "Records below a partition's checkpoint: skipped."},
      {"limitsd_store_flushes_total", "Flushes of consumed records and their checkpoints by the consumer."},
      {"limitsd_fetch_wakeups_total",
       "ListOffsets rounds sent to restart librdkafka's fetching once the consumer drained a full queue."},
      {"limitsd_records_misrouted_total",
       "Records on a partition other than their stream hash's (hash % partitions): skipped, not counted."},
      {"limitsd_records_foreign_total",
       "Records (or end-of-log events) of a topic other than kafka.topic: skipped, never applied."},
      {"limitsd_foreign_partitions_total",
       "Partitions of a topic other than kafka.topic handed to this consumer: never taken; the consumer re-subscribes."},
      {"limitsd_stall_lookup_failures_total",
       "Stall checks whose end-offset look-up failed: the brokers did not answer (an outage, not a stall)."},
      {"limitsd_lookups_total", "Offset look-ups of newly assigned partitions finished."},
      {"limitsd_lookup_give_ups_total",
       "Partitions served without known offsets after windows.lookup_give_up (limits checked against "
       "incomplete data until their replay catches up)."},
      {"limitsd_lookup_fallbacks_total",
       "Look-ups whose window start could not be found: replayed from the checkpoint or log start."},
      {"limitsd_lookup_retries_total", "Failed offset look-up calls retried."},
      {"limitsd_lookup_time_index_total", "Window starts answered by the broker's time index."},
      {"limitsd_lookup_edge_probes_total", "Single-record reads at a partition's log edges during look-ups."},
      {"limitsd_lookup_search_probes_total", "Single-record reads of binary searches for the window start."},
      {"limitsd_partitions_dropped_before_replay_total",
       "Partitions whose data was dropped on assignment (no checkpoint, or one beyond the log end)."},
  };
  for (const auto& [name, value] : counters) {
    MetricFamily f = Family(name, help.at(name), MetricType::Counter);
    AddCounter(f, value);
    out.push_back(std::move(f));
  }

  const std::vector<storage::CfStats> cf_stats = db_.Stats();
  MetricFamily keys = Family("limitsd_rocksdb_estimated_keys", "RocksDB's estimate of keys per column family.",
                             MetricType::Gauge);
  MetricFamily sst = Family("limitsd_rocksdb_sst_bytes", "Bytes of SST files per column family.", MetricType::Gauge);
  MetricFamily files = Family("limitsd_rocksdb_sst_files", "SST files per column family.", MetricType::Gauge);
  MetricFamily mem = Family("limitsd_rocksdb_memtable_bytes", "Bytes in memtables per column family.", MetricType::Gauge);
  MetricFamily pending = Family("limitsd_rocksdb_pending_compaction_bytes",
                                "Estimated bytes compaction has to rewrite per column family.", MetricType::Gauge);
  for (const storage::CfStats& s : cf_stats) {
    const ClientMetric::Label label{"cf", s.name};
    AddGauge(keys, static_cast<double>(s.estimated_keys), {label});
    AddGauge(sst, static_cast<double>(s.sst_bytes), {label});
    AddGauge(files, static_cast<double>(s.sst_files), {label});
    AddGauge(mem, static_cast<double>(s.memtable_bytes), {label});
    AddGauge(pending, static_cast<double>(s.pending_compaction_bytes), {label});
  }
  for (MetricFamily* f : {&keys, &sst, &files, &mem, &pending}) out.push_back(std::move(*f));
  out.push_back(Single("limitsd_rocksdb_block_cache_usage_bytes",
                       "Bytes held by the block cache shared by every column family.", MetricType::Gauge,
                       static_cast<double>(db_.BlockCacheUsage())));
  out.push_back(Single("limitsd_rocksdb_ttl_dropped_total",
                       "Rows the TTL compaction filter dropped (outside the active window).", MetricType::Counter,
                       static_cast<double>(db_.TtlDropped())));
  out.push_back(Single("limitsd_store_streams", "Streams held in memory (all tenants and partitions).",
                       MetricType::Gauge, static_cast<double>(store_.TotalStreams())));
  out.push_back(Single("limitsd_store_write_failed",
                       "1 once a store write failed: updates are refused until a restart reloads.", MetricType::Gauge,
                       store_.health().ok() ? 0.0 : 1.0));

  // What clients can make the node hold, and what they could not (tenant_directory.h).
  const TenantDirectory& dir = store_.directory();
  out.push_back(Single("limitsd_rate_keys", "UpdateRates keys that are not streams, whose rates the node keeps.",
                       MetricType::Gauge, static_cast<double>(dir.rate_keys().held())));
  MetricFamily refusals = Family("limitsd_bound_refusals_total",
                                 "Things a client sent that a bound kept the node from storing (answered, not stored), by "
                                 "bound: max_tenants, max_rate_keys_per_tenant, max_rate_keys.",
                                 MetricType::Counter);
  AddCounter(refusals, static_cast<double>(dir.refused_tenants()), {{"bound", "max_tenants"}});
  AddCounter(refusals, static_cast<double>(dir.rate_keys().refused_tenant()), {{"bound", "max_rate_keys_per_tenant"}});
  AddCounter(refusals, static_cast<double>(dir.rate_keys().refused_node()), {{"bound", "max_rate_keys"}});
  out.push_back(std::move(refusals));
  MetricFamily ignored = Family("limitsd_policies_ignored_total",
                                "Streams counted under no policy (the default bucket) because their policy's name was "
                                "not kept, by reason: too_long, not_utf8, beyond_cap (max_policies_per_tenant).",
                                MetricType::Counter);
  for (PolicyNameCheck why : {PolicyNameCheck::kTooLong, PolicyNameCheck::kNotUtf8, PolicyNameCheck::kBeyondCap}) {
    AddCounter(ignored, static_cast<double>(store_.ignored_policies().Of(why)), {{"reason", PolicyNameCheckLabel(why)}});
  }
  out.push_back(std::move(ignored));
  out.push_back(Single("limitsd_admission_log_records_total",
                       "Requests whose admissions were written to the admission log before their answer.",
                       MetricType::Counter, static_cast<double>(store_.admissions_logged())));
  out.push_back(Single("limitsd_admission_log_failures_total",
                       "Admission-log appends that failed (their rows were flushed before the answer) "
                       "and next files that could not be opened (appends went on to the current one).",
                       MetricType::Counter, static_cast<double>(store_.admission_log_failures())));
  MetricFamily restarts = Family("limitsd_consumer_restarts_total",
                                 "Consumer recoveries: the client re-created after a fatal librdkafka error (fatal) or "
                                 "a stall (stalled), re-subscribed after partitions of another topic (foreign_topic).",
                                 MetricType::Counter);
  AddCounter(restarts, Load(consumer_.restarts_fatal), {{"reason", "fatal"}});
  AddCounter(restarts, Load(consumer_.restarts_stalled), {{"reason", "stalled"}});
  AddCounter(restarts, Load(consumer_.restarts_foreign_topic), {{"reason", "foreign_topic"}});
  out.push_back(std::move(restarts));
  out.push_back(Single("limitsd_consumer_failed",
                       "1 once the consumer gave up recovering (kafka.max_consumer_restarts within "
                       "kafka.consumer_restart_window, or a client that cannot be created): /live fails.",
                       MetricType::Gauge, consumer_.failed.load(std::memory_order_relaxed) ? 1.0 : 0.0));
  return out;
}

std::string RenderMetrics(const prometheus::Registry& registry,
                          const std::vector<const prometheus::Collectable*>& collectables) {
  std::vector<MetricFamily> families = registry.Collect();
  for (const prometheus::Collectable* c : collectables) {
    std::vector<MetricFamily> more = c->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  }
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace limits
