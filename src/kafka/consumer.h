// Consumer: the node's one KafkaConsumer in the zone's consumer group, and the thread that
// owns it. It applies consumed records to the usage store (filtered by record_filter.h),
// persists them with their checkpoints at a steady cadence, commits the checkpointed offsets
// to the group (so lag tools work; the local checkpoint stays the truth), and runs the
// partition lifecycle's consumer side:
//   assign  (rebalance callback) pending; assign paused; queue the offset look-ups
//   plan    (from the lifecycler) cancel a scheduled eviction, seek to the resume offset,
//           resume; replaying or ready
//   replay  ready once the consumer's position reaches the end offset seen at assignment
//           (a record, or the partition's end-of-log event: control records and compaction
//           gaps at the end never keep a partition replaying); meanwhile the consumer thread
//           trims glibc's arenas (allocator::TrimArenas), so a cold start's peak RSS stays
//           near what is in use
//   revoke  (rebalance callback) apply and persist what was consumed; persist revoked-at;
//           unassign (no commit when the assignment was lost)
//   store   a failed store makes the consumer leave the group, so other nodes take over
// The rebalance callback does bounded local work only.
#pragma once

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "common/duty_cycle.h"
#include "common/periodic.h"
#include "kafka/fetch_waker.h"
#include "kafka/kafka_conf.h"
#include "kafka/pending_records.h"
#include "limits/partition_lifecycler.h"
#include "limits/partition_manager.h"
#include "limits/usage_store.h"

namespace limits::kafka {

struct ConsumerStats {
  std::atomic<uint64_t> fetched{0};         // records taken in (each offset of a partition once per assignment)
  std::atomic<uint64_t> applied{0};         // applied to the store
  std::atomic<uint64_t> discarded{0};       // this process's own records on a ready partition
  std::atomic<uint64_t> invalid{0};         // undecodable (or rejected by the store as invalid)
  std::atomic<uint64_t> misrouted{0};       // stream hash % partitions is another partition: skipped
  std::atomic<uint64_t> outside_window{0};  // older than the active window
  std::atomic<uint64_t> redelivered{0};     // below the checkpoint: skipped
  std::atomic<uint64_t> flushes{0};
  std::atomic<uint64_t> fetch_wakeups{0};   // FetchWaker's requests to restart librdkafka's fetching
  std::atomic<bool> left_group{false};      // left the group because the store failed
};

class Consumer {
 public:
  struct Options {
    std::string brokers, topic, group, zone, instance_id;
    // This process's tag in produced records (record_filter.h): its own records are skipped.
    std::string run_tag;
    int32_t num_partitions = 64;
    // group.instance.id = instance_id: a restarted pod rejoins within the session timeout
    // and gets its partitions back without a rebalance of the others.
    bool static_membership = true;
    Properties properties;
    // Buffered records are applied to memory at least this often (or per this many records)...
    std::chrono::milliseconds apply_interval{50};
    size_t apply_records = 20'000;
    // ...and persisted with their checkpoints at least this often (or per this many records),
    // by a thread of its own: consuming never waits for RocksDB's write. Larger numbers
    // coalesce more updates per row written during a replay.
    std::chrono::milliseconds flush_interval{1000};
    size_t flush_records = 1'000'000;
    std::chrono::milliseconds progress_interval{5000};  // replay progress log lines
    // While a partition replays, freed memory goes back to the OS this often
    // (allocator::TrimArenas): a cold start's peak stays near what is in use.
    std::chrono::milliseconds trim_interval{200};
    // Stop() waits at most this long for a join in progress to finish (librdkafka 2.0.2
    // aborts when a consumer is closed between JoinGroup and its first SyncGroup).
    std::chrono::milliseconds join_wait{15'000};
  };

  // All references must outlive the consumer. `registry` gets the lag and replay histograms.
  Consumer(Options options, UsageStore& store, PartitionManager& manager, PartitionLifecycler& lifecycler,
           const Clock& clock, prometheus::Registry& registry);
  ~Consumer();

  // Creates the KafkaConsumer, subscribes, and starts the consumer thread.
  Status Start();
  // Graceful: applies and persists what was consumed, leaves the group (the final revoke
  // runs), and joins the thread.
  void Stop();

  // From the lifecycler's thread: the plans for newly assigned partitions.
  void DeliverPlans(std::vector<AssignmentPlan> plans);

  const ConsumerStats& stats() const { return stats_; }

 private:
  class RebalanceHandler;
  // The consumer thread's view of one assigned partition.
  struct Local {
    int64_t generation = 0;
    PartitionState state = PartitionState::kPending;
    int64_t end = -1;       // replaying: ready once position >= end
    int64_t position = -1;  // next offset expected; -1 until the plan arrives
    bool advanced = false;  // position moved since the last apply
    PendingRecords pending;
  };

  void Run();
  void HandleMessage(const rd_kafka_message_t& message);
  void HandleEndOfLog(int32_t partition, int64_t offset);
  void ApplyPlans();
  // Applies buffered records of every partition (or of `only`) to the store's memory.
  void ApplyPending(const std::vector<int32_t>* only = nullptr);
  void FinishReplayIfDone(int32_t partition, Local& l);
  // Tells the group how far the checkpoints are (lag tools; the local checkpoint stays the
  // source of truth).
  void CommitOffsets();
  // The flusher thread's work: persist what was applied (and requests changed).
  void Persist();
  // The store failed (sticky): leave the group once, so the partitions move elsewhere.
  void LeaveOnStoreFailure();
  void LogProgress();
  void TrimWhileReplaying();
  // Logs once each time every assigned partition has become ready.
  void LogReadiness();
  void OnAssign(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions);
  void OnRevoke(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions);

  const Options options_;
  UsageStore& store_;
  PartitionManager& manager_;
  PartitionLifecycler& lifecycler_;
  const Clock& clock_;
  ConsumerStats stats_;
  prometheus::Histogram& lag_;              // loki_ingest_limits_lag_seconds
  prometheus::Histogram& replay_duration_;  // limitsd_replay_duration_seconds

  std::unique_ptr<RebalanceHandler> rebalance_;
  std::unique_ptr<RdKafka::KafkaConsumer> consumer_;
  struct QueueDeleter {
    void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
  };
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue_;  // the consumer's queue, for its length
  std::unique_ptr<FetchWaker> waker_;
  std::thread thread_;
  std::atomic<bool> running_{false};
  Periodic flusher_;
  bool flush_failed_ = false;  // flusher thread only: log a failure once per state change

  std::mutex plans_mu_;
  std::vector<AssignmentPlan> plans_;  // GUARDED_BY(plans_mu_)

  // Consumer thread only.
  std::map<int32_t, Local> assigned_;
  size_t pending_records_ = 0;
  size_t records_since_flush_ = 0;
  std::map<int32_t, int64_t> committed_;
  bool all_ready_logged_ = false;
  bool replayed_since_release_ = false;  // a partition finished replaying since memory was last released
  bool states_changed_ = false;  // a partition was assigned, revoked, or changed state
  bool rebalanced_once_ = false;  // a rebalance callback ran: the group's first join completed
  int64_t replay_started_ms_ = 0;  // first plan of the current not-all-ready stretch
  std::chrono::steady_clock::time_point last_apply_, last_commit_, last_progress_;
  // A trim walks every arena's free memory: it waits 50 times what the last one took when
  // that is longer than trim_interval, keeping trims near 2 % of this thread.
  static constexpr int kTrimCostMultiple = 50;
  DutyCycle trim_{options_.trim_interval, kTrimCostMultiple, std::chrono::steady_clock::now()};
};

}  // namespace limits::kafka
