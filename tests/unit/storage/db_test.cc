#include "storage/db.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "storage/codec.h"
#include "testing/fake_clock.h"
#include "testing/temp_dir.h"

namespace limits::storage {
namespace {

using testing::FakeClock;
using testing::TempDir;

class DbTest : public ::testing::Test {
 protected:
  std::unique_ptr<Db> Open() {
    DbOptions o;
    o.path = dir_.Sub("db");
    o.block_cache_bytes = 8 << 20;
    o.write_buffer_bytes = 8 << 20;
    o.active_window_s = 3600;
    o.clock = &clock_;
    Result<std::unique_ptr<Db>> db = Db::Open(o);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    return db.ok() ? std::move(*db) : nullptr;
  }

  static std::string Row(uint32_t last_seen_s) {
    return EncodeStreamRow(StreamRow{.policy = "", .last_seen_s = last_seen_s, .last_produced_s = 0, .bucket_s = 60,
                                     .newest_bucket_s = 0, .rate_bytes = {}});
  }

  static std::vector<std::string> Keys(Db& db, int32_t p, std::string_view prefix = "") {
    std::vector<std::string> keys;
    Status s = db.ScanPartition(p, prefix, [&](std::string_view k, std::string_view) {
      keys.emplace_back(k);
      return true;
    });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return keys;
  }

  TempDir dir_;
  FakeClock clock_;
};

TEST_F(DbTest, NewDatabaseHasNoPartitionsAndReopens) {
  {
    auto db = Open();
    ASSERT_TRUE(db);
    EXPECT_TRUE(db->ListPartitions().empty());
    EXPECT_TRUE(db->ReadCheckpoints()->empty());
  }
  auto db = Open();
  ASSERT_TRUE(db);
  EXPECT_TRUE(db->ListPartitions().empty());
}

TEST_F(DbTest, PartitionsAreCreatedOnDemandAndListedOnOpen) {
  {
    auto db = Open();
    ASSERT_TRUE(db->CreatePartition(17).ok());
    ASSERT_TRUE(db->CreatePartition(3).ok());
    ASSERT_TRUE(db->CreatePartition(17).ok());  // idempotent
    EXPECT_EQ(db->ListPartitions(), (std::vector<int32_t>{3, 17}));
    EXPECT_TRUE(db->CreatePartition(-1).IsInvalidArgument());
  }
  auto db = Open();
  EXPECT_EQ(db->ListPartitions(), (std::vector<int32_t>{3, 17}));
  EXPECT_TRUE(db->HasPartition(17));
  EXPECT_FALSE(db->HasPartition(4));
}

TEST_F(DbTest, RowsAndCheckpointWriteAtomicallyAndSurviveReopen) {
  {
    auto db = Open();
    ASSERT_TRUE(db->CreatePartition(1).ok());
    WriteBatch batch(*db);
    batch.PutRow(1, EncodeStreamKey("t", 5), Row(100));
    batch.PutRow(1, EncodeStreamKey("t", 6), Row(100));
    batch.PutCheckpoint(1, {.next_offset = 42, .newest_record_ms = 7});
    EXPECT_EQ(batch.Count(), 3u);
    ASSERT_TRUE(db->Write(batch).ok());
  }
  auto db = Open();
  EXPECT_EQ(Keys(*db, 1).size(), 2u);
  auto cp = db->ReadCheckpoint(1);
  ASSERT_TRUE(cp.ok());
  ASSERT_TRUE(cp->has_value());
  EXPECT_EQ((*cp)->next_offset, 42);
  EXPECT_EQ((*cp)->newest_record_ms, 7);
  EXPECT_FALSE(db->ReadCheckpoint(2)->has_value());
  EXPECT_EQ(db->ReadCheckpoints()->size(), 1u);
}

TEST_F(DbTest, WritingAPartitionWithoutColumnFamilyFailsWholeBatch) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(1).ok());
  WriteBatch batch(*db);
  batch.PutRow(1, EncodeStreamKey("t", 1), Row(1));
  batch.PutRow(2, EncodeStreamKey("t", 2), Row(1));
  batch.PutCheckpoint(1, {.next_offset = 1, .newest_record_ms = 0});
  EXPECT_EQ(db->Write(batch).code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Keys(*db, 1).empty());
  EXPECT_FALSE(db->ReadCheckpoint(1)->has_value());
}

TEST_F(DbTest, ScanByTenantPrefix) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(0).ok());
  WriteBatch batch(*db);
  for (uint64_t h : {3, 1, 2}) batch.PutRow(0, EncodeStreamKey("a", h), Row(1));
  for (uint64_t h : {9, 8}) batch.PutRow(0, EncodeStreamKey("ab", h), Row(1));
  ASSERT_TRUE(db->Write(batch).ok());
  EXPECT_EQ(Keys(*db, 0, TenantPrefix("a")),
            (std::vector<std::string>{EncodeStreamKey("a", 1), EncodeStreamKey("a", 2), EncodeStreamKey("a", 3)}));
  EXPECT_EQ(Keys(*db, 0, TenantPrefix("ab")).size(), 2u);
  EXPECT_EQ(Keys(*db, 0).size(), 5u);
  EXPECT_TRUE(db->ScanPartition(5, "", [](auto, auto) { return true; }).IsNotFound());
}

TEST_F(DbTest, DropPartitionRemovesCheckpointAndData) {
  {
    auto db = Open();
    ASSERT_TRUE(db->CreatePartition(4).ok());
    WriteBatch batch(*db);
    batch.PutRow(4, EncodeStreamKey("t", 1), Row(1));
    batch.PutCheckpoint(4, {.next_offset = 10, .newest_record_ms = 0});
    ASSERT_TRUE(db->Write(batch).ok());
    ASSERT_TRUE(db->DropPartition(4).ok());
    EXPECT_FALSE(db->HasPartition(4));
    EXPECT_FALSE(db->ReadCheckpoint(4)->has_value());
    ASSERT_TRUE(db->DropPartition(4).ok());  // nothing left: still fine
  }
  auto db = Open();
  EXPECT_TRUE(db->ListPartitions().empty());
  EXPECT_TRUE(db->ReadCheckpoints()->empty());
  // Re-created, it starts empty.
  ASSERT_TRUE(db->CreatePartition(4).ok());
  EXPECT_TRUE(Keys(*db, 4).empty());
}

TEST_F(DbTest, CompactionDropsRowsOutsideTheActiveWindow) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(0).ok());
  const auto now_s = static_cast<uint32_t>(clock_.NowSeconds());
  WriteBatch batch(*db);
  batch.PutRow(0, EncodeStreamKey("t", 1), Row(now_s - 3601));  // expired
  batch.PutRow(0, EncodeStreamKey("t", 2), Row(now_s - 3600));  // exactly at the cutoff: active
  batch.PutRow(0, EncodeStreamKey("t", 3), Row(now_s));
  batch.PutRow(0, EncodeStreamKey("t", 4), "undecodable");  // kept and counted, never guessed at
  ASSERT_TRUE(db->Write(batch).ok());
  ASSERT_TRUE(db->Compact(0).ok());
  EXPECT_EQ(Keys(*db, 0), (std::vector<std::string>{EncodeStreamKey("t", 2), EncodeStreamKey("t", 3),
                                                    EncodeStreamKey("t", 4)}));
  EXPECT_EQ(db->TtlDropped(), 1u);
  clock_.Advance(std::chrono::seconds(1));  // now t/2 is out too
  ASSERT_TRUE(db->Compact().ok());
  EXPECT_EQ(Keys(*db, 0).size(), 2u);
  EXPECT_TRUE(db->Compact(9).IsNotFound());
}

TEST_F(DbTest, StatsCoverEveryColumnFamily) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(2).ok());
  WriteBatch batch(*db);
  for (uint64_t h = 0; h < 100; ++h) batch.PutRow(2, EncodeStreamKey("t", h), Row(static_cast<uint32_t>(clock_.NowSeconds())));
  ASSERT_TRUE(db->Write(batch).ok());
  ASSERT_TRUE(db->FlushMemtables().ok());
  std::vector<CfStats> stats = db->Stats();
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "meta");
  EXPECT_EQ(stats[1].name, "p00002");
  EXPECT_EQ(stats[1].estimated_keys, 100u);
  EXPECT_EQ(stats[1].sst_files, 1u);
  EXPECT_GT(stats[1].sst_bytes, 0u);
}

TEST_F(DbTest, SecondWriterIsRefusedWhileTheFirstHoldsTheLock) {
  auto db = Open();
  DbOptions o;
  o.path = dir_.Sub("db");
  Result<std::unique_ptr<Db>> second = Db::Open(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kIOError);
  EXPECT_TRUE(Db::IsLockedError(second.status()));
  EXPECT_NE(second.status().message().find("lock"), std::string::npos) << second.status().message();
}

// Writes raw bytes into a closed database with plain RocksDB, as another program would.
void PutRaw(const std::string& path, const std::string& cf_name, const std::string& key, const std::string& value) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  rocksdb::DBOptions o;
  o.create_missing_column_families = true;
  if (std::find(names.begin(), names.end(), cf_name) == names.end()) cfs.emplace_back(cf_name, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, path, cfs, &handles, &raw).ok());
  for (auto* h : handles) {
    if (h->GetName() == cf_name) {
      ASSERT_TRUE(raw->Put(rocksdb::WriteOptions(), h, key, value).ok());
    }
  }
  for (auto* h : handles) raw->DestroyColumnFamilyHandle(h);
  delete raw;
}

TEST_F(DbTest, UnknownFormatVersionIsRefused) {
  { auto db = Open(); }
  std::string v2;
  PutFixed32(&v2, kFormatVersion + 1);
  PutRaw(dir_.Sub("db"), "meta", kFormatVersionKey, v2);
  DbOptions o;
  o.path = dir_.Sub("db");
  Result<std::unique_ptr<Db>> db = Db::Open(o);
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(db.status().message().find("format version 2 is not supported"), std::string::npos)
      << db.status().message();
}

TEST_F(DbTest, ForeignDatabaseIsRefused) {
  { auto db = Open(); }
  PutRaw(dir_.Sub("db"), "users", "k", "v");
  DbOptions o;
  o.path = dir_.Sub("db");
  Result<std::unique_ptr<Db>> db = Db::Open(o);
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("unknown column family \"users\""), std::string::npos)
      << db.status().message();
}

TEST_F(DbTest, PartitionMetaIsStoredAndDroppedWithThePartition) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(3).ok());
  ASSERT_TRUE(db->PutPartitionMeta(3, {.revoked_at_ms = 1000, .evict_after_ms = 61000}).ok());
  ASSERT_TRUE(db->PutPartitionMeta(9, {.revoked_at_ms = 5, .evict_after_ms = 6}).ok());
  auto metas = db->ReadPartitionMetas();
  ASSERT_TRUE(metas.ok());
  EXPECT_EQ(metas->size(), 2u);
  EXPECT_EQ(metas->at(3).evict_after_ms, 61000);
  ASSERT_TRUE(db->DeletePartitionMeta(9).ok());
  ASSERT_TRUE(db->DropPartition(3).ok());
  EXPECT_TRUE(db->ReadPartitionMetas()->empty());
}

TEST_F(DbTest, TheTopicIsRecordedAndSurvivesReopen) {
  {
    auto db = Open();
    ASSERT_TRUE(db);
    Result<std::optional<std::string>> none = db->ReadTopic();
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE(db->PutTopic("ingest-limits-metadata").ok());
    ASSERT_TRUE(db->CreatePartition(2).ok());
    ASSERT_TRUE(db->DropPartition(2).ok());  // partitions come and go; the topic stays
  }
  auto db = Open();
  ASSERT_TRUE(db);
  EXPECT_EQ(db->ReadTopic()->value_or(""), "ingest-limits-metadata");
  EXPECT_TRUE(db->ReadCheckpoints()->empty());  // not mistaken for a checkpoint
  EXPECT_TRUE(db->ReadPartitionMetas()->empty());
}

TEST_F(DbTest, SecondaryReadsBesideThePrimaryAndCannotWrite) {
  auto primary = Open();
  ASSERT_TRUE(primary->CreatePartition(1).ok());
  WriteBatch batch(*primary);
  batch.PutRow(1, EncodeStreamKey("t", 1), Row(1));
  batch.PutCheckpoint(1, {.next_offset = 3, .newest_record_ms = 0});
  ASSERT_TRUE(primary->Write(batch).ok());

  TempDir scratch;
  DbOptions o;
  o.path = dir_.Sub("db");
  o.secondary = true;
  o.secondary_path = scratch.path();
  auto secondary = Db::Open(o);
  ASSERT_TRUE(secondary.ok()) << secondary.status().ToString();
  EXPECT_TRUE((*secondary)->secondary());
  EXPECT_EQ((*secondary)->ListPartitions(), std::vector<int32_t>{1});
  EXPECT_EQ(Keys(**secondary, 1).size(), 1u);  // unflushed: read from the primary's WAL
  EXPECT_EQ((*(*secondary)->ReadCheckpoint(1))->next_offset, 3);
  WriteBatch w(**secondary);
  w.PutRow(1, EncodeStreamKey("t", 2), Row(1));
  EXPECT_FALSE((*secondary)->Write(w).ok());

  o.path = dir_.Sub("missing");
  EXPECT_TRUE(Db::Open(o).status().IsNotFound());
}

// The writer deletes a WAL after each flush and tables after each compaction; a secondary
// that listed one a moment before opens again rather than failing (limitsctl beside a node).
TEST_F(DbTest, SecondaryOpensBesideAWriterThatFlushesAndCompacts) {
  auto primary = Open();
  ASSERT_TRUE(primary->CreatePartition(1).ok());
  std::atomic<bool> stop{false};
  std::atomic<int64_t> written{0};
  std::thread writer([&] {
    // Bounded: each secondary reads the whole MANIFEST, which grows with every flush.
    for (int64_t round = 1; round <= 150 && !stop.load(); ++round) {
      WriteBatch batch(*primary);
      for (uint64_t i = 0; i < 50; ++i) batch.PutRow(1, EncodeStreamKey("t", round * 50 + i), Row(1));
      batch.PutCheckpoint(1, {.next_offset = round, .newest_record_ms = 0});
      ASSERT_TRUE(primary->Write(batch).ok());
      written.store(round);
      ASSERT_TRUE(primary->FlushMemtables().ok());
      if (round % 4 == 0) {
        ASSERT_TRUE(primary->Compact().ok());
      }
    }
  });
  struct Join {
    std::atomic<bool>& stop;
    std::thread& t;
    ~Join() {
      stop.store(true);
      t.join();
    }
  } join{stop, writer};
  TempDir scratch;
  DbOptions o;
  o.path = dir_.Sub("db");
  o.secondary = true;
  int64_t seen = 0;
  for (int i = 0; i < 12; ++i) {
    o.secondary_path = scratch.Sub(std::to_string(i));
    std::filesystem::create_directories(o.secondary_path);
    const int64_t before = written.load();
    auto secondary = Db::Open(o);
    ASSERT_TRUE(secondary.ok()) << "open " << i << ": " << secondary.status().ToString();
    Result<std::optional<Checkpoint>> cp = (*secondary)->ReadCheckpoint(1);
    ASSERT_TRUE(cp.ok() && cp->has_value()) << cp.status().ToString();
    EXPECT_GE((*cp)->next_offset, std::max(before, seen));  // everything written before the open
    seen = (*cp)->next_offset;
  }
}

TEST_F(DbTest, BeforeWriteHookRunsBetweenBuildAndWrite) {
  auto db = Open();
  ASSERT_TRUE(db->CreatePartition(0).ok());
  int calls = 0;
  db->SetBeforeWriteHookForTest([&] {
    ++calls;
    EXPECT_TRUE(Keys(*db, 0).empty());  // not written yet
  });
  WriteBatch batch(*db);
  batch.PutRow(0, EncodeStreamKey("t", 1), Row(1));
  ASSERT_TRUE(db->Write(batch).ok());
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(Keys(*db, 0).size(), 1u);
}

}  // namespace
}  // namespace limits::storage
