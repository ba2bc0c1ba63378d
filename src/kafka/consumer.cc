#include "kafka/consumer.h"

#include <absl/strings/numbers.h>
#include <prometheus/family.h>

#include <algorithm>

#include "common/allocator.h"
#include "common/log.h"
#include "kafka/fetch_waker.h"
#include "kafka/record_codec.h"
#include "limits/lifecycle/record_filter.h"

namespace limits::kafka {
namespace {

struct MessageDestroyer {
  void operator()(rd_kafka_message_t* m) const { rd_kafka_message_destroy(m); }
};
using Polled = std::unique_ptr<rd_kafka_message_t, MessageDestroyer>;

int64_t SteadyMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// How often the consumer thread tells the stall detector how far each partition got.
constexpr std::chrono::milliseconds kReportInterval{250};

// How often the stall checker runs, and how long a position behind the log end must stay
// put to be a stall: a quarter of the stall timeout (at most 15 s). A stall is so reported
// between 1.25 and 1.5 stall timeouts after the partition's last progress (plus look-ups).
std::chrono::milliseconds StallCheckInterval(std::chrono::milliseconds stall_timeout) {
  return std::clamp<std::chrono::milliseconds>(stall_timeout / 4, std::chrono::milliseconds(250),
                                               std::chrono::milliseconds(15'000));
}

// "a,b,c" for log lines.
void AppendListItem(std::string* list, const std::string& item) {
  if (!list->empty()) list->push_back(',');
  list->append(item);
}

}  // namespace

class Consumer::RebalanceHandler final : public RdKafka::RebalanceCb {
 public:
  explicit RebalanceHandler(Consumer& owner) : owner_(owner) {}
  void rebalance_cb(RdKafka::KafkaConsumer* consumer, RdKafka::ErrorCode err,
                    std::vector<RdKafka::TopicPartition*>& partitions) override {
    try {
      owner_.rebalanced_once_ = true;
      if (err == RdKafka::ERR__ASSIGN_PARTITIONS) {
        owner_.OnAssign(*consumer, partitions);
        if (!owner_.joined_) owner_.LogJoined(partitions.size());
      } else if (err == RdKafka::ERR__REVOKE_PARTITIONS) {
        owner_.OnRevoke(*consumer, partitions);
      } else {
        log::Error("consumer", "rebalance failed").Kv("error", RdKafka::err2str(err));
        owner_.OnRevoke(*consumer, partitions);
      }
    } catch (const std::exception& e) {  // nothing may escape into librdkafka
      log::Error("consumer", "rebalance callback threw").Kv("error", e.what());
    } catch (...) {
      log::Error("consumer", "rebalance callback threw");
    }
  }

 private:
  Consumer& owner_;
};

Consumer::Consumer(Options options, UsageStore& store, PartitionManager& manager, PartitionLifecycler& lifecycler,
                   OffsetSource& offsets, const Clock& clock, prometheus::Registry& registry)
    : options_(std::move(options)),
      store_(store),
      manager_(manager),
      lifecycler_(lifecycler),
      clock_(clock),
      stalls_(offsets, clock,
              {.timeout = options_.stall_timeout,
               .confirm = StallCheckInterval(options_.stall_timeout),
               .lookup_timeout = options_.stall_lookup_timeout}),
      lag_(prometheus::BuildHistogram()
               .Name("loki_ingest_limits_lag_seconds")
               .Help("The estimated consumption lag in seconds, measured as the difference between the current "
                     "time and the timestamp of the record.")
               .Register(registry)
               // Loki's prometheus.ExponentialBuckets(0.125, 2, 18).
               .Add({}, prometheus::Histogram::BucketBoundaries{0.125, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256,
                                                                512, 1024, 2048, 4096, 8192, 16384})),
      replay_duration_(prometheus::BuildHistogram()
                           .Name("limitsd_replay_duration_seconds")
                           .Help("Time from a partition's plan to its replay being complete.")
                           .Register(registry)
                           .Add({}, prometheus::Histogram::BucketBoundaries{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
                                                                            300, 600, 1800})),
      rebalance_(std::make_unique<RebalanceHandler>(*this)) {}

Consumer::~Consumer() { Stop(); }

Status Consumer::Start() {
  RETURN_IF_ERROR(CreateClient());
  // Only a request so far: "joined" is logged by the first assignment (LogJoined), which
  // never comes while the brokers cannot be reached or the topic does not exist.
  log::Info("consumer", "subscribed; joining the consumer group")
      .Kv("group", options_.group)
      .Kv("topic", options_.topic)
      .Kv("brokers", options_.brokers)
      .Kv("protocol", "cooperative-sticky")
      .Kv("static_membership", options_.static_membership);
  running_ = true;
  last_apply_ = last_commit_ = last_progress_ = last_report_ = std::chrono::steady_clock::now();
  trim_ = DutyCycle(options_.trim_interval, kTrimCostMultiple, last_apply_);
  loop_at_ms_ = SteadyMillis();
  flusher_.Start(options_.flush_interval, [this] { Persist(); });
  stall_checker_.Start(StallCheckInterval(options_.stall_timeout), [this] { CheckStalls(); });
  thread_ = std::thread([this] { Run(); });
  return Status::OK();
}

Status Consumer::CreateClient() {
  Properties defaults = ConsumerDefaults(options_.brokers, options_.group, options_.instance_id);
  if (options_.static_membership) defaults["group.instance.id"] = options_.instance_id;
  ASSIGN_OR_RETURN(std::unique_ptr<RdKafka::Conf> conf, MakeConf(defaults, options_.properties));
  std::string err;
  if (conf->set("rebalance_cb", rebalance_.get(), err) != RdKafka::Conf::CONF_OK) return Status::Internal(err);
  std::string queued_min;
  size_t threshold = 0;
  if (conf->get("queued.min.messages", queued_min) != RdKafka::Conf::CONF_OK ||
      !absl::SimpleAtoi(queued_min, &threshold)) {
    return Status::Internal("consumer: cannot read queued.min.messages back");
  }
  consumer_.reset(RdKafka::KafkaConsumer::create(conf.get(), err));
  if (!consumer_) return Status::InvalidArgument("consumer: " + err);
  rebalanced_once_ = false;
  joined_ = false;
  our_topic_ = nullptr;
  foreign_assigned_ = false;
  if (Status s = FromKafka(consumer_->subscribe({options_.topic}), "subscribe to " + options_.topic); !s.ok()) {
    DestroyClient();
    return s;
  }
  queue_.reset(rd_kafka_queue_get_consumer(consumer_->c_ptr()));
  waker_ = std::make_unique<FetchWaker>(consumer_->c_ptr(), options_.topic, options_.num_partitions, threshold,
                                        stats_.fetch_wakeups);
  waker_->Start();
  return Status::OK();
}

void Consumer::DestroyClient() {
  if (waker_) waker_->Stop();
  waker_.reset();
  queue_.reset();
  if (!consumer_) return;
  // librdkafka 2.0.2 asserts (rd_kafka_sticky_assignor_state_destroy) when a client whose
  // JoinGroup was answered is destroyed before a SyncGroup succeeded — e.g. one fenced in
  // its first SyncGroup. A member id means a JoinGroup was answered; a rebalance callback,
  // that a SyncGroup succeeded. After a fatal error such a client is inert (librdkafka sends
  // no heartbeat or join any more): it is left to the process's exit, at most max_restarts
  // of them.
  if (!rebalanced_once_ && !consumer_->memberid().empty()) {
    log::Warn("consumer", "the failed client's group join did not complete: leaving it to the process's exit")
        .Kv("client", consumer_->name());
    (void)consumer_.release();
    return;
  }
  // The C++ destructor does not close (RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE): no final
  // rebalance callback, no commit, no LeaveGroup. After a fatal error close() refuses anyway
  // (it returns the fatal error at once); a stuck client might never finish closing.
  consumer_.reset();
}

void Consumer::Stop() {
  running_ = false;
  stall_checker_.Stop();
  if (thread_.joinable()) thread_.join();
  loop_at_ms_ = 0;
  if (waker_) waker_->Stop();  // the thread stops it before closing, unless it left early
  flusher_.Stop();
}

void Consumer::DeliverPlans(std::vector<AssignmentPlan> plans) {
  std::lock_guard lock(plans_mu_);
  plans_.insert(plans_.end(), plans.begin(), plans.end());
}

std::optional<ConsumerFailure> Consumer::Failure() const {
  {
    std::lock_guard lock(failure_mu_);
    if (failure_) return failure_;
  }
  const int64_t loop_at = loop_at_ms_.load(std::memory_order_relaxed);
  const int64_t idle_ms = loop_at == 0 ? 0 : SteadyMillis() - loop_at;
  if (idle_ms < options_.stall_timeout.count()) return std::nullopt;
  return ConsumerFailure{.since_ms = clock_.NowMillis() - idle_ms,
                         .reason = "the consumer thread has not come round its loop for " +
                                   std::to_string(idle_ms / 1000) + " s"};
}

const char* Consumer::RestartReasonName(RestartReason reason) {
  switch (reason) {
    case RestartReason::kFatal: return "fatal";
    case RestartReason::kStalled: return "stalled";
    case RestartReason::kForeignTopic: return "foreign_topic";
  }
  return "unknown";
}

void Consumer::Run() {
  uint64_t errors = 0;
  while (running_.load(std::memory_order_relaxed)) {
    loop_at_ms_.store(SteadyMillis(), std::memory_order_relaxed);
    // Drain what is queued (waiting only for the first message), then do the housekeeping
    // once per batch rather than per record.
    // Polled through the C API: the C++ one wraps every record in an object of its own.
    bool fatal = false;
    for (int i = 0; i < 1000; ++i) {
      const Polled message(rd_kafka_consumer_poll(consumer_->c_ptr(), i == 0 ? 20 : 0));
      if (message == nullptr) break;  // nothing within the timeout
      if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        HandleMessage(*message);
        continue;
      }
      if (message->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
        HandleEndOfLog(*message);
        continue;
      }
      if (message->err == RD_KAFKA_RESP_ERR__FATAL) {
        fatal = true;
        break;
      }
      if (errors++ % 100 == 0) {
        log::Warn("consumer", "consume error")
            .Kv("partition", message->partition)
            .Kv("error", rd_kafka_message_errstr(message.get()));
      }
      break;
    }
    if (fatal) {
      // The client is dead for good: librdkafka stops its group membership (no heartbeat, no
      // join, assignments become unassignments) and every later call fails.
      char reason[512] = "";
      const rd_kafka_resp_err_t code = rd_kafka_fatal_error(consumer_->c_ptr(), reason, sizeof reason);
      Recover(RestartReason::kFatal, std::string(rd_kafka_err2name(code)) + ": " + reason);
      if (!consumer_) break;  // gave up
      continue;
    }
    if (stall_restart_.exchange(false)) {
      std::string detail;
      {
        std::lock_guard lock(failure_mu_);
        detail = std::move(stall_detail_);
      }
      Recover(RestartReason::kStalled, detail);
      if (!consumer_) break;
      continue;
    }
    if (foreign_assigned_) {
      Resubscribe();
      if (!consumer_) break;
    }
    waker_->Observe(rd_kafka_queue_length(queue_.get()));
    if (!stats_.left_group.load(std::memory_order_relaxed) && !store_.health().ok()) LeaveOnStoreFailure();
    ApplyPlans();
    const auto now = std::chrono::steady_clock::now();
    if (pending_records_ >= options_.apply_records || now - last_apply_ >= options_.apply_interval) ApplyPending();
    if (records_since_flush_ >= options_.flush_records) {
      flusher_.Trigger();
      records_since_flush_ = 0;
    }
    if (now - last_commit_ >= options_.flush_interval) CommitOffsets();
    if (now - last_progress_ >= options_.progress_interval) LogProgress();
    if (now - last_report_ >= kReportInterval) ReportPositions();
    if (trim_.Due(now)) TrimWhileReplaying();
    if (states_changed_) LogReadiness();
  }
  loop_at_ms_ = 0;         // out of the loop: Failure() no longer watches it
  if (!consumer_) return;  // gave up: nothing left to close
  // Graceful stop: finish the batch and its checkpoint, then leave the group (the final
  // revoke persists the revocation and commits).
  if (!stats_.left_group.load(std::memory_order_relaxed)) {
    ApplyPending();
    if (Status s = store_.Flush(); !s.ok()) log::Error("consumer", "final flush failed").Kv("error", s.ToString());
  }
  CommitOffsets();
  // librdkafka 2.0.2 asserts (rd_kafka_sticky_assignor_state_destroy) when a consumer whose
  // JoinGroup was answered is destroyed before its first SyncGroup: let a join in progress
  // finish first. A member id means a JoinGroup was answered.
  if (!rebalanced_once_ && !consumer_->memberid().empty()) {
    const auto deadline = std::chrono::steady_clock::now() + options_.join_wait;
    while (!rebalanced_once_ && std::chrono::steady_clock::now() < deadline) {
      const Polled message(rd_kafka_consumer_poll(consumer_->c_ptr(), 50));
      if (message != nullptr && message->err == RD_KAFKA_RESP_ERR_NO_ERROR) HandleMessage(*message);
    }
    if (!rebalanced_once_) {
      log::Warn("consumer", "the group join did not complete; leaving the consumer to the process's exit")
          .Kv("waited_ms", options_.join_wait.count());
      (void)consumer_.release();  // closing it now would abort the process
      return;
    }
  }
  waker_->Stop();
  queue_.reset();
  consumer_->close();
  log::Info("consumer", "left the consumer group");
}

void Consumer::DropAssignment() {
  std::vector<int32_t> lost;
  std::string names;
  for (const auto& [p, l] : assigned_) {
    lost.push_back(p);
    manager_.Revoke(p);  // stop serving at once
    AppendListItem(&names, std::to_string(p));
  }
  if (!stats_.left_group.load(std::memory_order_relaxed) && !lost.empty()) {
    ApplyPending(&lost);
    store_.QueueRefreshes(lost);
    if (Status s = store_.Flush(); !s.ok()) log::Error("consumer", "flush of lost partitions failed").Kv("error", s.ToString());
    lifecycler_.OnRevoked(lost);
  }
  assigned_.clear();
  committed_.clear();
  pending_records_ = 0;
  states_changed_ = true;
  if (!lost.empty()) log::Info("consumer", "partitions lost").Kv("partitions", names);
}

bool Consumer::SpendRestart(RestartReason reason, const std::string& detail) {
  if (!restarts_.TrySpend(clock_.NowMillis())) {
    GiveUp(std::string(RestartReasonName(reason)) + ": " + detail + " (already restarted " +
           std::to_string(options_.max_restarts) + " times within " +
           std::to_string(options_.restart_window.count() / 1000) + " s)");
    return false;
  }
  switch (reason) {
    case RestartReason::kFatal: stats_.restarts_fatal.fetch_add(1, std::memory_order_relaxed); break;
    case RestartReason::kStalled: stats_.restarts_stalled.fetch_add(1, std::memory_order_relaxed); break;
    case RestartReason::kForeignTopic: stats_.restarts_foreign_topic.fetch_add(1, std::memory_order_relaxed); break;
  }
  return true;
}

void Consumer::Recover(RestartReason reason, const std::string& detail) {
  log::Error("consumer", reason == RestartReason::kFatal
                             ? "fatal consumer error: every partition is lost; re-creating the consumer"
                             : "consumption stalled: every partition is lost; re-creating the consumer")
      .Kv("reason", RestartReasonName(reason))
      .Kv("error", detail)
      .Kv("client", consumer_->name());
  DropAssignment();
  DestroyClient();
  {
    // A stall found on the old client (a check running meanwhile) must not restart the new one.
    std::lock_guard lock(failure_mu_);
    ++client_epoch_;
    stall_restart_ = false;
  }
  stalls_.Reset();
  // A node that left the group because its store failed stays out (its /live says so).
  if (stats_.left_group.load(std::memory_order_relaxed)) return;
  if (!SpendRestart(reason, detail)) return;
  if (Status s = CreateClient(); !s.ok()) {
    GiveUp(std::string(RestartReasonName(reason)) + ": " + detail + "; re-creating the consumer failed: " + s.ToString());
    return;
  }
  log::Info("consumer", "re-created the consumer: rejoining the group")
      .Kv("client", consumer_->name())
      .Kv("restarts_in_window", restarts_.Spent(clock_.NowMillis()));
}

void Consumer::Resubscribe() {
  foreign_assigned_ = false;
  if (!SpendRestart(RestartReason::kForeignTopic, "handed partitions of another topic")) {
    DropAssignment();
    DestroyClient();
    return;
  }
  // A static member that rejoins with a new member id gets its cached assignment back
  // without a rebalance; a member leaving and joining again with our subscription makes
  // the coordinator rebalance (measured on Kafka 4.4: the topic's partitions 0.06 s later
  // alone, 1.1 s with another member). unsubscribe() revokes everything through the
  // rebalance callback and leaves; librdkafka applies the subscribe once that completed.
  log::Warn("consumer", "re-subscribing so that the group rebalances with our subscription")
      .Kv("topic", options_.topic)
      .Kv("client", consumer_->name());
  if (RdKafka::ErrorCode rc = consumer_->unsubscribe(); rc != RdKafka::ERR_NO_ERROR) {
    log::Error("consumer", "unsubscribe failed").Kv("error", RdKafka::err2str(rc));
  }
  if (RdKafka::ErrorCode rc = consumer_->subscribe({options_.topic}); rc != RdKafka::ERR_NO_ERROR) {
    // The client is no use without a subscription: treat it as failed.
    Recover(RestartReason::kForeignTopic, "subscribe to " + options_.topic + ": " + RdKafka::err2str(rc));
  }
}

void Consumer::GiveUp(const std::string& reason) {
  log::Error("consumer",
             "GIVING UP: the consumer cannot recover by restarting; /live now fails so the pod is restarted")
      .Kv("reason", reason);
  stats_.failed = true;
  std::lock_guard lock(failure_mu_);
  failure_ = ConsumerFailure{.since_ms = clock_.NowMillis(), .reason = reason};
}

void Consumer::ReportPositions() {
  last_report_ = std::chrono::steady_clock::now();
  std::vector<ConsumedPosition> positions;
  for (const auto& [p, l] : assigned_) {
    if (l.state == PartitionState::kPending) continue;  // paused until its plan
    positions.push_back({.partition = p, .generation = l.generation, .offset = std::max(l.position, l.log_end)});
  }
  stalls_.Report(positions);
}

void Consumer::CheckStalls() {
  if (stats_.failed.load(std::memory_order_relaxed) || stall_restart_.load(std::memory_order_relaxed)) return;
  uint64_t epoch = 0;
  {
    std::lock_guard lock(failure_mu_);
    epoch = client_epoch_;
  }
  const StallCheck check = stalls_.Check();
  if (check.outage) {
    stats_.stall_lookup_failures.fetch_add(1, std::memory_order_relaxed);
    if (!outage_logged_) {
      log::Warn("consumer", "the brokers do not answer offset look-ups: an outage, not a stuck consumer; not restarting")
          .Kv("error", check.outage_error);
    }
  } else if (check.looked_up > 0 && outage_logged_) {
    log::Info("consumer", "the brokers answer offset look-ups again");
  }
  if (check.looked_up > 0) outage_logged_ = check.outage;
  if (check.stalled.empty()) return;
  std::string detail;
  for (const Stall& st : check.stalled) {
    AppendListItem(&detail, "partition " + std::to_string(st.partition) + " at " + std::to_string(st.position) +
                                " of " + std::to_string(st.end) + " for " + std::to_string(st.idle_ms / 1000) + " s");
  }
  std::lock_guard lock(failure_mu_);
  if (client_epoch_ != epoch) return;  // the client was re-created meanwhile
  stall_detail_ = "no progress while the broker has records beyond the position: " + detail;
  stall_restart_ = true;
}

void Consumer::LeaveOnStoreFailure() {
  stats_.left_group = true;
  log::Error("consumer",
             "the usage store failed: leaving the consumer group so other nodes take the partitions over "
             "(restart the node to recover)")
      .Kv("error", store_.health().ToString());
  if (RdKafka::ErrorCode rc = consumer_->unsubscribe(); rc != RdKafka::ERR_NO_ERROR) {
    log::Error("consumer", "unsubscribe failed").Kv("error", RdKafka::err2str(rc));
  }
}

bool Consumer::IsOurTopic(const rd_kafka_message_t& message) {
  if (message.rkt == our_topic_) return true;
  if (message.rkt == nullptr) return true;  // an event without a topic: as before the check (none seen)
  if (our_topic_ == nullptr && message.rkt != nullptr && options_.topic == rd_kafka_topic_name(message.rkt)) {
    our_topic_ = message.rkt;  // the client's handle of the topic lives as long as the client
    return true;
  }
  stats_.foreign_records.fetch_add(1, std::memory_order_relaxed);
  return false;
}

void Consumer::HandleMessage(const rd_kafka_message_t& message) {
  if (stats_.left_group.load(std::memory_order_relaxed)) return;
  if (!IsOurTopic(message)) return;  // another topic's partition 3 is not our partition 3
  auto it = assigned_.find(message.partition);
  if (it == assigned_.end()) return;
  Local& l = it->second;
  if (l.state == PartitionState::kPending) return;  // fetched again after the plan's seek
  const int64_t offset = message.offset;
  if (l.position >= 0 && offset < l.position) return;  // from before the seek
  // Counted once per offset a partition takes in, not per delivery librdkafka makes.
  stats_.fetched.fetch_add(1, std::memory_order_relaxed);
  l.position = offset + 1;
  l.advanced = true;
  RecordView r;
  if (!DecodeRecord(message, &r, /*read_instance=*/l.state == PartitionState::kReady)) {
    stats_.invalid.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  // Loki's producers partition by hash; a record elsewhere would count its stream under a
  // partition ExceedsLimits never asks, and twice once the right one has it.
  if (r.stream_hash % static_cast<uint64_t>(options_.num_partitions) != static_cast<uint64_t>(message.partition)) {
    stats_.misrouted.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  if (!ShouldApply(l.state, r.zone, r.instance, options_.zone, options_.run_tag)) {
    stats_.discarded.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  l.pending.Add(r, rd_kafka_message_timestamp(&message, nullptr), offset);
  ++pending_records_;
}

void Consumer::HandleEndOfLog(const rd_kafka_message_t& event) {
  if (!IsOurTopic(event)) return;
  auto it = assigned_.find(event.partition);
  if (it == assigned_.end() || it->second.state == PartitionState::kPending) return;
  Local& l = it->second;
  const int64_t offset = event.offset;
  l.log_end = std::max(l.log_end, offset);  // progress for the stall check, past control records
  if (l.state != PartitionState::kReplaying) return;
  // librdkafka drops events of a position before the plan's seek, so this is the log end
  // as seen from where the replay reads.
  if (offset > l.position) {
    l.position = offset;
    l.advanced = true;
  }
}

void Consumer::ApplyPlans() {
  std::vector<AssignmentPlan> plans;
  {
    std::lock_guard lock(plans_mu_);
    if (plans_.empty()) return;
    plans.swap(plans_);
  }
  std::vector<int32_t> accepted;
  for (const AssignmentPlan& plan : plans) {
    auto it = assigned_.find(plan.partition);
    if (it == assigned_.end() || it->second.generation != plan.generation) continue;  // revoked since
    accepted.push_back(plan.partition);
  }
  // Accepting the plan of the current assignment cancels a scheduled eviction; a stale plan
  // never touches a newer revocation record.
  if (Status s = store_.ClearRevoked(accepted); !s.ok()) {
    log::Error("consumer", "cannot clear revocations").Kv("error", s.ToString());
  }
  for (const AssignmentPlan& plan : plans) {
    auto it = assigned_.find(plan.partition);
    if (it == assigned_.end() || it->second.generation != plan.generation) continue;
    Local& l = it->second;
    std::unique_ptr<RdKafka::TopicPartition> tp(
        RdKafka::TopicPartition::create(options_.topic, plan.partition, plan.resume_offset));
    if (RdKafka::ErrorCode rc = consumer_->seek(*tp, 0); rc != RdKafka::ERR_NO_ERROR) {
      log::Error("consumer", "seek failed").Kv("partition", plan.partition).Kv("error", RdKafka::err2str(rc));
    }
    std::vector<RdKafka::TopicPartition*> resume = {tp.get()};
    consumer_->resume(resume);
    l.position = plan.resume_offset >= 0 ? plan.resume_offset : -1;
    states_changed_ = true;
    if (plan.nothing_to_replay()) {
      l.state = PartitionState::kReady;
      manager_.SetReady(plan.partition, plan.generation, plan.end_offset, plan.lookup_failed);
    } else {
      l.state = PartitionState::kReplaying;
      l.end = plan.end_offset;
      manager_.StartReplay(plan.partition, plan.generation, plan.resume_offset, plan.end_offset);
    }
  }
}

void Consumer::ApplyPending(const std::vector<int32_t>* only) {
  if (stats_.left_group.load(std::memory_order_relaxed)) return;  // the store refuses updates
  for (auto& [p, l] : assigned_) {
    if (only && std::find(only->begin(), only->end(), p) == only->end()) continue;
    if (!l.advanced && l.pending.empty()) continue;
    if (!l.pending.empty()) {
      lag_.Observe(static_cast<double>(clock_.NowMillis() - l.pending.records().back().timestamp_ms) / 1000.0);
    }
    ApplyStats st;
    Status s = store_.ApplyBuffered(p, l.pending.records(), l.position, &st);
    if (!s.ok()) {
      log::Error("consumer", "apply failed").Kv("partition", p).Kv("error", s.ToString());
    }
    stats_.applied.fetch_add(st.applied, std::memory_order_relaxed);
    stats_.invalid.fetch_add(st.invalid, std::memory_order_relaxed);
    stats_.outside_window.fetch_add(st.outside_window, std::memory_order_relaxed);
    stats_.redelivered.fetch_add(st.already_applied, std::memory_order_relaxed);
    records_since_flush_ += l.pending.size();
    pending_records_ -= l.pending.size();
    l.pending.Clear();
    l.advanced = false;
    FinishReplayIfDone(p, l);
  }
  last_apply_ = std::chrono::steady_clock::now();
}

void Consumer::FinishReplayIfDone(int32_t partition, Local& l) {
  if (l.state != PartitionState::kReplaying) return;
  manager_.UpdateProgress(partition, l.position);
  if (l.position < l.end) return;
  l.state = PartitionState::kReady;
  states_changed_ = true;
  manager_.SetReady(partition, l.generation, l.position, false);
  store_.ShrinkPartition(partition);
  replayed_since_release_ = true;
  std::optional<PartitionInfo> info = manager_.Get(partition);
  if (!info) return;
  const double seconds = static_cast<double>(info->replay.finished_ms - info->replay.started_ms) / 1000;
  replay_duration_.Observe(seconds);
  log::Debug("consumer", "partition ready: replay complete")
      .Kv("partition", partition)
      .Kv("replayed", info->replay.current_offset - info->replay.start_offset)
      .Kv("seconds", seconds);
}

void Consumer::Persist() {
  if (stats_.left_group.load(std::memory_order_relaxed)) return;  // the store refuses updates
  const Status s = store_.Flush();
  stats_.flushes.fetch_add(1, std::memory_order_relaxed);
  if (s.ok() == !flush_failed_) return;
  flush_failed_ = !s.ok();
  if (flush_failed_) log::Error("consumer", "flush failed").Kv("error", s.ToString());
  else log::Info("consumer", "flushes succeed again");
}

void Consumer::CommitOffsets() {
  if (stats_.left_group.load(std::memory_order_relaxed)) return;
  last_commit_ = std::chrono::steady_clock::now();
  std::vector<RdKafka::TopicPartition*> commits;
  for (const auto& [p, l] : assigned_) {
    if (l.state == PartitionState::kPending) continue;
    std::optional<storage::Checkpoint> cp = store_.CheckpointOf(p);
    if (!cp || committed_[p] == cp->next_offset) continue;
    committed_[p] = cp->next_offset;
    commits.push_back(RdKafka::TopicPartition::create(options_.topic, p, cp->next_offset));
  }
  if (!commits.empty()) consumer_->commitAsync(commits);
  for (auto* tp : commits) delete tp;
}

void Consumer::LogReadiness() {
  states_changed_ = false;
  bool all_ready = !assigned_.empty();
  for (const auto& [p, l] : assigned_) all_ready = all_ready && l.state == PartitionState::kReady;
  if (all_ready && !all_ready_logged_) {
    log::Info("consumer", "all assigned partitions ready")
        .Kv("partitions", assigned_.size())
        .Kv("seconds_since_assignment", static_cast<double>(clock_.NowMillis() - replay_started_ms_) / 1000);
  }
  if (all_ready && replayed_since_release_) {
    // A replay's transient memory (prefetched records, memtables, containers' growth) is
    // freed by now; returned at once, the RSS read after a start is the node's steady state.
    replayed_since_release_ = false;
    allocator::ReleaseFreeMemory();
  }
  all_ready_logged_ = all_ready;
}

void Consumer::LogProgress() {
  last_progress_ = std::chrono::steady_clock::now();
  // One line for the whole replay at info (a start with 64 partitions would otherwise log 64
  // lines every few seconds); each partition's at debug.
  size_t replaying = 0;
  int64_t remaining = 0;
  double records_per_s = 0;
  for (const auto& [p, l] : assigned_) {
    if (l.state != PartitionState::kReplaying) continue;
    std::optional<PartitionInfo> info = manager_.Get(p);
    if (!info) continue;
    const ReplayProgress& r = info->replay;
    ++replaying;
    remaining += r.remaining();
    records_per_s += r.records_per_s;
    log::Debug("consumer", "replaying")
        .Kv("partition", p)
        .Kv("start", r.start_offset)
        .Kv("target", r.target_offset)
        .Kv("current", r.current_offset)
        .Kv("remaining", r.remaining())
        .Kv("records_per_s", r.records_per_s)
        .Kv("eta_s", r.eta_s);
  }
  if (replaying == 0) return;
  log::Line line = log::Info("consumer", "replaying");
  line.Kv("partitions", replaying).Kv("remaining", remaining).Kv("records_per_s", records_per_s);
  if (records_per_s > 0) line.Kv("eta_s", static_cast<double>(remaining) / records_per_s);
}

void Consumer::TrimWhileReplaying() {
  const auto start = std::chrono::steady_clock::now();
  const bool replaying = std::any_of(assigned_.begin(), assigned_.end(),
                                     [](const auto& a) { return a.second.state == PartitionState::kReplaying; });
  if (replaying) allocator::TrimArenas();
  trim_.Ran(start, std::chrono::steady_clock::now());
}

void Consumer::LogJoined(size_t handed) {
  joined_ = true;
  log::Info("consumer", "joined the consumer group")
      .Kv("group", options_.group)
      .Kv("topic", options_.topic)
      .Kv("member", consumer_->memberid())
      .Kv("partitions", handed)
      .Kv("protocol", "cooperative-sticky")
      .Kv("static_membership", options_.static_membership);
}

void Consumer::OnAssign(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions) {
  std::vector<std::pair<int32_t, int64_t>> jobs;
  std::vector<RdKafka::TopicPartition*> ours;
  std::string names, foreign;
  if (all_ready_logged_ || replay_started_ms_ == 0) replay_started_ms_ = clock_.NowMillis();
  for (RdKafka::TopicPartition* tp : partitions) {
    const int32_t p = tp->partition();
    if (tp->topic() != options_.topic) {
      // Never assigned, marked or served: another topic's partition 3 is not our partition 3
      // (a static member's cached assignment from before kafka.topic changed).
      AppendListItem(&foreign, tp->topic() + "[" + std::to_string(p) + "]");
      continue;
    }
    const int64_t generation = manager_.Assign(p);
    assigned_[p] = Local{.generation = generation, .pending = {}};
    // A starting point only: the partition stays paused until its plan seeks.
    std::optional<storage::Checkpoint> cp = store_.CheckpointOf(p);
    tp->set_offset(cp ? cp->next_offset : RdKafka::Topic::OFFSET_BEGINNING);
    jobs.emplace_back(p, generation);
    ours.push_back(tp);
    AppendListItem(&names, std::to_string(p));
  }
  // Called even with nothing of ours: librdkafka waits for the call to finish the rebalance.
  if (RdKafka::Error* e = consumer.incremental_assign(ours)) {
    log::Error("consumer", "incremental_assign failed").Kv("error", e->str());
    delete e;
  }
  if (!ours.empty()) consumer.pause(ours);
  states_changed_ = true;
  if (!jobs.empty()) {
    lifecycler_.OnAssigned(std::move(jobs));
    log::Info("consumer", "partitions assigned").Kv("partitions", names);
  }
  if (!foreign.empty()) {
    stats_.foreign_partitions.fetch_add(partitions.size() - ours.size(), std::memory_order_relaxed);
    foreign_assigned_ = true;  // the consumer thread re-subscribes after this callback
    log::Error("consumer", "handed partitions of another topic: not taken")
        .Kv("topic", options_.topic)
        .Kv("foreign", foreign);
  }
}

void Consumer::OnRevoke(RdKafka::KafkaConsumer& consumer, std::vector<RdKafka::TopicPartition*>& partitions) {
  const bool lost = consumer.assignment_lost();
  std::vector<int32_t> revoked;
  // Only what was assigned can be unassigned (librdkafka refuses the whole call otherwise,
  // and then waits for an unassign forever): partitions of another topic never were.
  std::vector<RdKafka::TopicPartition*> ours;
  std::string names;
  for (RdKafka::TopicPartition* tp : partitions) {
    if (tp->topic() != options_.topic) continue;
    ours.push_back(tp);
    revoked.push_back(tp->partition());
    manager_.Revoke(tp->partition());  // stop serving at once
    AppendListItem(&names, std::to_string(tp->partition()));
  }
  // What was consumed is applied and persisted: a re-assignment replays only what follows.
  if (!stats_.left_group.load(std::memory_order_relaxed) && !revoked.empty()) {
    ApplyPending(&revoked);
    store_.QueueRefreshes(revoked);  // requests refreshed them without a write
    if (Status s = store_.Flush(); !s.ok()) log::Error("consumer", "flush on revoke failed").Kv("error", s.ToString());
    lifecycler_.OnRevoked(revoked);
  }
  std::vector<RdKafka::TopicPartition*> commits;
  for (int32_t p : revoked) {
    auto it = assigned_.find(p);
    const bool started = it != assigned_.end() && it->second.state != PartitionState::kPending;
    std::optional<storage::Checkpoint> cp = store_.CheckpointOf(p);
    if (!lost && started && cp && committed_[p] != cp->next_offset) {
      commits.push_back(RdKafka::TopicPartition::create(options_.topic, p, cp->next_offset));
    }
    assigned_.erase(p);
    committed_.erase(p);
  }
  if (!commits.empty()) consumer.commitAsync(commits);
  for (auto* tp : commits) delete tp;
  if (RdKafka::Error* e = consumer.incremental_unassign(ours)) {
    log::Error("consumer", "incremental_unassign failed").Kv("error", e->str());
    delete e;
  }
  states_changed_ = true;
  if (!revoked.empty()) log::Info("consumer", lost ? "partitions lost" : "partitions revoked").Kv("partitions", names);
}

}  // namespace limits::kafka
