#include "limits/lifecycle/partition_lifecycler.h"

#include <algorithm>

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
  for (int i = 0; i < std::max(1, options_.lookup_threads); ++i) pool_.emplace_back([this] { Work(); });
  dispatcher_ = std::thread([this] { Dispatch(); });
  return Status::OK();
}

void PartitionLifecycler::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  dispatch_cv_.notify_all();
  work_cv_.notify_all();
  if (dispatcher_.joinable()) dispatcher_.join();
  for (auto& t : pool_) {
    if (t.joinable()) t.join();
  }
  pool_.clear();
}

void PartitionLifecycler::OnAssigned(std::vector<std::pair<int32_t, int64_t>> partitions) {
  {
    std::lock_guard lock(mu_);
    assigned_.push_back(std::move(partitions));
  }
  dispatch_cv_.notify_all();
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

std::unique_ptr<PartitionLifecycler::Job> PartitionLifecycler::MakeJob(int32_t partition, int64_t generation,
                                                                        uint64_t batch) {
  const std::vector<int32_t> on_disk = store_.Partitions();
  const int64_t now = clock_.NowMillis();
  AssignmentLookup::Input input{
      .partition = partition,
      .checkpoint = store_.CheckpointOf(partition),
      .has_data = std::find(on_disk.begin(), on_disk.end(), partition) != on_disk.end(),
      .cutoff_ms = std::max<int64_t>(0, now - int64_t{options_.windows.active_s} * 1000),
      .started_ms = now,
      .trust_time_index_none = time_index_works_.load(std::memory_order_relaxed),
  };
  return std::unique_ptr<Job>(new Job{.partition = partition,
                                      .generation = generation,
                                      .batch = batch,
                                      .lookup = AssignmentLookup(std::move(input), options_.lookup)});
}

void PartitionLifecycler::Dispatch() {
  std::unique_lock lock(mu_);
  auto next_check = std::chrono::steady_clock::now() + options_.check_interval;
  while (!stop_) {
    while (!assigned_.empty()) {
      std::vector<std::pair<int32_t, int64_t>> partitions = std::move(assigned_.front());
      assigned_.pop_front();
      const uint64_t batch = next_batch_++;
      batches_[batch] = Batch{.started_ms = clock_.NowMillis(), .open = partitions.size()};
      lock.unlock();
      std::vector<std::unique_ptr<Job>> jobs;
      for (const auto& [p, gen] : partitions) jobs.push_back(MakeJob(p, gen, batch));
      lock.lock();
      for (auto& job : jobs) runnable_.push_back(std::move(job));
      work_cv_.notify_all();
      if (partitions.empty()) CloseBatch(batch);
    }
    const SteadyTime now = std::chrono::steady_clock::now();
    while (!waiting_.empty() && waiting_.begin()->first <= now) {
      runnable_.push_back(std::move(waiting_.begin()->second));
      waiting_.erase(waiting_.begin());
      work_cv_.notify_one();
    }
    if (!done_.empty()) {
      std::vector<std::unique_ptr<Job>> done = std::move(done_);
      done_.clear();
      lock.unlock();
      Finalize(std::move(done));
      lock.lock();
      continue;
    }
    if (now >= next_check) {
      lock.unlock();
      EvictDueRevoked();
      lock.lock();
      next_check = std::chrono::steady_clock::now() + options_.check_interval;
      continue;
    }
    const SteadyTime wake = waiting_.empty() ? next_check : std::min(next_check, waiting_.begin()->first);
    dispatch_cv_.wait_until(lock, wake, [&] {
      return stop_ || !assigned_.empty() || !done_.empty() || (!waiting_.empty() && waiting_.begin()->first < wake);
    });
  }
}

void PartitionLifecycler::Work() {
  std::unique_lock lock(mu_);
  for (;;) {
    work_cv_.wait(lock, [this] { return stop_ || !runnable_.empty(); });
    if (stop_) return;
    std::unique_ptr<Job> job = std::move(runnable_.front());
    runnable_.pop_front();
    lock.unlock();
    // A stale job (revoked, maybe re-assigned meanwhile) makes no network call.
    AssignmentLookup::Next next{AssignmentLookup::Next::kDone};
    if (manager_.IsCurrent(job->partition, job->generation)) next = job->lookup.Step(offsets_, clock_.NowMillis());
    lock.lock();
    switch (next.kind) {
      case AssignmentLookup::Next::kContinue:
        runnable_.push_back(std::move(job));
        work_cv_.notify_one();
        break;
      case AssignmentLookup::Next::kRetryAfter:
        waiting_.emplace(std::chrono::steady_clock::now() + next.delay, std::move(job));
        dispatch_cv_.notify_all();
        break;
      case AssignmentLookup::Next::kDone:
        done_.push_back(std::move(job));
        dispatch_cv_.notify_all();
        break;
    }
  }
}

void PartitionLifecycler::ProcessAssignment(const std::vector<std::pair<int32_t, int64_t>>& partitions) {
  uint64_t batch = 0;
  {
    std::lock_guard lock(mu_);
    batch = next_batch_++;
    batches_[batch] = Batch{.started_ms = clock_.NowMillis(), .open = partitions.size()};
  }
  std::vector<std::unique_ptr<Job>> done;
  for (const auto& [p, gen] : partitions) {
    std::unique_ptr<Job> job = MakeJob(p, gen, batch);
    // Retries are immediate here; a source that never answers reaches the give-up only when
    // the clock passes it.
    while (manager_.IsCurrent(p, gen) &&
           job->lookup.Step(offsets_, clock_.NowMillis()).kind != AssignmentLookup::Next::kDone) {
    }
    done.push_back(std::move(job));
  }
  Finalize(std::move(done));
}

void PartitionLifecycler::Finalize(std::vector<std::unique_ptr<Job>> done) {
  struct Kept {
    Job* job;
    AssignmentPlan plan;
  };
  std::vector<Kept> kept;
  std::vector<uint64_t> stale_batches;
  for (auto& job : done) {
    stats_.lookups.fetch_add(1, std::memory_order_relaxed);
    const int32_t p = job->partition;
    const LookupResult& r = job->lookup.result();
    stats_.retries.fetch_add(static_cast<uint64_t>(r.retries), std::memory_order_relaxed);
    stats_.edge_probes.fetch_add(static_cast<uint64_t>(r.edge_probes), std::memory_order_relaxed);
    stats_.search_probes.fetch_add(static_cast<uint64_t>(r.search_probes), std::memory_order_relaxed);
    if (job->lookup.time_index_answered()) time_index_works_.store(true, std::memory_order_relaxed);
    if (!manager_.IsCurrent(p, job->generation)) {
      stats_.stale.fetch_add(1, std::memory_order_relaxed);
      stale_batches.push_back(job->batch);
      continue;
    }
    AssignmentPlan plan{.partition = p,
                        .generation = job->generation,
                        .resume_offset = r.resume_offset,
                        .end_offset = r.end_offset,
                        .lookup_failed = r.source == ResumeSource::kGaveUp};
    switch (r.source) {
      case ResumeSource::kGaveUp:
        stats_.give_ups.fetch_add(1, std::memory_order_relaxed);
        log::Error("lifecycle",
                   "GIVING UP on the partition's offset look-up: serving it now, replaying from its checkpoint in "
                   "the background; until the replay catches up its limits are checked against incomplete data")
            .Kv("partition", p)
            .Kv("waited_ms", clock_.NowMillis() - job->lookup.input().started_ms)
            .Kv("resume_offset", r.resume_offset)
            .Kv("error", r.last_error);
        break;
      case ResumeSource::kFallback:
        stats_.fallbacks.fetch_add(1, std::memory_order_relaxed);
        log::Warn("lifecycle", "window start not found; replaying from the checkpoint or log start instead")
            .Kv("partition", p)
            .Kv("resume_offset", r.resume_offset)
            .Kv("error", r.last_error);
        break;
      case ResumeSource::kTimeIndex:
        stats_.time_index.fetch_add(1, std::memory_order_relaxed);
        break;
      default:
        break;
    }
    if (r.drop_data) {
      log::Warn("lifecycle", "dropping the partition's data before replay")
          .Kv("partition", p)
          .Kv("reason", r.drop_reason)
          .Kv("log_start", r.bounds.start)
          .Kv("log_end", r.bounds.end);
      stats_.dropped.fetch_add(1, std::memory_order_relaxed);
      if (Status s = store_.DropPartition(p); !s.ok()) {
        log::Error("lifecycle", "drop failed").Kv("partition", p).Kv("error", s.ToString());
      }
    }
    if (r.checkpoint_below_start) {
      log::Warn("lifecycle",
                "checkpoint below the log start: retention deleted records this node never saw; keeping its rows "
                "and resuming at the log start")
          .Kv("partition", p)
          .Kv("log_start", r.bounds.start);
    }
    kept.push_back({job.get(), plan});
  }
  std::vector<int32_t> create;
  for (const Kept& k : kept) create.push_back(k.plan.partition);
  if (Status s = store_.EnsurePartitions(create); !s.ok()) {
    log::Error("lifecycle", "cannot create column families").Kv("error", s.ToString());
  }
  std::vector<AssignmentPlan> plans;
  for (const Kept& k : kept) {
    const int32_t p = k.plan.partition;
    if (Result<uint64_t> evicted = store_.EvictExpired(p); evicted.ok() && *evicted > 0) {
      log::Debug("lifecycle", "evicted stale streams").Kv("partition", p).Kv("streams", *evicted);
    }
    // A partition starting afresh gets its checkpoint now: nothing below the resume offset
    // is inside the window, so an empty partition at that offset is exact.
    if (!k.plan.lookup_failed) store_.StartAt(p, k.plan.resume_offset);
    const LookupResult& r = k.job->lookup.result();
    log::Debug("lifecycle", k.plan.nothing_to_replay() ? "partition ready: nothing to replay" : "partition replaying")
        .Kv("partition", p)
        .Kv("found_by", ResumeSourceName(r.source))
        .Kv("resume_offset", k.plan.resume_offset)
        .Kv("end_offset", k.plan.end_offset)
        .Kv("probes", r.edge_probes + r.search_probes)
        .Kv("to_replay", std::max<int64_t>(0, k.plan.end_offset - k.plan.resume_offset));
    plans.push_back(k.plan);
  }
  if (!kept.empty()) {
    if (Status s = store_.Flush(); !s.ok()) log::Error("lifecycle", "flush failed").Kv("error", s.ToString());
  }
  if (!plans.empty() && sink_) sink_(plans);

  std::lock_guard lock(mu_);
  for (uint64_t b : stale_batches) {
    auto it = batches_.find(b);
    if (it == batches_.end()) continue;
    ++it->second.stale;
    if (--it->second.open == 0) CloseBatch(b);
  }
  for (const Kept& k : kept) {
    auto it = batches_.find(k.job->batch);
    if (it == batches_.end()) continue;
    Batch& b = it->second;
    if (k.plan.lookup_failed) ++b.gave_up;
    if (k.plan.nothing_to_replay()) {
      ++b.ready;
    } else {
      ++b.replaying;
      b.to_replay += k.plan.end_offset - k.plan.resume_offset;
    }
    if (--b.open == 0) CloseBatch(k.job->batch);
  }
}

void PartitionLifecycler::CloseBatch(uint64_t batch) {
  auto it = batches_.find(batch);
  if (it == batches_.end()) return;
  const Batch& b = it->second;
  const double rate = manager_.LastReplayRate();
  log::Line line = log::Info("lifecycle", "assignment planned");
  line.Kv("partitions", b.replaying + b.ready + b.stale)
      .Kv("replaying", b.replaying)
      .Kv("ready_at_once", b.ready)
      .Kv("records_to_replay", b.to_replay)
      .Kv("lookup_seconds", static_cast<double>(clock_.NowMillis() - b.started_ms) / 1000.0);
  if (rate > 0 && b.to_replay > 0) line.Kv("eta_s", static_cast<double>(b.to_replay) / rate);
  if (b.stale > 0) line.Kv("revoked_meanwhile", b.stale);
  if (b.gave_up > 0) line.Kv("gave_up", b.gave_up);
  batches_.erase(it);
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
