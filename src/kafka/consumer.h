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
//   topic   only partitions (and records) of options.topic are ever taken: a partition of
//           another topic in an assignment (a static member's cached assignment after
//           kafka.topic changed) is never assigned, logged and counted, and the consumer
//           re-subscribes (unsubscribe + subscribe: the coordinator then rebalances with our
//           subscription; a new client would get the cached assignment again)
//   recover a fatal librdkafka error (e.g. a static member fenced) or a stall (stall_detector.h:
//           a partition not progressing while the broker has records beyond it) re-creates
//           the client: every assigned partition is treated as lost (no commit), the failed
//           client is destroyed without closing, a new one subscribes. More than max_restarts
//           within restart_window (re-subscriptions included), or a client that cannot be
//           created, and the consumer gives up: Failure() says why (the node's /live fails)
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
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "common/duty_cycle.h"
#include "common/periodic.h"
#include "common/restart_budget.h"
#include "kafka/fetch_waker.h"
#include "kafka/kafka_conf.h"
#include "kafka/pending_records.h"
#include "limits/lifecycle/partition_lifecycler.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/lifecycle/stall_detector.h"
#include "limits/usage/usage_store.h"

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
  // Recovery: restarts by reason, and whether the consumer gave up.
  std::atomic<uint64_t> restarts_fatal{0};          // client re-created after a fatal librdkafka error
  std::atomic<uint64_t> restarts_stalled{0};        // client re-created after a stall
  std::atomic<uint64_t> restarts_foreign_topic{0};  // re-subscribed after partitions of another topic
  std::atomic<uint64_t> foreign_partitions{0};      // partitions of another topic handed to us: not taken
  std::atomic<uint64_t> foreign_records{0};         // records (or events) of another topic: skipped
  std::atomic<uint64_t> stall_lookup_failures{0};   // stall look-ups the broker did not answer (an outage)
  std::atomic<bool> failed{false};                  // gave up recovering: the node is dead
};

// Why the consumer is dead.
struct ConsumerFailure {
  int64_t since_ms = 0;  // Clock time
  std::string reason;
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
    // A partition being consumed whose position has not moved for this long while the broker
    // has records beyond it is a stall (stall_detector.h); each look-up waits this long.
    std::chrono::milliseconds stall_timeout{60'000};
    std::chrono::milliseconds stall_lookup_timeout{5'000};
    // At most this many restarts within restart_window, then give up.
    int max_restarts = 3;
    std::chrono::milliseconds restart_window{600'000};
  };

  // All references must outlive the consumer. `offsets` answers the stall checks' look-ups
  // (on a thread of the consumer's own). `registry` gets the lag and replay histograms.
  Consumer(Options options, UsageStore& store, PartitionManager& manager, PartitionLifecycler& lifecycler,
           OffsetSource& offsets, const Clock& clock, prometheus::Registry& registry);
  ~Consumer();

  // Creates the KafkaConsumer, subscribes, and starts the consumer thread.
  Status Start();
  // Graceful: applies and persists what was consumed, leaves the group (the final revoke
  // runs), and joins the thread.
  void Stop();

  // From the lifecycler's thread: the plans for newly assigned partitions.
  void DeliverPlans(std::vector<AssignmentPlan> plans);

  const ConsumerStats& stats() const { return stats_; }

  // Why the consumer is dead, if it is: it gave up recovering, or its thread has not come
  // round its loop for stall_timeout (wedged: it could not act on a restart either).
  // nullopt while it works, and after Stop(). Any thread.
  std::optional<ConsumerFailure> Failure() const;

 private:
  class RebalanceHandler;
  // The consumer thread's view of one assigned partition.
  struct Local {
    int64_t generation = 0;
    PartitionState state = PartitionState::kPending;
    int64_t end = -1;       // replaying: ready once position >= end
    int64_t position = -1;  // next offset expected; -1 until the plan arrives
    int64_t log_end = -1;   // the latest end-of-log event's offset (past control records)
    bool advanced = false;  // position moved since the last apply
    PendingRecords pending;
  };

  enum class RestartReason { kFatal, kStalled, kForeignTopic };
  static const char* RestartReasonName(RestartReason reason);

  void Run();
  // Creates the client and subscribes (Start, and each recovery).
  Status CreateClient();
  // Destroys the client without closing it (it failed, or is stuck); a client whose
  // JoinGroup was answered but no SyncGroup yet is left to the process's exit instead
  // (librdkafka 2.0.2 aborts destroying it).
  void DestroyClient();
  // Every assigned partition is lost: not served, what was consumed applied and persisted,
  // revocation records written, no commit. No librdkafka call.
  void DropAssignment();
  // A fatal error or a stall: drop the assignment, re-create the client — or give up.
  void Recover(RestartReason reason, const std::string& detail);
  // Partitions of another topic were handed to us: unsubscribe and subscribe again.
  void Resubscribe();
  // Counts a restart; false (after giving up) when it is one too many.
  bool SpendRestart(RestartReason reason, const std::string& detail);
  void GiveUp(const std::string& reason);
  // The stall checker's thread.
  void CheckStalls();
  void ReportPositions();
  // Only options.topic's records and events are ours (the topic handle is remembered after
  // the first match, so the check is a pointer comparison).
  bool IsOurTopic(const rd_kafka_message_t& message);
  void HandleMessage(const rd_kafka_message_t& message);
  void HandleEndOfLog(const rd_kafka_message_t& event);
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
  // The first assignment of the current client: the group join really happened.
  void LogJoined(size_t handed);
  void OnAssign(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions);
  void OnRevoke(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions);

  const Options options_;
  UsageStore& store_;
  PartitionManager& manager_;
  PartitionLifecycler& lifecycler_;
  const Clock& clock_;
  ConsumerStats stats_;
  StallDetector stalls_;
  Periodic stall_checker_;
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

  // The stall checker asks the consumer thread for a restart.
  std::atomic<bool> stall_restart_{false};
  mutable std::mutex failure_mu_;
  std::string stall_detail_;                 // GUARDED_BY(failure_mu_)
  uint64_t client_epoch_ = 0;                // GUARDED_BY(failure_mu_): clients re-created
  std::optional<ConsumerFailure> failure_;   // GUARDED_BY(failure_mu_)
  bool outage_logged_ = false;               // stall checker thread only
  // steady_clock milliseconds at the consumer loop's last round; 0 when not running.
  std::atomic<int64_t> loop_at_ms_{0};

  // Consumer thread only.
  RestartBudget restarts_{options_.max_restarts, options_.restart_window};
  rd_kafka_topic_t* our_topic_ = nullptr;  // the client's handle of options.topic, once seen
  bool foreign_assigned_ = false;          // partitions of another topic were handed to us
  std::chrono::steady_clock::time_point last_report_;
  std::map<int32_t, Local> assigned_;
  size_t pending_records_ = 0;
  size_t records_since_flush_ = 0;
  std::map<int32_t, int64_t> committed_;
  bool all_ready_logged_ = false;
  bool replayed_since_release_ = false;  // a partition finished replaying since memory was last released
  bool states_changed_ = false;  // a partition was assigned, revoked, or changed state
  bool rebalanced_once_ = false;  // a rebalance callback ran: the group's first join completed
  bool joined_ = false;           // the current client's join was logged (its first assignment)
  int64_t replay_started_ms_ = 0;  // first plan of the current not-all-ready stretch
  std::chrono::steady_clock::time_point last_apply_, last_commit_, last_progress_;
  // A trim walks every arena's free memory: it waits 50 times what the last one took when
  // that is longer than trim_interval, keeping trims near 2 % of this thread.
  static constexpr int kTrimCostMultiple = 50;
  DutyCycle trim_{options_.trim_interval, kTrimCostMultiple, std::chrono::steady_clock::now()};
};

}  // namespace limits::kafka
