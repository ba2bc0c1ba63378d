// UsageStore: the per-tenant stream usage of the partitions on this node, in memory for
// the hot path and mirrored to RocksDB (one column family per partition) for restarts.
//
// Memory is the source of truth while running; the database holds what memory held at the
// last flush. A flush writes, in one WriteBatch, every changed stream row together with the
// checkpoint (next offset) of each partition it covers: after a crash at any point the rows
// and the checkpoint agree, and Kafka replays from the checkpoint exactly what is missing.
// Repeated updates of a stream between flushes coalesce into one row write, which is what
// lets replay run near Kafka's delivery rate although RocksDB's write path is far slower.
//
// Thread-safety: every method is safe to call concurrently. Per-partition mutexes guard
// memory (never a global lock on the hot path); flushes are group commits — concurrent
// callers share one WriteBatch. A failed write is sticky: the store refuses further updates
// (memory is then ahead of disk in ways a checkpoint cannot describe).
#pragma once

#include <absl/container/flat_hash_map.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/notice_limiter.h"
#include "common/result.h"
#include "limits/usage/bucket_quota.h"
#include "limits/usage/partition_set.h"
#include "limits/usage/partition_usage.h"
#include "limits/usage/policy_names.h"
#include "limits/usage/tenant_directory.h"
#include "limits/usage/windows.h"
#include "storage/admission_log.h"
#include "storage/checkpoint.h"
#include "storage/codec.h"
#include "storage/db.h"

namespace limits {

// One consumed record (StreamMetadataRecord plus its Kafka coordinates).
struct Record {
  std::string_view tenant;
  uint64_t stream_hash = 0;
  uint64_t bytes = 0;  // StreamMetadata.totalSize
  std::string_view policy;
  int64_t timestamp_ms = 0;  // the record's timestamp: when the stream was seen
  int64_t offset = 0;
};

struct ApplyStats {
  uint64_t applied = 0;
  uint64_t already_applied = 0;  // offset below the checkpoint: re-delivery, skipped
  uint64_t outside_window = 0;   // older than the active window: nothing to keep
  uint64_t invalid = 0;          // bad tenant (or a tenant the node has no room for): counted and skipped
  uint64_t policy_overflow = 0;  // a policy name not kept (policy_names.h): counted under no policy
};

// One stream of a synchronous request (ExceedsLimits).
struct StreamUpdate {
  uint64_t stream_hash = 0;
  uint64_t bytes = 0;
  std::string_view policy;
};

// Whether a call may wait for a lock another thread holds. kNever is for callers on threads
// that must not block (gRPC's): a busy lock makes the call return kWouldBlock having changed
// nothing, to be run again where waiting is fine.
enum class Wait : bool { kMay, kNever };

enum class Verdict : uint8_t {
  kAccepted,
  kMaxStreams,  // a new stream (or one changing bucket) beyond its bucket's stream limit
  kNotServed,   // its partition is not in the serving set
  kTenantsFull,  // a limited stream of a new tenant the node has no room for (max_tenants)
};

struct UpdateCondResult {
  std::vector<Verdict> verdicts;  // one per input stream, in input order
  std::vector<uint32_t> to_produce;  // indices of accepted streams due to be produced now
  // Streams admitted (new, revived or moved into another bucket), written to the admission
  // log before UpdateCond returns: index, and the policy as stored ("" when not kept).
  struct Admitted {
    uint32_t index = 0;
    std::string_view policy;
  };
  std::vector<Admitted> admitted;
};

// Counts of one tenant, summed over a set of partitions.
struct TenantUsage {
  uint64_t active_streams = 0;
  uint64_t total_streams = 0;  // including expired streams not yet evicted
  std::map<std::string, uint64_t> active_by_policy;  // "" = no policy
  uint64_t rate_window_bytes = 0;  // bytes in the rate window's buckets
};

// Longest tenant the store keeps (a row's key holds the tenant with a one-byte length; Loki's
// tenant ids are at most 150 bytes). Ingestion policies: policy_names.h.
inline constexpr size_t kMaxTenantLength = storage::kMaxTenantLength;
// Ingestion policies one tenant may name at once (a stream stores its policy in 16 bits);
// policies with a limit of their own always have a name besides these.
inline constexpr uint32_t kMaxPoliciesPerTenant = 65535;
inline constexpr uint32_t kDefaultMaxPoliciesPerTenant = 1000;

// One tenant's streams on this node: in the partitions it serves, and held for the others
// (revoked but retained, pending or replaying).
struct TenantTotals {
  uint64_t active_streams = 0;  // served partitions, inside the window
  uint64_t total_streams = 0;   // served partitions, expired not yet evicted included
  uint64_t retained_streams = 0;
};

struct UsageStoreOptions {
  int32_t num_partitions = 64;
  Windows windows;
  // Distinct ingestion-policy names one tenant may have on the node; streams of a name beyond
  // it are counted under no policy (the default bucket), unless the name has a limit of its
  // own (own_limit), which is always kept.
  uint32_t max_policies_per_tenant = kDefaultMaxPoliciesPerTenant;
  // What clients can make the node hold (tenant_directory.h): tenants, and rate keys per
  // tenant and in all. What is over a bound is answered, not stored.
  uint32_t max_tenants = TenantBounds{}.max_tenants;
  uint32_t max_rate_keys_per_tenant = TenantBounds{}.max_rate_keys_per_tenant;
  uint64_t max_rate_keys = TenantBounds{}.max_rate_keys;
  // Whether a tenant's policy has a limit of its own (its streams count in a bucket of their
  // own, so its name must be kept); consulted for consumed records when the tenant's policy
  // table is full. Unset: no policy has one.
  std::function<bool(std::string_view tenant, std::string_view policy)> own_limit;
  const Clock* clock = &Clock::System();  // must outlive the store
  // Load only (inspection tools on a secondary Db): nothing is deleted at open, and every
  // update fails with kFailedPrecondition.
  bool read_only = false;
};

// What Open found on disk.
struct LoadStats {
  uint64_t partitions = 0;
  uint64_t streams = 0;              // loaded into memory
  uint64_t expired_rows = 0;         // outside the active window: skipped (and deleted unless read-only)
  uint64_t undecodable_rows = 0;     // skipped and left on disk
  uint64_t policy_overflow_rows = 0;  // more policies than a tenant may have: loaded under no policy
  uint64_t admissions_replayed = 0;  // admission-log entries applied (admitted, not yet flushed, before a crash)
  uint64_t admissions_dropped = 0;   // entries of tenants the directory had no room for
  uint64_t admission_log_corrupt = 0;  // torn or corrupt admission-log records (the rest of their file skipped)
  uint64_t orphan_checkpoints = 0;   // checkpoint without column family (deleted unless read-only)
  std::vector<int32_t> corrupt_checkpoints;  // undecodable: loaded as if absent (the node drops such data)
  std::vector<int32_t> without_checkpoint;  // column families with no checkpoint
};

class UsageStore {
 public:
  // Loads every partition on disk into memory, skipping rows outside the active window.
  // A checkpoint without a column family (never written by us) is deleted. `db` must
  // outlive the store.
  static Result<std::unique_ptr<UsageStore>> Open(storage::Db& db, const UsageStoreOptions& options);
  ~UsageStore();

  // --- consumption ---------------------------------------------------------------------
  // Applies consumed records and persists them with the checkpoint `next_offset` (the next
  // offset to consume) in one WriteBatch before returning. Records below the current
  // checkpoint are skipped, so re-delivery never double counts. Creates the partition's
  // column family when missing.
  Status Apply(int32_t partition, std::span<const Record> records, int64_t next_offset,
               ApplyStats* stats = nullptr);
  // Same, in memory only: the rows and the checkpoint are persisted together by the next
  // Flush(). The consumer uses it to coalesce many batches into one write.
  Status ApplyBuffered(int32_t partition, std::span<const Record> records, int64_t next_offset,
                       ApplyStats* stats = nullptr);
  // Releases the slack a replay's growth left in the partition's containers, as a load from
  // disk does: a replayed partition then holds what a restarted node would.
  void ShrinkPartition(int32_t partition);
  // Persists everything applied or updated so far (group commit).
  Status Flush();
  // Queues the streams of `partitions` that requests refreshed without a write (UpdateCond's
  // known streams not due to be produced) for the next Flush(): when the partitions stop being
  // served here (revocation, which a stop includes), so no recency is lost. Scans their streams.
  void QueueRefreshes(std::span<const int32_t> partitions);

  // --- serving -------------------------------------------------------------------------
  // Loki's UpdateCond: for each stream decides accepted / rejected against `quota` (the
  // places left in each bucket, bucket_quota.h; LimitsChecker passes an Admission of the
  // tenant's limits), counting the tenant's active streams over the `serving` partitions
  // into it when a stream needs a place in a limited bucket; updates the accepted
  // ones as seen now, picks those due to be produced (at most once per produce interval; an
  // admission always). `quota` is used up by the call: a fresh one per call.
  // A stream's policy name counts as given unless it is not kept (policy_names.h): then
  // under no policy. A stream that changes bucket is admitted into its new one. What was
  // admitted is in the admission log before this returns (a process crash after the answer
  // loses none of it); refreshes wait for the next Flush().
  // Bytes are not recorded in rate buckets here (UpdateRates does that, as in Loki), so a
  // client reporting a push through both does not count it twice.
  // Streams whose partition is not in `serving` get kNotServed and change nothing; a
  // serving partition without a column family gets one. A new tenant the node has no room
  // for (max_tenants) is not stored: its limited streams get kTenantsFull, unlimited ones are
  // accepted. With Wait::kNever, a busy lock (or a column family to create) is kWouldBlock,
  // with nothing changed.
  Status UpdateCond(std::string_view tenant, std::span<const StreamUpdate> streams, BucketQuota& quota,
                    const PartitionSet& serving, UpdateCondResult* out, Wait wait = Wait::kMay);

  // Loki's UpdateRates: records each hash's bytes in its rate buckets and returns its rate,
  // bytes/s over the populated buckets of the rate window, for every hash of a served
  // partition. A known active stream is refreshed and its row carries the rate (persisted by
  // the next flush, not before returning); any other hash (callers send segmentation keys)
  // gets a rate entry in memory that limits never count — UpdateRates never creates a
  // stream, which is ExceedsLimits' admission. Hashes of partitions not in `serving` are
  // skipped. A rate key over its bound (max_rate_keys_per_tenant, max_rate_keys) or of a
  // tenant the node has no room for is answered with its bytes alone and not kept.
  struct StreamRate {
    uint64_t stream_hash = 0;
    uint64_t bytes_per_s = 0;
  };
  Status UpdateRates(std::string_view tenant, std::span<const StreamUpdate> streams, const PartitionSet& serving,
                     std::vector<StreamRate>* out);

  // --- partitions ----------------------------------------------------------------------
  // Creates the partition's column family if missing.
  Status EnsurePartition(int32_t partition);
  Status EnsurePartitions(std::span<const int32_t> partitions);
  // Forgets the partition in memory and drops its data (checkpoint first, then the column
  // family), serialised with flushes.
  Status DropPartition(int32_t partition);
  // Removes streams outside the active window from memory and disk; returns how many, and
  // adds them per tenant to *by_tenant when given.
  using TenantCounts = std::map<std::string, uint64_t>;
  Result<uint64_t> EvictExpired(TenantCounts* by_tenant = nullptr);
  // Evicts one partition's streams outside the window (on assignment, before replay).
  Result<uint64_t> EvictExpired(int32_t partition, TenantCounts* by_tenant = nullptr);

  // Revocation records: when a partition stopped being assigned here, and when its data is
  // to be dropped unless it is assigned again (survive restarts; storage/partition_meta.h).
  Status MarkRevoked(std::span<const int32_t> partitions, int64_t revoked_at_ms, int64_t evict_after_ms);
  Status ClearRevoked(std::span<const int32_t> partitions);
  Result<std::map<int32_t, storage::PartitionMeta>> Revoked();

  // A partition starting afresh at `next_offset` (nothing below it is inside the window)
  // takes that checkpoint unless it has one; persisted by the next Flush().
  void StartAt(int32_t partition, int64_t next_offset);
  // The partition's checkpoint as applied in memory (flushed or about to be); nullopt when
  // it has none.
  std::optional<storage::Checkpoint> CheckpointOf(int32_t partition);
  // Partitions present (with a column family), ascending.
  std::vector<int32_t> Partitions();

  // --- queries -------------------------------------------------------------------------
  TenantUsage UsageOf(std::string_view tenant, const PartitionSet& partitions);
  // fn(tenant, totals) for every tenant with streams on this node; counts over `served`
  // (the partitions this node serves), the rest as retained.
  using TenantTotalsFn = std::function<void(const std::string&, const TenantTotals&)>;
  void ForEachTenant(const PartitionSet& served, const TenantTotalsFn& fn);
  // Tenants known to the node (with streams in some partition).
  size_t num_tenants() const { return directory_.size(); }
  // The bounds on what clients can make the node hold, and their refusals.
  const TenantDirectory& directory() const { return directory_; }
  // Streams counted under no policy because their policy's name was not kept, by why.
  const IgnoredPolicies& ignored_policies() const { return ignored_policies_; }
  // Requests whose admissions this process wrote to the admission log.
  uint64_t admissions_logged() const { return admissions_ ? admissions_->appended_records() : 0; }
  uint64_t admission_log_failures() const { return admissions_ ? admissions_->failures() : 0; }
  storage::AdmissionLog* admission_log() { return admissions_.get(); }
  // Active streams of a tenant's policy in one partition ("" = no policy).
  uint64_t ActiveStreams(int32_t partition, std::string_view tenant, std::string_view policy);
  uint64_t TotalStreams();
  // Streams held in memory for one partition (all tenants, expired not yet evicted included).
  uint64_t StreamsIn(int32_t partition);
  // fn(tenant, hash, policy, entry) for every stream of the partition in memory.
  using StreamFn = std::function<void(std::string_view, uint64_t, std::string_view, const StreamEntry&)>;
  void ForEachStream(int32_t partition, const StreamFn& fn);

  const LoadStats& load_stats() const { return load_stats_; }
  // OK unless a write failed (then the store refuses updates until restarted).
  Status health() { return CheckHealthy(); }
  // When the first write failed (unix ms); 0 while healthy.
  int64_t failed_since_ms() const { return failed_since_ms_.load(std::memory_order_relaxed); }
  int32_t num_partitions() const { return options_.num_partitions; }
  const Windows& windows() const { return options_.windows; }

 private:
  UsageStore(storage::Db& db, const UsageStoreOptions& options);

  // Loads one partition's rows; adds what it found to *stats.
  Status LoadPartition(int32_t partition, const std::optional<storage::Checkpoint>& cp, LoadStats* stats);
  Status ApplyLocked(PartitionUsage& pu, std::span<const Record> records, int64_t next_offset, int64_t now_s,
                     ApplyStats* stats);
  Status UpdateCondLocked(std::string_view tenant, std::span<const StreamUpdate> streams, BucketQuota& quota,
                          const PartitionSet& serving, UpdateCondResult* out, Wait wait, int64_t now_s);
  // Applies what the admission log holds from before a crash (at Open).
  Status ReplayAdmissions(LoadStats* stats);
  // The id of a kept policy name for a stream of `ts`: a new name gets one while the tenant's
  // table has room, or when it has a limit of its own (options_.own_limit); else nullopt.
  std::optional<PolicyId> KeepPolicy(TenantStreams& ts, std::string_view name);
  // Same, falling back to no policy's id (counted and logged as beyond the cap).
  PolicyId PolicyIdFor(TenantStreams& ts, std::string_view name);
  // The store fails (sticky): updates are refused until a restart.
  void Fail(const Status& s);
  Status EnsurePresentLocked(PartitionUsage& pu);
  Status WritePending();
  // Runs fn with no flush running and none starting (group-commit leadership).
  Status Exclusive(const std::function<Status()>& fn);
  Status CheckHealthy();
  // REQUIRES: the tenant's stripe of the mutexes of `pus` / `pool` held.
  void FindTenantLocked(std::span<PartitionUsage* const> pus, const TenantKey& key, std::span<TenantStreams*> out);
  void CountPoolLocked(BucketQuota& quota, const TenantKey& key, std::span<PartitionUsage* const> pool,
                       int64_t cutoff_s);
  // Logs a policy name not kept (at most once a minute per tenant and reason).
  void NoteIgnoredPolicy(std::string_view tenant, PolicyNameCheck why);
  // Logs a bound that refused something (at most once a minute per bound).
  void NoteBound(const char* bound, std::string_view tenant);
  PartitionUsage* Partition(int32_t partition);
  int64_t NowSeconds() const { return options_.clock->NowMillis() / 1000; }

  storage::Db& db_;
  const UsageStoreOptions options_;
  TenantDirectory directory_;
  IgnoredPolicies ignored_policies_;
  NoticeLimiter tenant_notices_;  // warnings keyed by a tenant a client names
  NoticeLimiter notices_;         // warnings of a fixed few causes: never crowded out by the above
  std::unique_ptr<storage::AdmissionLog> admissions_;  // absent only if Open failed before it
  std::vector<std::unique_ptr<PartitionUsage>> partitions_;  // fixed size: num_partitions
  LoadStats load_stats_;  // written by Open only

  // Same-tenant admissions are serialised so that two requests cannot both take the last
  // place; different tenants rarely share a stripe. A multiple of the partitions' stripes
  // (by the same hash), so one admission stripe's requests use one partition stripe.
  static constexpr size_t kAdmissionStripes = 64;
  static_assert(kAdmissionStripes % StripedMutex::kStripes == 0);
  std::mutex admission_mu_[kAdmissionStripes];

  // Group commit.
  std::mutex flush_mu_;
  std::condition_variable flush_cv_;
  bool flushing_ = false;            // GUARDED_BY(flush_mu_)
  uint64_t flush_requested_ = 0;     // GUARDED_BY(flush_mu_)
  uint64_t flush_completed_ = 0;     // GUARDED_BY(flush_mu_)
  Status failed_;                    // GUARDED_BY(flush_mu_); sticky write failure
  storage::WriteBatch flush_batch_;  // used by the flush leader only (flushing_)
  std::atomic<int64_t> failed_since_ms_{0};
};

}  // namespace limits
