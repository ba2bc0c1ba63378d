#include "kafka/pending_records.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace limits::kafka {
namespace {

RecordView View(std::string_view tenant, std::string_view policy, uint64_t hash) {
  RecordView r;
  r.tenant = tenant;
  r.stream_hash = hash;
  r.total_size = hash * 10;
  r.policy = policy;
  return r;
}

TEST(PendingRecordsTest, RecordsKeepTheirFieldsAfterTheSourceIsGoneAndAcrossChunks) {
  PendingRecords pending;
  // Enough names to fill several chunks, each decoded into a buffer that is then overwritten,
  // as librdkafka's message is destroyed once handled.
  const int n = 3 * static_cast<int>(PendingRecords::kChunkBytes) / 20;
  std::string tenant, policy;
  for (int i = 0; i < n; ++i) {
    tenant = "tenant-" + std::to_string(i);
    policy = i % 3 == 0 ? "" : "policy-" + std::to_string(i % 7);
    pending.Add(View(tenant, policy, static_cast<uint64_t>(i)), 1000 + i, 50 + i);
    tenant.assign(tenant.size(), 'x');
    policy.assign(policy.size(), 'y');
  }
  ASSERT_EQ(pending.size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const Record& r = pending.records()[static_cast<size_t>(i)];
    EXPECT_EQ(r.tenant, "tenant-" + std::to_string(i));
    EXPECT_EQ(r.policy, i % 3 == 0 ? "" : "policy-" + std::to_string(i % 7));
    EXPECT_EQ(r.stream_hash, static_cast<uint64_t>(i));
    EXPECT_EQ(r.bytes, static_cast<uint64_t>(i) * 10);
    EXPECT_EQ(r.timestamp_ms, 1000 + i);
    EXPECT_EQ(r.offset, 50 + i);
  }
}

TEST(PendingRecordsTest, ANameLongerThanAChunkIsKept) {
  PendingRecords pending;
  const std::string long_tenant(PendingRecords::kChunkBytes + 100, 't');
  pending.Add(View("a", "p", 1), 1, 1);
  pending.Add(View(long_tenant, "p", 2), 2, 2);
  pending.Add(View("b", "q", 3), 3, 3);
  ASSERT_EQ(pending.size(), 3u);
  EXPECT_EQ(pending.records()[0].tenant, "a");
  EXPECT_EQ(pending.records()[1].tenant, long_tenant);
  EXPECT_EQ(pending.records()[2].tenant, "b");
  EXPECT_EQ(pending.records()[2].policy, "q");
}

TEST(PendingRecordsTest, ClearEmptiesAndTheBufferIsReused) {
  PendingRecords pending;
  for (int round = 0; round < 3; ++round) {
    // A burst far above what Clear keeps, then a few records: each round reads back its own.
    const size_t count = round == 1 ? 3 : 20 * PendingRecords::kKeptRecords;
    const std::string tenant = "tenant-round-" + std::to_string(round);
    for (size_t i = 0; i < count; ++i) pending.Add(View(tenant, "p", i), 0, static_cast<int64_t>(i));
    ASSERT_EQ(pending.size(), count);
    EXPECT_EQ(pending.records().front().tenant, tenant);
    EXPECT_EQ(pending.records().back().tenant, tenant);
    EXPECT_EQ(pending.records().back().offset, static_cast<int64_t>(count - 1));
    pending.Clear();
    EXPECT_TRUE(pending.empty());
  }
}

}  // namespace
}  // namespace limits::kafka
