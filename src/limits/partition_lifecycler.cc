#include "limits/partition_lifecycler.h"

#include <algorithm>
#include <set>

#include "common/log.h"

namespace limits {

PartitionLifecycler::PartitionLifecycler(UsageStore& store, OffsetSource& offsets, PartitionManager& manager,
                                         const Clock& clock, Options options)
    : store_(store), offsets_(offsets), manager_(manager), clock_(clock), options_(options) {}

PartitionLifecycler::~PartitionLifecycler() { Stop(); }

Status PartitionLifecycler::Start(PlanSink sink) {
  sink_ = std::move(sink);
  ASSIGN_OR_RETURN(auto revoked, store_.Revoked());
  std::vector<int32_t> unmarked;
  for (int32_t p : store_.Partitions()) {
    if (!revoked.count(p) && !manager_.IsAssigned(p)) unmarked.push_back(p);
  }
  const int64_t now = clock_.NowMillis();
  RETURN_IF_ERROR(store_.MarkRevoked(unmarked, now, now + options_.revoked_retention.count()));
  if (!unmarked.empty()) {
    log::Info("lifecycle", "partitions on disk are evicted unless assigned within the retention")
        .Kv("partitions", unmarked.size())
        .Kv("retention_ms", options_.revoked_retention.count());
  }
  worker_ = std::thread([this] { Run(); });
  return Status::OK();
}

void PartitionLifecycler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void PartitionLifecycler::OnAssigned(std::vector<std::pair<int32_t, int64_t>> partitions) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(partitions));
  }
  cv_.notify_all();
}

void PartitionLifecycler::OnRevoked(const std::vector<int32_t>& partitions) {
  const int64_t now = clock_.NowMillis();
  std::vector<int32_t> held;
  const std::vector<int32_t> on_disk = store_.Partitions();
  for (int32_t p : partitions) {
    if (std::find(on_disk.begin(), on_disk.end(), p) != on_disk.end()) held.push_back(p);
  }
  Status s = store_.MarkRevoked(held, now, now + options_.revoked_retention.count());
  if (!s.ok()) log::Error("lifecycle", "cannot persist revocation").Kv("error", s.ToString());
}

void PartitionLifecycler::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (!queue_.empty()) {
      auto job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      ProcessAssignment(job);
      lock.lock();
      continue;
    }
    if (cv_.wait_for(lock, options_.check_interval, [this] { return stop_ || !queue_.empty(); })) continue;
    lock.unlock();
    EvictDueRevoked();
    lock.lock();
  }
}

void PartitionLifecycler::ProcessAssignment(const std::vector<std::pair<int32_t, int64_t>>& partitions) {
  std::vector<int32_t> ids;
  for (const auto& [p, gen] : partitions) ids.push_back(p);
  // Cancels scheduled evictions, before anything else can run them.
  if (Status s = store_.ClearRevoked(ids); !s.ok()) {
    log::Error("lifecycle", "cannot clear revocations").Kv("error", s.ToString());
  }
  const int64_t window_start_ms = clock_.NowMillis() - int64_t{options_.windows.active_s} * 1000;
  const std::vector<PartitionOffsets> offsets = offsets_.Lookup(ids, window_start_ms);
  const std::vector<int32_t> on_disk = store_.Partitions();
  std::vector<AssignmentPlan> plans;
  std::vector<std::pair<AssignmentPlan, const PartitionOffsets*>> looked_up;
  for (size_t i = 0; i < partitions.size(); ++i) {
    const auto [p, gen] = partitions[i];
    if (!manager_.IsCurrent(p, gen)) continue;  // revoked (and maybe re-assigned) meanwhile
    const PartitionOffsets& o = offsets[i];
    const std::optional<storage::Checkpoint> cp = store_.CheckpointOf(p);
    AssignmentPlan plan{.partition = p, .generation = gen};
    if (!o.ok) {
      // Liveness first: serve now, and still replay whatever follows the checkpoint.
      plan.lookup_failed = true;
      plan.resume_offset = cp ? cp->next_offset : kOffsetBeginning;
      log::Warn("lifecycle", "offset look-up failed; partition goes ready and replays in the background")
          .Kv("partition", p)
          .Kv("error", o.error)
          .Kv("resume_offset", plan.resume_offset);
      plans.push_back(plan);
      continue;
    }
    const bool has_data = std::find(on_disk.begin(), on_disk.end(), p) != on_disk.end();
    const bool usable = cp && cp->next_offset >= o.start && cp->next_offset <= o.end;
    if (!usable && has_data) {
      const char* why = !cp ? "no checkpoint" : cp->next_offset < o.start ? "checkpoint below the log start (retention deleted records it never saw)" : "checkpoint beyond the log end";
      log::Warn("lifecycle", "dropping the partition's data before replay").Kv("partition", p).Kv("reason", why)
          .Kv("checkpoint", cp ? cp->next_offset : -1).Kv("log_start", o.start).Kv("log_end", o.end);
      if (Status s = store_.DropPartition(p); !s.ok()) {
        log::Error("lifecycle", "drop failed").Kv("partition", p).Kv("error", s.ToString());
      }
    }
    plan.end_offset = o.end;
    plan.resume_offset = std::max({usable ? cp->next_offset : int64_t{0}, o.window_start, o.start});
    looked_up.emplace_back(plan, &o);
  }
  std::vector<int32_t> create;
  for (const auto& [plan, o] : looked_up) create.push_back(plan.partition);
  if (Status s = store_.EnsurePartitions(create); !s.ok()) {
    log::Error("lifecycle", "cannot create column families").Kv("error", s.ToString());
  }
  for (const auto& [plan, o] : looked_up) {
    const int32_t p = plan.partition;
    if (Result<uint64_t> evicted = store_.EvictExpired(p); evicted.ok() && *evicted > 0) {
      log::Info("lifecycle", "evicted stale streams").Kv("partition", p).Kv("streams", *evicted);
    }
    log::Info("lifecycle", plan.nothing_to_replay() ? "partition ready: nothing to replay" : "partition replaying")
        .Kv("partition", p)
        .Kv("window_start", o->window_start)
        .Kv("resume_offset", plan.resume_offset)
        .Kv("end_offset", o->end)
        .Kv("to_replay", std::max<int64_t>(0, o->end - plan.resume_offset));
    plans.push_back(plan);
  }
  if (!plans.empty() && sink_) sink_(std::move(plans));
}

void PartitionLifecycler::EvictDueRevoked() {
  if (!manager_.SettledOnce()) return;  // the first assignment may still hand them back
  Result<std::map<int32_t, storage::PartitionMeta>> revoked = store_.Revoked();
  if (!revoked.ok()) {
    log::Error("lifecycle", "cannot read revocations").Kv("error", revoked.status().ToString());
    return;
  }
  const int64_t now = clock_.NowMillis();
  for (const auto& [p, meta] : *revoked) {
    if (meta.evict_after_ms > now || manager_.IsAssigned(p)) continue;
    Status s = store_.DropPartition(p);
    if (s.ok()) {
      log::Info("lifecycle", "evicted a revoked partition").Kv("partition", p).Kv("revoked_at_ms", meta.revoked_at_ms);
    } else {
      log::Error("lifecycle", "evicting a revoked partition failed").Kv("partition", p).Kv("error", s.ToString());
    }
  }
}

}  // namespace limits
