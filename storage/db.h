// Db: the node's one RocksDB database — a "meta" column family (format version, one
// checkpoint per partition) and one column family per partition, created on demand.
// Owns the RocksDB handle and the column family handles; no rocksdb type leaves storage/.
//
// Thread-safety: all methods are safe to call concurrently, except that a partition must
// not be written (or scanned) while it is being dropped; the usage store serialises those.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "storage/checkpoint.h"
#include "storage/partition_meta.h"

namespace limits::storage {

class WriteBatch;

struct DbOptions {
  std::string path;
  // Shared by every column family, so memory does not grow with the partition count.
  uint64_t block_cache_bytes = 256ull << 20;
  uint64_t write_buffer_bytes = 8ull << 20;
  // Rows not seen within this window are dropped by compaction (the TTL filter).
  int64_t active_window_s = 7200;
  // Time source of the TTL filter; must outlive the Db.
  const Clock* clock = &Clock::System();
  // Open as a RocksDB secondary instance: read-only, safe beside a running node (which holds
  // the lock), seeing at least every write made before Open began (it opens again when the
  // node deletes a file it listed, and catches up once to fill a skipped WAL's hole). Needs a
  // scratch directory for the secondary's own info log.
  bool secondary = false;
  std::string secondary_path;
};

// Figures of one column family, read from RocksDB properties.
struct CfStats {
  std::string name;
  uint64_t estimated_keys = 0;
  uint64_t sst_bytes = 0;
  uint64_t sst_files = 0;
  uint64_t memtable_bytes = 0;
  uint64_t pending_compaction_bytes = 0;
  std::vector<int> files_per_level;
};

class Db {
 public:
  // Opens or creates the database at options.path, opening every column family on disk.
  // Fails with kFailedPrecondition on an unknown format version, kIOError when another
  // process holds the lock (IsLockedError), kNotFound for a secondary with no database.
  static Result<std::unique_ptr<Db>> Open(const DbOptions& options);

  ~Db();  // Closes if Close() was not called.
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Flushes nothing (the WAL holds unflushed writes), releases handles, closes RocksDB.
  Status Close();

  const std::string& path() const;
  bool secondary() const;

  // Whether an Open error means another process (a running node) holds the database.
  static bool IsLockedError(const Status& s);

  // Partitions with a column family, ascending.
  std::vector<int32_t> ListPartitions() const;
  bool HasPartition(int32_t partition) const;
  // Creates the partition's column family if missing. Idempotent.
  Status CreatePartition(int32_t partition);
  // Same for several at once: one OPTIONS-file rewrite instead of one per partition.
  Status CreatePartitions(const std::vector<int32_t>& partitions);
  // Deletes the checkpoint and partition meta (synced), then drops the column family: a
  // crash in between leaves data without a checkpoint, which replay rebuilds, never a
  // checkpoint without data.
  Status DropPartition(int32_t partition);

  // nullopt when the partition has no checkpoint; kCorruption when it cannot be decoded.
  Result<std::optional<Checkpoint>> ReadCheckpoint(int32_t partition) const;
  // Partitions that have a checkpoint in meta, whether or not their column family exists.
  // An undecodable checkpoint fails the call, unless `corrupt` is given: then its partition
  // is listed there and left out of the map.
  Result<std::map<int32_t, Checkpoint>> ReadCheckpoints(std::vector<int32_t>* corrupt = nullptr) const;
  // The checkpoint's stored bytes (for inspection tools); nullopt when absent.
  Result<std::optional<std::string>> ReadRawCheckpoint(int32_t partition) const;

  // The Kafka topic the data comes from (kTopicKey); nullopt in a database that never
  // recorded one (written before it was kept). Put is synced.
  Result<std::optional<std::string>> ReadTopic() const;
  Status PutTopic(const std::string& topic);

  // Revocation records of partitions (see partition_meta.h). Put is synced.
  Result<std::map<int32_t, PartitionMeta>> ReadPartitionMetas() const;
  Status PutPartitionMeta(int32_t partition, const PartitionMeta& meta);
  Status PutPartitionMetas(const std::map<int32_t, PartitionMeta>& metas);  // one synced batch
  Status DeletePartitionMeta(int32_t partition);
  Status DeletePartitionMetas(const std::vector<int32_t>& partitions);  // one synced batch

  // Calls fn(key, value) for each row of the partition whose key starts with `prefix`,
  // in key order, until fn returns false.
  using RowFn = std::function<bool(std::string_view key, std::string_view value)>;
  Status ScanPartition(int32_t partition, std::string_view prefix, const RowFn& fn) const;

  // Writes the batch atomically (all column families, WAL on, not synced: a lost tail is
  // lost with its checkpoint and Kafka replays it).
  Status Write(WriteBatch& batch);

  // Full manual compaction of one partition (nullopt: all), through the TTL filter.
  Status Compact(std::optional<int32_t> partition = std::nullopt);
  // Flushes memtables to SST files (all column families).
  Status FlushMemtables();

  std::vector<CfStats> Stats() const;
  // Bytes held by the shared block cache (memtables charged to it included).
  uint64_t BlockCacheUsage() const;
  uint64_t TtlDropped() const;

  // Test hook (crash tests): called after a batch is built, right before it is written.
  void SetBeforeWriteHookForTest(std::function<void()> hook);

 private:
  friend class WriteBatch;
  struct Rep;
  explicit Db(std::unique_ptr<Rep> rep);
  std::unique_ptr<Rep> rep_;
};

// A set of row puts/deletes and checkpoint puts, applied atomically by Db::Write.
// Not thread-safe; the Db must outlive it.
class WriteBatch {
 public:
  explicit WriteBatch(Db& db);
  ~WriteBatch();
  WriteBatch(const WriteBatch&) = delete;
  WriteBatch& operator=(const WriteBatch&) = delete;

  // The partition's column family must exist (CreatePartition).
  void PutRow(int32_t partition, std::string_view key, std::string_view value);
  void DeleteRow(int32_t partition, std::string_view key);
  void PutCheckpoint(int32_t partition, const Checkpoint& cp);

  size_t Count() const;
  size_t ByteSize() const;
  // Empties the batch, keeping its buffer for the next one.
  void Clear();
  // Empties the batch and frees its buffer.
  void Release();

 private:
  friend class Db;
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace limits::storage
