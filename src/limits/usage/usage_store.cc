#include "limits/usage/usage_store.h"

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <thread>

#include "common/log.h"
#include "limits/usage/held_partitions.h"
#include "storage/codec.h"
#include "storage/column_families.h"

namespace limits {
namespace {

// How long UpdateCond with Wait::kNever spins for busy locks, in all, before it gives up.
constexpr std::chrono::microseconds kNoWaitSpin{50};

constexpr uint32_t kMaxTenants = 1u << 24;

bool ValidTenant(std::string_view tenant) { return !tenant.empty() && tenant.size() <= storage::kMaxTenantLength; }

Status CheckOptions(const UsageStoreOptions& o) {
  const Windows& w = o.windows;
  if (o.num_partitions <= 0 || o.num_partitions > storage::kMaxPartition + 1) {
    return Status::InvalidArgument("num_partitions must be in 1.." + std::to_string(storage::kMaxPartition + 1));
  }
  if (w.active_s == 0 || w.rate_s == 0 || w.bucket_s == 0 || w.produce_interval_s == 0) {
    return Status::InvalidArgument("windows must be positive");
  }
  if (w.rate_s % w.bucket_s != 0) return Status::InvalidArgument("rate window must be a multiple of the bucket size");
  if (o.max_policies_per_tenant == 0 || o.max_policies_per_tenant > kMaxPoliciesPerTenant) {
    return Status::InvalidArgument("max_policies_per_tenant must be in 1.." + std::to_string(kMaxPoliciesPerTenant));
  }
  if (o.max_tenants == 0 || o.max_tenants > kMaxTenants) {
    return Status::InvalidArgument("max_tenants must be in 1.." + std::to_string(kMaxTenants));
  }
  if (o.max_rate_keys_per_tenant == 0 || o.max_rate_keys == 0) {
    return Status::InvalidArgument("max_rate_keys_per_tenant and max_rate_keys must be positive");
  }
  if (o.clock == nullptr) return Status::InvalidArgument("no clock");
  return Status::OK();
}

}  // namespace

UsageStore::UsageStore(storage::Db& db, const UsageStoreOptions& options)
    : db_(db),
      options_(options),
      directory_(TenantBounds{.max_tenants = options.max_tenants,
                              .max_policies_per_tenant = options.max_policies_per_tenant,
                              .max_rate_keys_per_tenant = options.max_rate_keys_per_tenant,
                              .max_rate_keys = options.max_rate_keys}),
      flush_batch_(db) {
  partitions_.reserve(static_cast<size_t>(options.num_partitions));
  for (int32_t p = 0; p < options.num_partitions; ++p) {
    partitions_.push_back(std::make_unique<PartitionUsage>(p, options.windows, directory_));
  }
  if (options.read_only) failed_ = Status::FailedPrecondition("the usage store was opened read-only");
}

UsageStore::~UsageStore() = default;

Result<std::unique_ptr<UsageStore>> UsageStore::Open(storage::Db& db, const UsageStoreOptions& options) {
  RETURN_IF_ERROR(CheckOptions(options));
  const auto started = std::chrono::steady_clock::now();
  auto store = std::unique_ptr<UsageStore>(new UsageStore(db, options));

  std::vector<int32_t> corrupt_checkpoints;
  ASSIGN_OR_RETURN(auto checkpoints, db.ReadCheckpoints(&corrupt_checkpoints));
  const std::vector<int32_t> on_disk = db.ListPartitions();
  for (int32_t p : on_disk) {
    if (p >= options.num_partitions) {
      return Status::FailedPrecondition(storage::PartitionCfName(p) + " is on disk but the topic has only " +
                                        std::to_string(options.num_partitions) +
                                        " partitions (kafka.num_partitions changed?)");
    }
  }
  LoadStats& stats = store->load_stats_;
  stats.partitions = on_disk.size();
  stats.corrupt_checkpoints = corrupt_checkpoints;
  for (int32_t p : corrupt_checkpoints) {
    log::Error("store", "undecodable checkpoint: the partition's data will be dropped before it is replayed")
        .Kv("partition", p);
  }
  for (const auto& [p, cp] : checkpoints) {
    if (std::find(on_disk.begin(), on_disk.end(), p) != on_disk.end()) continue;
    ++stats.orphan_checkpoints;
    if (options.read_only) continue;
    log::Warn("store", "deleting a checkpoint without data").Kv("partition", p).Kv("next_offset", cp.next_offset);
    RETURN_IF_ERROR(db.DropPartition(p));
  }
  for (int32_t p : on_disk) {
    if (!checkpoints.count(p)) stats.without_checkpoint.push_back(p);
  }

  // Partitions load independently; two threads keep both cores busy on this machine kind.
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards stats and error
  Status error;
  auto worker = [&] {
    for (size_t i = next++; i < on_disk.size(); i = next++) {
      const int32_t p = on_disk[i];
      auto it = checkpoints.find(p);
      std::optional<storage::Checkpoint> cp;
      if (it != checkpoints.end()) cp = it->second;
      LoadStats found;
      Status st = store->LoadPartition(p, cp, &found);
      std::lock_guard lock(mu);
      stats.streams += found.streams;
      stats.expired_rows += found.expired_rows;
      stats.undecodable_rows += found.undecodable_rows;
      if (!st.ok() && error.ok()) error = st;
    }
  };
  const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  std::vector<std::thread> pool;
  for (size_t t = 1; t < std::min(threads, on_disk.size()); ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  RETURN_IF_ERROR(error);
  RETURN_IF_ERROR(store->ReplayAdmissions(&stats));

  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log::Info("store", "loaded usage from disk")
      .Kv("partitions", on_disk.size())
      .Kv("streams", stats.streams)
      .Kv("expired_rows", stats.expired_rows)
      .Kv("undecodable_rows", stats.undecodable_rows)
      .Kv("admissions_replayed", stats.admissions_replayed)
      .Kv("seconds", secs);
  return store;
}

Status UsageStore::ReplayAdmissions(LoadStats* stats) {
  ASSIGN_OR_RETURN(admissions_, storage::AdmissionLog::Open(db_.path() + "/admissions", options_.read_only));
  const int64_t cutoff = options_.windows.ActiveCutoff(NowSeconds());
  storage::AdmissionLogStats read;
  Status s = admissions_->Read(
      [&](const storage::AdmittedStream& a) {
        PartitionUsage* pu = Partition(a.partition);
        // A partition without data now was dropped after the admission: nothing to restore.
        if (pu == nullptr || !pu->present || static_cast<int64_t>(a.seen_s) < cutoff) return;
        const auto p = static_cast<uint64_t>(a.partition);
        if (a.stream_hash % static_cast<uint64_t>(options_.num_partitions) != p) return;
        std::lock_guard lock(pu->mu());
        TenantId tid = 0;
        TenantStreams* ts = pu->FindOrCreate(a.tenant, &tid);
        if (ts == nullptr) {
          ++stats->admissions_dropped;  // limits.max_tenants lowered since: the tenant is not kept
          return;
        }
        const PolicyId pid = PolicyIdFor(*ts, a.policy);
        // Idempotent: a row (or an earlier entry) at least as new leaves the stream as it is.
        ts->Observe(a.stream_hash, pid, a.seen_s, 0, /*persist=*/!options_.read_only);
        if (!options_.read_only) pu->QueueForFlush(tid, *ts);
        ++stats->admissions_replayed;
      },
      &read);
  RETURN_IF_ERROR(s);
  stats->admission_log_corrupt = read.corrupt_records;
  if (stats->admissions_dropped > 0) {
    log::Warn("store", "admission-log entries of tenants beyond limits.max_tenants were not restored")
        .Kv("entries", stats->admissions_dropped)
        .Kv("max_tenants", directory_.max_tenants());
  }
  if (read.corrupt_records > 0) {
    log::Warn("store", "the admission log ends in a torn or corrupt record; what it held before that was applied")
        .Kv("records", read.corrupt_records);
  }
  return Status::OK();
}

std::optional<PolicyId> UsageStore::KeepPolicy(TenantStreams& ts, std::string_view name) {
  if (std::optional<PolicyId> id = ts.Policy(name)) return id;
  // The table is full: only a name with a limit of its own still gets an id.
  if (options_.own_limit && options_.own_limit(ts.tenant(), name)) return ts.Policy(name, /*reserved=*/true);
  return std::nullopt;
}

PolicyId UsageStore::PolicyIdFor(TenantStreams& ts, std::string_view name) {
  if (std::optional<PolicyId> id = KeepPolicy(ts, name)) return *id;
  ignored_policies_.Add(PolicyNameCheck::kBeyondCap);
  NoteIgnoredPolicy(ts.tenant(), PolicyNameCheck::kBeyondCap);
  return *ts.Policy("");  // "" always has an id (TenantShared)
}

void UsageStore::Fail(const Status& s) {
  std::lock_guard lock(flush_mu_);
  if (!failed_.ok()) return;
  failed_ = s.Prefixed("usage store write failed; refusing updates until restart");
  failed_since_ms_.store(options_.clock->NowMillis(), std::memory_order_relaxed);
  log::Error("store", "write failed").Kv("error", s.ToString());
}

Status UsageStore::LoadPartition(int32_t partition, const std::optional<storage::Checkpoint>& cp,
                                 LoadStats* stats) {
  PartitionUsage& pu = *partitions_[static_cast<size_t>(partition)];
  std::lock_guard lock(pu.mu());
  pu.present = true;
  if (cp) {
    pu.has_checkpoint = true;
    pu.next_offset = cp->next_offset;
    pu.newest_record_ms = cp->newest_record_ms;
  }
  const int64_t cutoff = options_.windows.ActiveCutoff(NowSeconds());
  const uint32_t bucket_s = options_.windows.bucket_s;
  storage::StreamRow row;
  std::vector<std::string> expired;
  uint64_t& corrupt = stats->undecodable_rows;
  Status scan = db_.ScanPartition(partition, "", [&](std::string_view key, std::string_view value) {
    std::string_view tenant;
    uint64_t hash = 0;
    if (!storage::DecodeStreamKey(key, &tenant, &hash) || !storage::DecodeStreamRow(value, &row).ok()) {
      ++corrupt;
      return true;
    }
    if (static_cast<int64_t>(row.last_seen_s) < cutoff) {
      expired.emplace_back(key);
      return true;
    }
    TenantStreams* ts = pu.FindOrCreate(tenant);
    if (ts == nullptr) {
      ++corrupt;
      return true;
    }
    std::optional<PolicyId> pid = KeepPolicy(*ts, row.policy);
    if (!pid) {
      // More policies than the tenant may have (the cap was lowered): count the stream, under
      // no policy, rather than lose it.
      ++stats->policy_overflow_rows;
      pid = ts->Policy("");
    }
    // Rates kept in another bucket size cannot be mapped onto ours; they expire in minutes.
    const size_t rate_count = row.bucket_s == bucket_s ? row.rate_bytes.size() : 0;
    ts->Restore(hash, *pid, row.last_seen_s, row.last_produced_s, row.newest_bucket_s, row.rate_bytes.data(),
                rate_count);
    ++stats->streams;
    return true;
  });
  RETURN_IF_ERROR(scan);
  // Loading grew every container by doubling; a warm node keeps what it loaded for hours.
  pu.ShrinkToFit();
  if (corrupt > 0) {
    log::Error("store", "skipped undecodable rows (limitsctl verify reports them)")
        .Kv("partition", partition)
        .Kv("rows", corrupt);
  }
  stats->expired_rows = expired.size();
  if (!expired.empty() && !options_.read_only) {
    storage::WriteBatch batch(db_);
    for (const std::string& key : expired) batch.DeleteRow(partition, key);
    RETURN_IF_ERROR(db_.Write(batch));
  }
  return Status::OK();
}

PartitionUsage* UsageStore::Partition(int32_t partition) {
  if (partition < 0 || partition >= options_.num_partitions) return nullptr;
  return partitions_[static_cast<size_t>(partition)].get();
}

Status UsageStore::CheckHealthy() {
  std::lock_guard lock(flush_mu_);
  return failed_;
}

Status UsageStore::EnsurePresentLocked(PartitionUsage& pu) {
  if (pu.present) return Status::OK();
  // Requests holding different stripes of the partition may get here at once: one creates.
  std::lock_guard lock(pu.presence_mu());
  if (pu.present) return Status::OK();
  RETURN_IF_ERROR(db_.CreatePartition(pu.id()));
  pu.present = true;
  return Status::OK();
}

Status UsageStore::EnsurePartition(int32_t partition) { return EnsurePartitions(std::span<const int32_t>(&partition, 1)); }

Status UsageStore::EnsurePartitions(std::span<const int32_t> partitions) {
  RETURN_IF_ERROR(CheckHealthy());
  for (int32_t p : partitions) {
    if (Partition(p) == nullptr) return Status::InvalidArgument("partition " + std::to_string(p) + " out of range");
  }
  // Column families first, all at once; then each partition notes that it has one.
  RETURN_IF_ERROR(db_.CreatePartitions({partitions.begin(), partitions.end()}));
  for (int32_t p : partitions) {
    PartitionUsage& pu = *Partition(p);
    std::lock_guard lock(pu.mu());
    RETURN_IF_ERROR(EnsurePresentLocked(pu));
  }
  return Status::OK();
}

// --- consumption -------------------------------------------------------------------------

Status UsageStore::Apply(int32_t partition, std::span<const Record> records, int64_t next_offset,
                         ApplyStats* stats) {
  RETURN_IF_ERROR(ApplyBuffered(partition, records, next_offset, stats));
  return Flush();
}

void UsageStore::ShrinkPartition(int32_t partition) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return;
  std::lock_guard lock(pu->mu());
  pu->ShrinkToFit();
}

Status UsageStore::ApplyBuffered(int32_t partition, std::span<const Record> records, int64_t next_offset,
                                 ApplyStats* stats) {
  RETURN_IF_ERROR(CheckHealthy());
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return Status::InvalidArgument("partition " + std::to_string(partition) + " out of range");
  ApplyStats local;
  std::lock_guard lock(pu->mu());
  RETURN_IF_ERROR(EnsurePresentLocked(*pu));
  RETURN_IF_ERROR(ApplyLocked(*pu, records, next_offset, NowSeconds(), stats ? stats : &local));
  return Status::OK();
}

Status UsageStore::ApplyLocked(PartitionUsage& pu, std::span<const Record> records, int64_t next_offset,
                               int64_t now_s, ApplyStats* stats) {
  const int64_t cutoff = options_.windows.ActiveCutoff(now_s);
  // A batch's tenants are resolved once each, with the policy each used last: per record,
  // the directory's shared lock and the policy's name scan were a tenth of a replay.
  struct Tenant {
    TenantStreams* ts;
    TenantId tid;
    std::string_view policy;
    std::optional<PolicyId> pid;  // of `policy`, once resolved
    PolicyNameCheck ignored = PolicyNameCheck::kKept;  // why `policy` counts under no policy
  };
  std::vector<Tenant> tenants;
  absl::flat_hash_map<std::string_view, size_t> tenant_index;
  auto resolve = [&](const Record& r) -> int {
    if (r.offset < pu.next_offset) {
      ++stats->already_applied;
      return -1;
    }
    if (!ValidTenant(r.tenant) || r.timestamp_ms < 0) {
      ++stats->invalid;
      return -1;
    }
    if (std::min(r.timestamp_ms / 1000, now_s) < cutoff) {
      ++stats->outside_window;
      return -1;
    }
    auto [it, fresh] = tenant_index.try_emplace(r.tenant, tenants.size());
    if (fresh) {
      TenantId tid = 0;
      TenantStreams* ts = pu.FindOrCreate(r.tenant, &tid);
      if (ts == nullptr) {
        tenant_index.erase(it);
        ++stats->invalid;
        return -1;
      }
      tenants.push_back(Tenant{.ts = ts, .tid = tid, .policy = {}, .pid = std::nullopt, .ignored = {}});
    }
    return static_cast<int>(it->second);
  };
  // At millions of streams every stream look-up misses the cache: a record's slot is
  // fetched while the kAhead records before it are applied.
  constexpr size_t kAhead = 8;
  std::array<int, kAhead> ahead{};
  auto stage = [&](size_t i) {
    const int t = resolve(records[i]);
    ahead[i % kAhead] = t;
    if (t >= 0) tenants[static_cast<size_t>(t)].ts->Prefetch(records[i].stream_hash);
  };
  for (size_t i = 0; i < std::min(kAhead, records.size()); ++i) stage(i);
  for (size_t i = 0; i < records.size(); ++i) {
    const int t = ahead[i % kAhead];
    if (i + kAhead < records.size()) stage(i + kAhead);
    if (t < 0) continue;
    const Record& r = records[i];
    Tenant& tenant = tenants[static_cast<size_t>(t)];
    if (!tenant.pid || r.policy != tenant.policy) {
      // A name not kept (policy_names.h) counts the stream under no policy rather than not
      // at all, as requests do.
      tenant.policy = r.policy;
      tenant.ignored = CheckPolicyName(r.policy);
      const std::string_view name = tenant.ignored == PolicyNameCheck::kKept ? r.policy : std::string_view();
      std::optional<PolicyId> id = KeepPolicy(*tenant.ts, name);
      if (!id) {
        tenant.ignored = PolicyNameCheck::kBeyondCap;
        id = tenant.ts->Policy("");
      }
      tenant.pid = id;
      if (tenant.ignored != PolicyNameCheck::kKept) NoteIgnoredPolicy(r.tenant, tenant.ignored);
    }
    if (tenant.ignored != PolicyNameCheck::kKept) {
      ++stats->policy_overflow;
      ignored_policies_.Add(tenant.ignored);
    }
    const int64_t seen = std::min(r.timestamp_ms / 1000, now_s);  // a clock ahead of ours counts as now
    tenant.ts->Observe(r.stream_hash, *tenant.pid, static_cast<uint32_t>(seen), r.bytes);
    pu.QueueForFlush(tenant.tid, *tenant.ts);
    pu.newest_record_ms = std::max(pu.newest_record_ms, r.timestamp_ms);
    ++stats->applied;
  }
  pu.next_offset = std::max(pu.next_offset, next_offset);
  pu.has_checkpoint = true;
  pu.QueueCheckpoint();
  return Status::OK();
}

// --- flushing ----------------------------------------------------------------------------

Status UsageStore::Flush() {
  std::unique_lock lock(flush_mu_);
  const uint64_t ticket = ++flush_requested_;
  while (flush_completed_ < ticket) {
    if (!failed_.ok()) return failed_;
    if (flushing_) {
      flush_cv_.wait(lock);
      continue;
    }
    // Leader: everything requested so far was changed before this collection starts.
    flushing_ = true;
    const uint64_t target = flush_requested_;
    lock.unlock();
    // Every admission logged before the rotation changed memory before the collection below:
    // once its rows are written, the sealed files hold nothing the rows lack.
    const std::optional<uint64_t> sealed = admissions_->Rotate();
    Status s = WritePending();
    if (s.ok() && sealed) {
      if (Status t = admissions_->Trim(*sealed); !t.ok()) {
        log::Warn("store", "cannot delete admission-log files the flush covered").Kv("error", t.ToString());
      }
    }
    lock.lock();
    flushing_ = false;
    if (s.ok()) {
      flush_completed_ = std::max(flush_completed_, target);
    } else {
      failed_ = s.Prefixed("usage store write failed; refusing updates until restart");
      failed_since_ms_.store(options_.clock->NowMillis(), std::memory_order_relaxed);
      log::Error("store", "write failed").Kv("error", s.ToString());
    }
    flush_cv_.notify_all();
  }
  return failed_;
}

void UsageStore::QueueRefreshes(std::span<const int32_t> partitions) {
  for (int32_t p : partitions) {
    PartitionUsage* pu = Partition(p);
    if (pu == nullptr) continue;
    std::lock_guard lock(pu->mu());
    pu->ForEachTenant([&](TenantId tid, TenantStreams& ts) {
      if (ts.QueueStaleRows()) pu->QueueForFlush(tid, ts);
    });
  }
}

Status UsageStore::WritePending() {
  // A replay's flush holds up to a second of records: as one batch that is a fresh ~60 MB
  // buffer grown by copying, faulted in page by page, on every flush. Partitions go out in
  // batches of about kFlushBatchBytes through one reused buffer instead; each partition's
  // rows still share a batch with its checkpoint, which is all a restart relies on.
  constexpr size_t kFlushBatchBytes = 1 << 20;
  storage::WriteBatch& batch = flush_batch_;
  auto write = [&]() -> Status {
    Status s = batch.Count() == 0 ? Status::OK() : db_.Write(batch);
    // One partition's rows can make a batch far larger than the bound: not kept for reuse.
    if (batch.ByteSize() > 4 * kFlushBatchBytes) batch.Release();
    else batch.Clear();
    return s;
  };
  std::string key, value;
  const uint32_t n = options_.windows.num_buckets();
  std::vector<uint64_t> rate(n);
  for (auto& pu : partitions_) {
    if (!pu->pending()) continue;
    {
      std::lock_guard lock(pu->mu());
      const int32_t p = pu->id();
      pu->DrainWrites(
          [&](const TenantStreams& ts, uint64_t hash, const StreamEntry& e) {
            key.clear();
            storage::AppendStreamKey(&key, ts.tenant(), hash);
            value.clear();
            const uint32_t newest = ts.RateNewestFirst(e, rate.data());
            storage::EncodeStreamRow(&value, ts.PolicyName(e.policy), e.last_seen_s, e.last_produced_s,
                                     options_.windows.bucket_s, newest, rate);
            batch.PutRow(p, key, value);
          },
          [&](const TenantStreams& ts, uint64_t hash) { batch.DeleteRow(p, storage::EncodeStreamKey(ts.tenant(), hash)); },
          [&] { batch.PutCheckpoint(p, storage::Checkpoint{pu->next_offset, pu->newest_record_ms}); });
    }
    if (batch.ByteSize() >= kFlushBatchBytes) RETURN_IF_ERROR(write());
  }
  return write();
}

Status UsageStore::Exclusive(const std::function<Status()>& fn) {
  std::unique_lock lock(flush_mu_);
  flush_cv_.wait(lock, [this] { return !flushing_; });
  flushing_ = true;
  lock.unlock();
  Status s = fn();
  lock.lock();
  flushing_ = false;
  flush_cv_.notify_all();
  return s;
}

// --- serving -----------------------------------------------------------------------------

void UsageStore::NoteIgnoredPolicy(std::string_view tenant, PolicyNameCheck why) {
  const char* label = PolicyNameCheckLabel(why);
  const std::string key = std::string("policy/") + label + "/" + std::string(tenant);
  if (!tenant_notices_.Allow(key, options_.clock->NowMillis())) return;
  log::Warn("store", "ingestion policy name not kept: its streams count under no policy (the default bucket)")
      .Kv("tenant", tenant)
      .Kv("reason", label)
      .Kv("max_policies_per_tenant", options_.max_policies_per_tenant);
}

void UsageStore::NoteBound(const char* bound, std::string_view tenant) {
  if (!notices_.Allow(std::string("bound/") + bound, options_.clock->NowMillis())) return;
  log::Line line = log::Warn("store", "a memory bound refused to store what a client sent: answered, not stored");
  line.Kv("bound", bound).Kv("tenant", tenant).Kv("tenants", directory_.size());
  line.Kv("max_tenants", directory_.max_tenants()).Kv("rate_keys", directory_.rate_keys().held());
  line.Kv("max_rate_keys_per_tenant", directory_.rate_keys().per_tenant());
  line.Kv("max_rate_keys", directory_.rate_keys().per_node());
}

// Look-ups in stages, each started for every partition (or stream) before the next reads
// its result: a request's ~100 streams over ~50 partitions are each a chain of cache misses
// (tenant slot, tenant object, table header, stream slot), which overlap this way instead of
// running one after another.
void UsageStore::FindTenantLocked(std::span<PartitionUsage* const> pus, const TenantKey& key,
                                  std::span<TenantStreams*> out) {
  if (key.hint) {
    for (PartitionUsage* pu : pus) pu->Prefetch(key);
    for (PartitionUsage* pu : pus) pu->PrefetchStreams(key);
  }
  for (size_t i = 0; i < pus.size(); ++i) out[i] = pus[i]->Find(key);
}

void UsageStore::CountPoolLocked(BucketQuota& quota, const TenantKey& key, std::span<PartitionUsage* const> pool,
                                 int64_t cutoff_s) {
  std::vector<TenantStreams*> ts(pool.size());
  FindTenantLocked(pool, key, ts);
  for (TenantStreams* t : ts) {
    if (t != nullptr) t->PrefetchGroups();
  }
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i] != nullptr) quota.CountPartition(pool[i]->id(), *ts[i], cutoff_s);
  }
}

Status UsageStore::UpdateCond(std::string_view tenant, std::span<const StreamUpdate> streams, BucketQuota& quota,
                              const PartitionSet& serving, UpdateCondResult* out, Wait wait) {
  const int64_t now_s = NowSeconds();
  RETURN_IF_ERROR(UpdateCondLocked(tenant, streams, quota, serving, out, wait, now_s));
  if (out->admitted.empty()) return Status::OK();
  // The admissions are durable against a process crash before the caller answers; the locks
  // are released by now (the write is not in anyone's way).
  std::vector<storage::AdmittedStream> entries;
  entries.reserve(out->admitted.size());
  for (const UpdateCondResult::Admitted& a : out->admitted) {
    const uint64_t hash = streams[a.index].stream_hash;
    entries.push_back({.partition = static_cast<int32_t>(hash % static_cast<uint64_t>(options_.num_partitions)),
                       .tenant = tenant,
                       .stream_hash = hash,
                       .policy = a.policy,
                       .seen_s = static_cast<uint32_t>(now_s)});
  }
  if (Status s = admissions_->Append(entries); !s.ok()) {
    // The admissions stand in memory; made durable the other way before the answer: their
    // rows, now. Only a failing flush fails the store (and the call), as it always does.
    if (notices_.Allow("admission-log", options_.clock->NowMillis())) {
      log::Warn("store", "admission-log append failed; flushing the rows before answering").Kv("error", s.ToString());
    }
    return Flush();
  }
  return Status::OK();
}

Status UsageStore::UpdateCondLocked(std::string_view tenant, std::span<const StreamUpdate> streams,
                                    BucketQuota& quota, const PartitionSet& serving, UpdateCondResult* out, Wait wait,
                                    int64_t now_s) {
  out->verdicts.assign(streams.size(), Verdict::kNotServed);
  out->to_produce.clear();
  out->admitted.clear();
  if (!ValidTenant(tenant)) {
    return Status::InvalidArgument("tenant must be 1 to " + std::to_string(storage::kMaxTenantLength) + " bytes");
  }
  RETURN_IF_ERROR(CheckHealthy());
  const int64_t cutoff = options_.windows.ActiveCutoff(now_s);

  // The streams by partition (then by position in the request); runs of the served ones.
  std::vector<uint64_t> order(streams.size());
  for (size_t i = 0; i < streams.size(); ++i) {
    const uint64_t p = streams[i].stream_hash % static_cast<uint64_t>(options_.num_partitions);
    order[i] = (p << 32) | i;
  }
  std::sort(order.begin(), order.end());
  struct Run {
    size_t begin, end;
  };
  std::vector<Run> runs;
  std::vector<PartitionUsage*> run_pus;
  for (size_t k = 0; k < order.size();) {
    const auto p = static_cast<int32_t>(order[k] >> 32);
    size_t end = k;
    while (end < order.size() && static_cast<int32_t>(order[end] >> 32) == p) ++end;
    if (serving.Contains(p)) {
      runs.push_back({k, end});
      run_pus.push_back(partitions_[static_cast<size_t>(p)].get());
    }
    k = end;
  }
  auto index_of = [&](size_t k) { return static_cast<uint32_t>(order[k]); };

  // Each stream's policy as the node counts it: a name not kept (over-long, not UTF-8) is
  // no policy, so a client's header can fail nothing (policy_names.h). Counted once the
  // answer stands (a call that would wait is run again).
  std::vector<std::string_view> policies(streams.size());
  std::array<uint64_t, kPolicyNameChecks> ignored{};
  for (size_t i = 0; i < streams.size(); ++i) {
    const PolicyNameCheck c = CheckPolicyName(streams[i].policy);
    if (c == PolicyNameCheck::kKept) {
      policies[i] = streams[i].policy;
    } else {
      ++ignored[static_cast<size_t>(c)];
      if (ignored[static_cast<size_t>(c)] == 1) NoteIgnoredPolicy(tenant, c);
    }
  }
  const bool may_wait = wait == Wait::kMay;
  // Without waiting, locks another request holds (for microseconds) are worth a short spin;
  // the consumer's, flusher's or evictor's holds (up to milliseconds) are not.
  const auto spin_until = std::chrono::steady_clock::now() + kNoWaitSpin;
  TenantKey key(tenant);
  std::unique_lock admission_lock(admission_mu_[key.hash % kAdmissionStripes], std::defer_lock);
  if (may_wait) {
    admission_lock.lock();
  } else if (!TryLockUntil(admission_lock, spin_until)) {
    return Status::WouldBlock("the tenant's admission is busy");
  }
  key.hint = directory_.Find(tenant);  // the id once, not per partition

  // The request's partitions (its tenant's stripe of each) stay held from the first look-up
  // to the last change, so what the look-ups found (which streams are new) still holds when
  // they are admitted. Nothing changes before every lock needed is held: a call that would
  // wait can give up cleanly.
  HeldPartitions held(options_.num_partitions, key.stripe);
  for (PartitionUsage* pu : run_pus) {
    if (may_wait) {
      held.Lock(*pu);  // ascending
    } else if (!held.TryLockUntil(*pu, spin_until)) {
      return Status::WouldBlock("a partition is busy");
    }
  }
  for (PartitionUsage* pu : run_pus) {
    if (!may_wait && !pu->present) return Status::WouldBlock("a partition has no column family yet");
    RETURN_IF_ERROR(EnsurePresentLocked(*pu));
  }

  // Does any stream need the tenant's pool counted: a new stream, or a known one changing
  // bucket, into a limited bucket?
  std::vector<TenantStreams*> ts(runs.size());
  FindTenantLocked(run_pus, key, ts);
  for (size_t r = 0; r < runs.size(); ++r) {
    if (ts[r] == nullptr) continue;
    for (size_t k = runs[r].begin; k < runs[r].end; ++k) ts[r]->Prefetch(streams[index_of(k)].stream_hash);
  }
  constexpr size_t kNoBucket = SIZE_MAX;
  // The bucket a known active stream counts in now, kNoBucket for one that needs admission.
  auto bucket_now = [&](TenantStreams* t, const StreamEntry* e) {
    if (e == nullptr || static_cast<int64_t>(e->last_seen_s) < cutoff) return kNoBucket;
    return quota.BucketOf(t->PolicyName(e->policy));
  };
  bool count = false;
  for (size_t r = 0; r < runs.size() && !count; ++r) {
    for (size_t k = runs[r].begin; k < runs[r].end && !count; ++k) {
      const uint32_t i = index_of(k);
      const size_t to = quota.BucketOf(policies[i]);
      const size_t from = ts[r] ? bucket_now(ts[r], ts[r]->Find(streams[i].stream_hash)) : kNoBucket;
      count = from != to && quota.Limited(to);
    }
  }
  if (count) {
    // Counting reads every partition of the pool: the rest are taken without waiting, or,
    // when one is busy, all of them anew in ascending order.
    // Waiting is possible (in order, below): one try each. Otherwise what is left of the spin.
    const auto try_until = may_wait ? std::chrono::steady_clock::time_point{} : spin_until;
    std::vector<PartitionUsage*> pool;
    pool.reserve(serving.Count());
    bool all = true;
    for (int32_t p : serving.ToVector()) {
      PartitionUsage* pu = partitions_[static_cast<size_t>(p)].get();
      pool.push_back(pu);
      if (all && !held.holds(p)) all = held.TryLockUntil(*pu, try_until);
    }
    if (!all) {
      if (!may_wait) return Status::WouldBlock("a partition of the tenant's pool is busy");
      held.ReleaseAll();
      for (PartitionUsage* pu : pool) held.Lock(*pu);
      for (PartitionUsage* pu : run_pus) RETURN_IF_ERROR(EnsurePresentLocked(*pu));  // unlocked meanwhile
    }
    CountPoolLocked(quota, key, pool, cutoff);
  }

  // The answer stands from here on.
  for (size_t c = 0; c < kPolicyNameChecks; ++c) {
    if (ignored[c] > 0) ignored_policies_.Add(static_cast<PolicyNameCheck>(c), ignored[c]);
  }
  for (size_t r = 0; r < runs.size(); ++r) {
    PartitionUsage& pu = *run_pus[r];
    TenantId tid = 0;
    TenantStreams* t = pu.Find(key, &tid);
    bool created = false;
    for (size_t k = runs[r].begin; k < runs[r].end; ++k) {
      const uint32_t i = index_of(k);
      const StreamUpdate& s = streams[i];
      const std::string_view policy = policies[i];
      StreamEntry* e = t ? t->Find(s.stream_hash) : nullptr;
      const size_t from = t ? bucket_now(t, e) : kNoBucket;
      const size_t to = quota.BucketOf(policy);
      if (t == nullptr) {
        t = pu.FindOrCreate(key, &tid);
        if (t == nullptr) {
          // The node holds as many tenants as it may: nothing of this one is stored. A limit
          // cannot be kept without its count, so a limited stream is rejected (never
          // silently accepted); an unlimited one has nothing to count.
          out->verdicts[i] = quota.Limited(to) ? Verdict::kTenantsFull : Verdict::kAccepted;
          NoteBound("max_tenants", tenant);
          continue;
        }
        created = true;
        key.hint = tid;
      }
      // A new (or expired) stream, or a known one moving into another bucket, is admitted
      // there like a new stream; a move within a bucket (another policy without a limit of
      // its own) is not.
      const bool admit = from != to;
      if (admit && !quota.TryAdmit(to, pu.id())) {
        out->verdicts[i] = Verdict::kMaxStreams;
        continue;
      }
      if (admit && from != kNoBucket) quota.Release(from, pu.id());
      std::optional<PolicyId> pid = t->Policy(policy, quota.OwnBucket(policy));
      std::string_view kept = policy;
      if (!pid) {
        // Beyond the tenant's names and without a limit of its own: its bucket is the
        // default one either way.
        ignored_policies_.Add(PolicyNameCheck::kBeyondCap);
        NoteIgnoredPolicy(tenant, PolicyNameCheck::kBeyondCap);
        pid = t->Policy("");
        kept = {};
      }
      // A refresh of a known stream under its policy is not written by itself: its row is
      // rewritten when the stream is next due to be produced (at least every produce
      // interval while requests keep coming), which is also what its record on the topic
      // would restore after a crash. Writing every refresh made each flush rewrite every
      // stream requested in the last second (ARCHITECTURE.md, "Serving without a write").
      const bool persist = from == kNoBucket || e->policy != *pid;
      StreamEntry& entry = t->Observe(s.stream_hash, *pid, static_cast<uint32_t>(now_s), 0, persist);
      // An admission is produced at once, a move included, so other zones count the stream
      // in its new bucket too.
      if (admit || options_.windows.ProduceDue(s.stream_hash, entry.last_produced_s, now_s)) {
        t->SetLastProduced(entry, s.stream_hash, static_cast<uint32_t>(now_s));
        out->to_produce.push_back(i);
      }
      if (admit) out->admitted.push_back({.index = i, .policy = kept});
      if (t->HasPendingWrites()) pu.QueueForFlush(tid, *t);
      out->verdicts[i] = Verdict::kAccepted;
    }
    if (created) pu.EraseIfEmpty(key, tid);  // every new stream rejected: forget the tenant here again
  }
  std::sort(out->to_produce.begin(), out->to_produce.end());
  return Status::OK();
}

Status UsageStore::UpdateRates(std::string_view tenant, std::span<const StreamUpdate> streams,
                               const PartitionSet& serving, std::vector<StreamRate>* out) {
  out->clear();
  if (!ValidTenant(tenant)) {
    return Status::InvalidArgument("tenant must be 1 to " + std::to_string(storage::kMaxTenantLength) + " bytes");
  }
  RETURN_IF_ERROR(CheckHealthy());
  const int64_t now_s = NowSeconds();
  const int64_t cutoff = options_.windows.ActiveCutoff(now_s);
  auto rate_of = [&](const RateSum& sum) {
    return sum.populated == 0 ? 0 : sum.bytes / (uint64_t{sum.populated} * options_.windows.bucket_s);
  };
  TenantKey key(tenant, directory_.Find(tenant));  // the id once, not per stream
  for (const StreamUpdate& s : streams) {
    const auto p = static_cast<int32_t>(s.stream_hash % static_cast<uint64_t>(options_.num_partitions));
    if (!serving.Contains(p)) continue;
    PartitionUsage& pu = *partitions_[static_cast<size_t>(p)];
    std::lock_guard lock(pu.mu().stripe(key.stripe));
    TenantId tid = 0;
    TenantStreams* ts = pu.FindOrCreate(key, &tid);
    if (ts == nullptr) {
      // A new tenant the node has no room for: answered with the bytes of this call alone.
      NoteBound("max_tenants", tenant);
      out->push_back({s.stream_hash, rate_of(RateSum{.bytes = s.bytes, .populated = s.bytes > 0 ? 1u : 0u})});
      continue;
    }
    key.hint = tid;
    StreamEntry* e = ts->Find(s.stream_hash);
    if (e != nullptr && static_cast<int64_t>(e->last_seen_s) >= cutoff) {
      // A stream: its row carries the rate; persisted with the next flush.
      StreamEntry& entry = ts->Observe(s.stream_hash, e->policy, static_cast<uint32_t>(now_s), s.bytes);
      pu.QueueForFlush(tid, *ts);
      out->push_back({s.stream_hash, rate_of(ts->StreamRate(entry, now_s))});
      continue;
    }
    // Not a stream (a segmentation key, or a stream this node does not count): a rate only,
    // kept within the rate-key bounds.
    bool kept = true;
    const RateSum sum = ts->ObserveRateKey(s.stream_hash, static_cast<uint32_t>(now_s), s.bytes, &kept);
    out->push_back({s.stream_hash, rate_of(sum)});
    if (!kept) {
      const RateKeyBudget& budget = directory_.rate_keys();
      NoteBound(budget.held() >= budget.per_node() ? "max_rate_keys" : "max_rate_keys_per_tenant", tenant);
      pu.EraseIfEmpty(key, tid);  // a tenant created for this key alone holds nothing
    }
  }
  return Status::OK();
}

// --- partitions --------------------------------------------------------------------------

Status UsageStore::DropPartition(int32_t partition) {
  RETURN_IF_ERROR(CheckHealthy());
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return Status::InvalidArgument("partition " + std::to_string(partition) + " out of range");
  // Exclusive: no flush is writing this partition's rows while its column family goes.
  return Exclusive([&] {
    std::lock_guard lock(pu->mu());
    pu->Clear();
    pu->present = false;
    return db_.DropPartition(partition);
  });
}

Result<uint64_t> UsageStore::EvictExpired(int32_t partition, TenantCounts* by_tenant) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return Status::InvalidArgument("partition " + std::to_string(partition) + " out of range");
  RETURN_IF_ERROR(CheckHealthy());
  const int64_t cutoff = options_.windows.ActiveCutoff(NowSeconds());
  uint64_t evicted = 0;
  bool queued = false;
  {
    std::lock_guard lock(pu->mu());
    pu->ForEachTenant([&](TenantId tid, TenantStreams& ts) {
      const size_t n = ts.EvictBefore(cutoff);
      if (n == 0 && !ts.empty()) return;
      pu->QueueForFlush(tid, ts);  // also lets the flush forget a tenant left with nothing
      queued = true;
      evicted += n;
      if (n > 0 && by_tenant) (*by_tenant)[ts.tenant()] += n;
    });
  }
  if (queued) RETURN_IF_ERROR(Flush());
  return evicted;
}

Result<uint64_t> UsageStore::EvictExpired(TenantCounts* by_tenant) {
  uint64_t evicted = 0;
  for (int32_t p = 0; p < options_.num_partitions; ++p) {
    ASSIGN_OR_RETURN(uint64_t n, EvictExpired(p, by_tenant));
    evicted += n;
  }
  return evicted;
}

Status UsageStore::MarkRevoked(std::span<const int32_t> partitions, int64_t revoked_at_ms, int64_t evict_after_ms) {
  RETURN_IF_ERROR(CheckHealthy());
  std::map<int32_t, storage::PartitionMeta> metas;
  for (int32_t p : partitions) metas[p] = {revoked_at_ms, evict_after_ms};
  return metas.empty() ? Status::OK() : db_.PutPartitionMetas(metas);
}

Status UsageStore::ClearRevoked(std::span<const int32_t> partitions) {
  RETURN_IF_ERROR(CheckHealthy());
  return partitions.empty() ? Status::OK() : db_.DeletePartitionMetas({partitions.begin(), partitions.end()});
}

Result<std::map<int32_t, storage::PartitionMeta>> UsageStore::Revoked() { return db_.ReadPartitionMetas(); }

void UsageStore::StartAt(int32_t partition, int64_t next_offset) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr || next_offset < 0) return;
  std::lock_guard lock(pu->mu());
  if (pu->has_checkpoint) return;
  pu->next_offset = next_offset;
  pu->has_checkpoint = true;
  pu->QueueCheckpoint();
}

std::optional<storage::Checkpoint> UsageStore::CheckpointOf(int32_t partition) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return std::nullopt;
  std::lock_guard lock(pu->mu());
  if (!pu->has_checkpoint) return std::nullopt;
  return storage::Checkpoint{pu->next_offset, pu->newest_record_ms};
}

std::vector<int32_t> UsageStore::Partitions() {
  std::vector<int32_t> out;
  for (auto& pu : partitions_) {
    std::lock_guard lock(pu->mu());
    if (pu->present) out.push_back(pu->id());
  }
  return out;
}

// --- queries -----------------------------------------------------------------------------

TenantUsage UsageStore::UsageOf(std::string_view tenant, const PartitionSet& partitions) {
  TenantUsage usage;
  if (!directory_.Find(tenant)) return usage;
  const int64_t now_s = NowSeconds();
  const int64_t cutoff = options_.windows.ActiveCutoff(now_s);
  for (int32_t p : partitions.ToVector()) {
    PartitionUsage* pu = Partition(p);
    if (pu == nullptr) continue;
    std::lock_guard lock(pu->mu());
    TenantStreams* ts = pu->Find(tenant);
    if (ts == nullptr) continue;
    usage.total_streams += ts->size();
    ts->ForEachPolicy(cutoff, [&](std::string_view policy, uint32_t active) {
      usage.active_streams += active;
      if (active > 0) usage.active_by_policy[std::string(policy)] += active;
    });
    usage.rate_window_bytes = SaturatingAdd(usage.rate_window_bytes, ts->TenantRate(now_s).bytes);
  }
  return usage;
}

void UsageStore::ForEachTenant(const PartitionSet& served, const TenantTotalsFn& fn) {
  absl::flat_hash_map<std::string, TenantTotals> totals;
  const int64_t cutoff = options_.windows.ActiveCutoff(NowSeconds());
  for (auto& pu : partitions_) {
    const bool serves = served.Contains(pu->id());
    std::lock_guard lock(pu->mu());
    pu->ForEachTenant([&](TenantId, TenantStreams& ts) {
      TenantTotals& t = totals[ts.tenant()];
      if (!serves) {
        t.retained_streams += ts.size();
        return;
      }
      t.total_streams += ts.size();
      ts.ForEachPolicy(cutoff, [&](std::string_view, uint32_t n) { t.active_streams += n; });
    });
  }
  for (const auto& [tenant, t] : totals) fn(tenant, t);
}

uint64_t UsageStore::ActiveStreams(int32_t partition, std::string_view tenant, std::string_view policy) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return 0;
  std::lock_guard lock(pu->mu());
  TenantStreams* ts = pu->Find(tenant);
  return ts ? ts->ActiveOf(policy, options_.windows.ActiveCutoff(NowSeconds())) : 0;
}

uint64_t UsageStore::TotalStreams() {
  uint64_t total = 0;
  for (auto& pu : partitions_) {
    std::lock_guard lock(pu->mu());
    pu->ForEachTenant([&](TenantId, TenantStreams& ts) { total += ts.size(); });
  }
  return total;
}

uint64_t UsageStore::StreamsIn(int32_t partition) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return 0;
  std::lock_guard lock(pu->mu());
  uint64_t n = 0;
  pu->ForEachTenant([&](TenantId, TenantStreams& ts) { n += ts.size(); });
  return n;
}

void UsageStore::ForEachStream(int32_t partition, const StreamFn& fn) {
  PartitionUsage* pu = Partition(partition);
  if (pu == nullptr) return;
  std::lock_guard lock(pu->mu());
  pu->ForEachTenant([&](TenantId, TenantStreams& ts) {
    ts.ForEachStream([&](uint64_t hash, const StreamEntry& e) { fn(ts.tenant(), hash, ts.PolicyName(e.policy), e); });
  });
}

}  // namespace limits
