#include "storage/db.h"

#include <rocksdb/db.h>
#include <rocksdb/metadata.h>
#include <rocksdb/write_batch.h>

#include <chrono>
#include <filesystem>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "common/log.h"
#include "storage/codec.h"
#include "storage/column_families.h"
#include "storage/db_options.h"
#include "storage/info_log.h"
#include "storage/rocks_status.h"

// GCC says -fsanitize=thread with __SANITIZE_THREAD__, clang with __has_feature.
#if defined(__SANITIZE_THREAD__)
#define LIMITS_TSAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LIMITS_TSAN_BUILD 1
#endif
#endif
#ifndef LIMITS_TSAN_BUILD
#define LIMITS_TSAN_BUILD 0
#endif

namespace limits::storage {

struct Db::Rep {
  DbOptions options;
  std::shared_ptr<TtlFilterStats> ttl_stats = std::make_shared<TtlFilterStats>();
  RocksOptions rocks;
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> others;  // "default"

  mutable std::shared_mutex mu;
  std::map<int32_t, rocksdb::ColumnFamilyHandle*> partitions;  // GUARDED_BY(mu)
  // Handles of dropped column families stay alive until Close, so a stale pointer held by a
  // racing batch is an error from RocksDB, never a use-after-free.
  std::vector<rocksdb::ColumnFamilyHandle*> dropped;  // GUARDED_BY(mu)

  std::mutex hook_mu;
  std::function<void()> before_write_hook;  // GUARDED_BY(hook_mu)

  // Every write goes through here. RocksDB groups concurrent writes: the first writer copies
  // the others' batches, handed over through its own atomics, which ThreadSanitizer cannot see
  // (Debian's RocksDB is not instrumented). TSAN builds serialise the writes so that it sees
  // the hand-over as the mutex it is (tests/tsan/README.md); others keep the grouping.
  rocksdb::Status Commit(const rocksdb::WriteOptions& wo, rocksdb::WriteBatch* wb) {
#if LIMITS_TSAN_BUILD
    std::lock_guard lock(tsan_write_mu);
#endif
    return db->Write(wo, wb);
  }
  rocksdb::Status Put(const rocksdb::WriteOptions& wo, rocksdb::ColumnFamilyHandle* cf, std::string_view key,
                      std::string_view value) {
    rocksdb::WriteBatch wb;
    rocksdb::Status s = wb.Put(cf, rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size()));
    return s.ok() ? Commit(wo, &wb) : s;
  }
#if LIMITS_TSAN_BUILD
  std::mutex tsan_write_mu;
#endif

  rocksdb::ColumnFamilyHandle* Handle(int32_t partition) const {
    std::shared_lock lock(mu);
    auto it = partitions.find(partition);
    return it == partitions.end() ? nullptr : it->second;
  }

  Status CheckFormatVersion();
};

struct WriteBatch::Rep {
  Db::Rep* db;
  rocksdb::WriteBatch wb;
  int32_t cached_partition = -1;
  rocksdb::ColumnFamilyHandle* cached_handle = nullptr;
  Status error;  // first problem building the batch, reported by Db::Write

  rocksdb::ColumnFamilyHandle* Handle(int32_t partition) {
    if (partition != cached_partition) {
      cached_handle = db->Handle(partition);
      cached_partition = partition;
    }
    if (cached_handle == nullptr && error.ok()) {
      error = Status::FailedPrecondition("write to " + PartitionCfName(partition) + ", which has no column family");
    }
    return cached_handle;
  }
};

Db::Db(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}

Db::~Db() {
  Status s = Close();
  if (!s.ok()) log::Error("storage", "close failed").Kv("error", s.ToString());
}

namespace {

// Past these, a failure to open beside a writer is reported (a writer deleting faster than a
// secondary opens is not something a wait fixes).
constexpr int kSecondaryOpenAttempts = 8;

// One attempt at opening: the column families on disk, then the database with all of them.
rocksdb::Status OpenRocks(const DbOptions& options, RocksOptions& rocks, rocksdb::DB** db,
                          std::vector<rocksdb::ColumnFamilyHandle*>* handles, Status* refusal) {
  std::vector<std::string> names;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(rocks.db, options.path, &names);
  if (!ls.ok()) {
    if (options.secondary) {
      // Beside a writer that switched its MANIFEST: the database is there, open it again.
      std::error_code ec;
      const bool exists = std::filesystem::exists(options.path + "/CURRENT", ec);
      if (exists && (ls.IsPathNotFound() || ls.IsTryAgain())) return ls;
      *refusal = Status::NotFound("no limitsd database at " + options.path + ": " + ls.ToString());
      return ls;
    }
    names = {rocksdb::kDefaultColumnFamilyName};  // a new database
  }
  if (std::find(names.begin(), names.end(), kMetaCf) == names.end()) {
    if (options.secondary) {
      *refusal = Status::Corruption(options.path + " has no \"meta\" column family");
      return rocksdb::Status::Corruption();
    }
    names.push_back(kMetaCf);
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    if (name == rocksdb::kDefaultColumnFamilyName || name == kMetaCf) {
      descriptors.emplace_back(name, rocks.meta_cf);
    } else if (ParsePartitionCfName(name)) {
      descriptors.emplace_back(name, rocks.partition_cf);
    } else {
      *refusal = Status::FailedPrecondition("open " + options.path + ": unknown column family \"" + name +
                                            "\" (not a limitsd database?)");
      return rocksdb::Status::InvalidArgument();
    }
  }

  if (options.secondary) {
    rocksdb::DBOptions secondary = rocks.db;
    secondary.max_open_files = -1;  // required: the primary may delete files the secondary reads
    secondary.create_if_missing = false;
    return rocksdb::DB::OpenAsSecondary(secondary, options.path, options.secondary_path, descriptors, handles, db);
  }
  // Our own info log: RocksDB's asserts after a failed write (a full disk) — see info_log.h.
  rocks.db.info_log = std::make_shared<InfoLog>(options.path, 16 << 20, rocksdb::InfoLogLevel::INFO_LEVEL);
  rocksdb::Options open_options(rocks.db, rocks.meta_cf);
  return rocksdb::DB::Open(open_options, options.path, descriptors, handles, db);
}

}  // namespace

Result<std::unique_ptr<Db>> Db::Open(const DbOptions& options) {
  if (!options.secondary) {
    std::error_code ec;
    std::filesystem::create_directories(options.path, ec);
    if (ec) return Status::IOError("create " + options.path + ": " + ec.message());
  }
  auto rep = std::make_unique<Rep>();
  rep->options = options;
  rep->rocks = MakeDbOptions(options, rep->ttl_stats);

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  Status refusal;
  rocksdb::Status s;
  // A secondary reads the files a running writer names, and the writer deletes a WAL after a
  // flush, a table after a compaction and its MANIFEST after a switch: one listed a moment ago
  // may be gone (PathNotFound, or TryAgain for the MANIFEST). Opening again reads the new set.
  for (int attempt = 1;; ++attempt) {
    handles.clear();
    s = OpenRocks(options, rep->rocks, &rep->db, &handles, &refusal);
    if (!refusal.ok()) return refusal;
    if (s.ok() && options.secondary) {
      // A WAL the writer deleted between the secondary's reading of the MANIFEST and of the
      // WALs is skipped (its flush is not in the MANIFEST it read): a hole. The flush was
      // recorded before the deletion, so reading the MANIFEST once more fills it, and the view
      // holds every write made before Open began.
      s = rep->db->TryCatchUpWithPrimary();
      if (!s.ok()) {
        for (rocksdb::ColumnFamilyHandle* h : handles) rep->db->DestroyColumnFamilyHandle(h);
        delete rep->db;
        rep->db = nullptr;
      }
    }
    if (s.ok() || !options.secondary || !(s.IsPathNotFound() || s.IsTryAgain()) ||
        attempt == kSecondaryOpenAttempts) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10 * attempt));
  }
  if (!s.ok()) return FromRocks(s).Prefixed("open " + options.path);
  for (rocksdb::ColumnFamilyHandle* h : handles) {
    if (h->GetName() == kMetaCf) rep->meta = h;
    else if (auto p = ParsePartitionCfName(h->GetName())) rep->partitions[*p] = h;
    else rep->others.push_back(h);
  }
  auto db = std::unique_ptr<Db>(new Db(std::move(rep)));
  RETURN_IF_ERROR(db->rep_->CheckFormatVersion().Prefixed("open " + options.path));
  return db;
}

Status Db::Rep::CheckFormatVersion() {
  std::string raw;
  rocksdb::Status s = db->Get(rocksdb::ReadOptions(), meta, kFormatVersionKey, &raw);
  if (s.IsNotFound()) {
    if (options.secondary) return Status::Corruption("meta has no format version");
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), meta));
    it->SeekToFirst();
    if (!partitions.empty() || it->Valid()) {
      return Status::Corruption("meta has data but no format version");
    }
    std::string v;
    PutFixed32(&v, kFormatVersion);
    rocksdb::WriteOptions sync;
    sync.sync = true;
    return FromRocks(Put(sync, meta, kFormatVersionKey, v));
  }
  if (!s.ok()) return FromRocks(s);
  if (raw.size() != 4) return Status::Corruption("format version of " + std::to_string(raw.size()) + " bytes");
  const uint32_t version = GetFixed32(raw.data());
  if (version != kFormatVersion) {
    return Status::FailedPrecondition("format version " + std::to_string(version) +
                                      " is not supported by this build (it reads version " +
                                      std::to_string(kFormatVersion) + ")");
  }
  return Status::OK();
}

Status Db::Close() {
  if (!rep_ || rep_->db == nullptr) return Status::OK();
  std::unique_lock lock(rep_->mu);
  for (auto& [p, h] : rep_->partitions) rep_->db->DestroyColumnFamilyHandle(h);
  for (auto* h : rep_->dropped) rep_->db->DestroyColumnFamilyHandle(h);
  for (auto* h : rep_->others) rep_->db->DestroyColumnFamilyHandle(h);
  rep_->db->DestroyColumnFamilyHandle(rep_->meta);
  rep_->partitions.clear();
  rep_->dropped.clear();
  rep_->others.clear();
  rocksdb::Status s = rep_->db->Close();
  delete rep_->db;
  rep_->db = nullptr;
  return FromRocks(s).Prefixed("close " + rep_->options.path);
}

const std::string& Db::path() const { return rep_->options.path; }
bool Db::secondary() const { return rep_->options.secondary; }

bool Db::IsLockedError(const Status& s) {
  return s.code() == StatusCode::kIOError && s.message().find("lock") != std::string::npos;
}

std::vector<int32_t> Db::ListPartitions() const {
  std::shared_lock lock(rep_->mu);
  std::vector<int32_t> out;
  for (const auto& [p, h] : rep_->partitions) out.push_back(p);
  return out;
}

bool Db::HasPartition(int32_t partition) const { return rep_->Handle(partition) != nullptr; }

Status Db::CreatePartition(int32_t partition) { return CreatePartitions({partition}); }

Status Db::CreatePartitions(const std::vector<int32_t>& partitions) {
  std::unique_lock lock(rep_->mu);
  std::vector<int32_t> missing;
  std::vector<std::string> names;
  for (int32_t p : partitions) {
    if (p < 0 || p > kMaxPartition) return Status::InvalidArgument("partition " + std::to_string(p) + " out of range");
    if (rep_->partitions.count(p) || std::find(missing.begin(), missing.end(), p) != missing.end()) continue;
    missing.push_back(p);
    names.push_back(PartitionCfName(p));
  }
  if (missing.empty()) return Status::OK();
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::Status s = rep_->db->CreateColumnFamilies(rep_->rocks.partition_cf, names, &handles);
  for (size_t i = 0; i < handles.size(); ++i) rep_->partitions[missing[i]] = handles[i];
  return FromRocks(s).Prefixed("create " + names.front() + (names.size() > 1 ? " and others" : ""));
}

Status Db::DropPartition(int32_t partition) {
  std::unique_lock lock(rep_->mu);
  const std::string name = PartitionCfName(partition);
  // Checkpoint first, synced: should the drop below not happen, the data is orphaned
  // (rebuilt by replay), never described by a checkpoint it no longer matches.
  rocksdb::WriteBatch wb;
  wb.Delete(rep_->meta, CheckpointKey(partition));
  wb.Delete(rep_->meta, PartitionMetaKey(partition));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  RETURN_IF_ERROR(FromRocks(rep_->Commit(sync, &wb)).Prefixed("drop " + name + ": delete checkpoint"));
  auto it = rep_->partitions.find(partition);
  if (it == rep_->partitions.end()) return Status::OK();
  RETURN_IF_ERROR(FromRocks(rep_->db->DropColumnFamily(it->second)).Prefixed("drop " + name));
  rep_->dropped.push_back(it->second);
  rep_->partitions.erase(it);
  return Status::OK();
}

Result<std::optional<std::string>> Db::ReadRawCheckpoint(int32_t partition) const {
  std::string raw;
  rocksdb::Status s = rep_->db->Get(rocksdb::ReadOptions(), rep_->meta, CheckpointKey(partition), &raw);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(s).Prefixed("checkpoint of " + PartitionCfName(partition));
  return std::optional<std::string>(std::move(raw));
}

Result<std::optional<Checkpoint>> Db::ReadCheckpoint(int32_t partition) const {
  ASSIGN_OR_RETURN(std::optional<std::string> raw, ReadRawCheckpoint(partition));
  if (!raw) return std::optional<Checkpoint>();
  Result<Checkpoint> cp = DecodeCheckpoint(*raw);
  if (!cp.ok()) return cp.status().Prefixed("checkpoint of " + PartitionCfName(partition));
  return std::optional<Checkpoint>(*cp);
}

namespace {

// Calls fn(partition, value) for each meta key "<prefix><u32 BE partition>".
template <typename Fn>
Status ScanMetaKeys(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* meta, std::string_view prefix, Fn fn) {
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), meta));
  const rocksdb::Slice p(prefix.data(), prefix.size());
  for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next()) {
    int32_t partition = 0;
    if (!ParseMetaKey(std::string_view(it->key().data(), it->key().size()), prefix, &partition)) {
      return Status::Corruption("meta: malformed key under \"" + std::string(prefix) + "\"");
    }
    RETURN_IF_ERROR(fn(partition, std::string_view(it->value().data(), it->value().size())));
  }
  return FromRocks(it->status());
}

}  // namespace

Result<std::map<int32_t, Checkpoint>> Db::ReadCheckpoints(std::vector<int32_t>* corrupt) const {
  std::map<int32_t, Checkpoint> out;
  RETURN_IF_ERROR(ScanMetaKeys(rep_->db, rep_->meta, kCheckpointKeyPrefix, [&](int32_t p, std::string_view v) {
    Result<Checkpoint> cp = DecodeCheckpoint(v);
    if (!cp.ok() && corrupt != nullptr) {
      corrupt->push_back(p);
      return Status::OK();
    }
    if (!cp.ok()) return cp.status().Prefixed("checkpoint of " + PartitionCfName(p));
    out[p] = *cp;
    return Status::OK();
  }));
  return out;
}

Result<std::optional<std::string>> Db::ReadTopic() const {
  std::string raw;
  rocksdb::Status s = rep_->db->Get(rocksdb::ReadOptions(), rep_->meta, kTopicKey, &raw);
  if (s.IsNotFound()) return std::optional<std::string>();
  if (!s.ok()) return FromRocks(s).Prefixed("read the topic");
  return std::optional<std::string>(std::move(raw));
}

Status Db::PutTopic(const std::string& topic) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(rep_->Put(sync, rep_->meta, kTopicKey, topic)).Prefixed("write the topic");
}

Result<std::map<int32_t, PartitionMeta>> Db::ReadPartitionMetas() const {
  std::map<int32_t, PartitionMeta> out;
  RETURN_IF_ERROR(ScanMetaKeys(rep_->db, rep_->meta, kPartitionMetaKeyPrefix, [&](int32_t p, std::string_view v) {
    Result<PartitionMeta> m = DecodePartitionMeta(v);
    if (!m.ok()) return m.status().Prefixed("partition meta of " + PartitionCfName(p));
    out[p] = *m;
    return Status::OK();
  }));
  return out;
}

Status Db::PutPartitionMeta(int32_t partition, const PartitionMeta& meta) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(rep_->Put(sync, rep_->meta, PartitionMetaKey(partition), EncodePartitionMeta(meta)))
      .Prefixed("partition meta of " + PartitionCfName(partition));
}

Status Db::PutPartitionMetas(const std::map<int32_t, PartitionMeta>& metas) {
  rocksdb::WriteBatch wb;
  for (const auto& [p, m] : metas) wb.Put(rep_->meta, PartitionMetaKey(p), EncodePartitionMeta(m));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(rep_->Commit(sync, &wb)).Prefixed("partition metas");
}

Status Db::DeletePartitionMeta(int32_t partition) { return DeletePartitionMetas({partition}); }

Status Db::DeletePartitionMetas(const std::vector<int32_t>& partitions) {
  rocksdb::WriteBatch wb;
  for (int32_t p : partitions) wb.Delete(rep_->meta, PartitionMetaKey(p));
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(rep_->Commit(sync, &wb)).Prefixed("delete partition metas");
}

Status Db::ScanPartition(int32_t partition, std::string_view prefix, const RowFn& fn) const {
  std::shared_lock lock(rep_->mu);
  auto h = rep_->partitions.find(partition);
  if (h == rep_->partitions.end()) return Status::NotFound(PartitionCfName(partition) + " does not exist");
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;  // full scans would evict what is hot
  ro.readahead_size = 2 << 20;
  std::unique_ptr<rocksdb::Iterator> it(rep_->db->NewIterator(ro, h->second));
  for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid(); it->Next()) {
    const rocksdb::Slice k = it->key();
    if (!k.starts_with(rocksdb::Slice(prefix.data(), prefix.size()))) break;
    if (!fn(std::string_view(k.data(), k.size()), std::string_view(it->value().data(), it->value().size()))) break;
  }
  return FromRocks(it->status()).Prefixed("scan " + PartitionCfName(partition));
}

Status Db::Write(WriteBatch& batch) {
  RETURN_IF_ERROR(batch.rep_->error);
  {
    std::lock_guard lock(rep_->hook_mu);
    if (rep_->before_write_hook) rep_->before_write_hook();
  }
  rocksdb::WriteOptions wo;
  wo.sync = false;
  return FromRocks(rep_->Commit(wo, &batch.rep_->wb)).Prefixed("write batch");
}

Status Db::Compact(std::optional<int32_t> partition) {
  rocksdb::CompactRangeOptions co;
  co.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
  std::vector<std::pair<int32_t, rocksdb::ColumnFamilyHandle*>> targets;
  {
    std::shared_lock lock(rep_->mu);
    for (const auto& [p, h] : rep_->partitions) {
      if (!partition || *partition == p) targets.emplace_back(p, h);
    }
  }
  if (partition && targets.empty()) return Status::NotFound(PartitionCfName(*partition) + " does not exist");
  for (const auto& [p, h] : targets) {
    RETURN_IF_ERROR(FromRocks(rep_->db->CompactRange(co, h, nullptr, nullptr)).Prefixed("compact " + PartitionCfName(p)));
  }
  return Status::OK();
}

Status Db::FlushMemtables() {
  std::shared_lock lock(rep_->mu);
  std::vector<rocksdb::ColumnFamilyHandle*> all{rep_->meta};
  for (const auto& [p, h] : rep_->partitions) all.push_back(h);
  return FromRocks(rep_->db->Flush(rocksdb::FlushOptions(), all)).Prefixed("flush");
}

std::vector<CfStats> Db::Stats() const {
  std::shared_lock lock(rep_->mu);
  std::vector<rocksdb::ColumnFamilyHandle*> all{rep_->meta};
  for (const auto& [p, h] : rep_->partitions) all.push_back(h);
  std::vector<CfStats> out;
  for (rocksdb::ColumnFamilyHandle* h : all) {
    CfStats s;
    s.name = h->GetName();
    rep_->db->GetIntProperty(h, rocksdb::DB::Properties::kEstimateNumKeys, &s.estimated_keys);
    rep_->db->GetIntProperty(h, rocksdb::DB::Properties::kTotalSstFilesSize, &s.sst_bytes);
    rep_->db->GetIntProperty(h, rocksdb::DB::Properties::kCurSizeAllMemTables, &s.memtable_bytes);
    rep_->db->GetIntProperty(h, rocksdb::DB::Properties::kEstimatePendingCompactionBytes, &s.pending_compaction_bytes);
    rocksdb::ColumnFamilyMetaData meta;
    rep_->db->GetColumnFamilyMetaData(h, &meta);
    s.sst_files = meta.file_count;
    for (const auto& level : meta.levels) s.files_per_level.push_back(static_cast<int>(level.files.size()));
    out.push_back(std::move(s));
  }
  return out;
}

uint64_t Db::BlockCacheUsage() const { return rep_->rocks.block_cache ? rep_->rocks.block_cache->GetUsage() : 0; }

uint64_t Db::TtlDropped() const { return rep_->ttl_stats->dropped.load(std::memory_order_relaxed); }

void Db::SetBeforeWriteHookForTest(std::function<void()> hook) {
  std::lock_guard lock(rep_->hook_mu);
  rep_->before_write_hook = std::move(hook);
}

WriteBatch::WriteBatch(Db& db) : rep_(std::make_unique<Rep>()) { rep_->db = db.rep_.get(); }
WriteBatch::~WriteBatch() = default;

void WriteBatch::PutRow(int32_t partition, std::string_view key, std::string_view value) {
  if (auto* h = rep_->Handle(partition)) {
    rep_->wb.Put(h, rocksdb::Slice(key.data(), key.size()), rocksdb::Slice(value.data(), value.size()));
  }
}

void WriteBatch::DeleteRow(int32_t partition, std::string_view key) {
  if (auto* h = rep_->Handle(partition)) rep_->wb.Delete(h, rocksdb::Slice(key.data(), key.size()));
}

void WriteBatch::PutCheckpoint(int32_t partition, const Checkpoint& cp) {
  rep_->wb.Put(rep_->db->meta, CheckpointKey(partition), EncodeCheckpoint(cp));
}

size_t WriteBatch::Count() const { return static_cast<size_t>(rep_->wb.Count()); }
size_t WriteBatch::ByteSize() const { return rep_->wb.GetDataSize(); }

void WriteBatch::Release() {
  rep_->wb = rocksdb::WriteBatch();
  Clear();
}

void WriteBatch::Clear() {
  rep_->wb.Clear();
  rep_->error = Status::OK();
  rep_->cached_partition = -1;
  rep_->cached_handle = nullptr;
}

}  // namespace limits::storage
