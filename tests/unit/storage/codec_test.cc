#include "storage/codec.h"

#include <gtest/gtest.h>

#include <random>

#include "storage/checkpoint.h"
#include "storage/column_families.h"
#include "storage/partition_meta.h"

namespace limits::storage {
namespace {

TEST(CodecTest, StreamKeyRoundTrips) {
  for (const std::string& tenant : std::vector<std::string>{"t", "tenant-a", std::string(255, 'x')}) {
    for (uint64_t hash : {uint64_t{0}, uint64_t{1}, uint64_t{0x0123456789abcdef}, UINT64_MAX}) {
      std::string key = EncodeStreamKey(tenant, hash);
      EXPECT_EQ(key.size(), 1 + tenant.size() + 8);
      std::string_view t;
      uint64_t h = 0;
      ASSERT_TRUE(DecodeStreamKey(key, &t, &h));
      EXPECT_EQ(t, tenant);
      EXPECT_EQ(h, hash);
      EXPECT_EQ(key.rfind(TenantPrefix(tenant), 0), 0u);
    }
  }
}

TEST(CodecTest, KeysOfOneTenantSortTogetherByHash) {
  // Big-endian hashes sort numerically, and no tenant's prefix is a prefix of another's key
  // range, so a tenant is exactly one prefix scan.
  std::vector<std::string> keys = {EncodeStreamKey("ab", 2), EncodeStreamKey("a", UINT64_MAX), EncodeStreamKey("ab", 1),
                                   EncodeStreamKey("a", 0x100), EncodeStreamKey("a", 0xff)};
  std::sort(keys.begin(), keys.end());
  std::vector<std::pair<std::string, uint64_t>> decoded;
  for (const auto& k : keys) {
    std::string_view t;
    uint64_t h;
    ASSERT_TRUE(DecodeStreamKey(k, &t, &h));
    decoded.emplace_back(std::string(t), h);
  }
  EXPECT_EQ(decoded, (std::vector<std::pair<std::string, uint64_t>>{
                         {"a", 0xff}, {"a", 0x100}, {"a", UINT64_MAX}, {"ab", 1}, {"ab", 2}}));
  EXPECT_NE(EncodeStreamKey("ab", 1).rfind(TenantPrefix("a"), 0), 0u);
}

TEST(CodecTest, MalformedKeysAreRejected) {
  std::string_view t;
  uint64_t h;
  EXPECT_FALSE(DecodeStreamKey("", &t, &h));
  EXPECT_FALSE(DecodeStreamKey(std::string("\x00", 1) + std::string(8, 'x'), &t, &h));  // empty tenant
  std::string key = EncodeStreamKey("tenant", 5);
  EXPECT_FALSE(DecodeStreamKey(std::string_view(key).substr(0, key.size() - 1), &t, &h));
  EXPECT_FALSE(DecodeStreamKey(key + "x", &t, &h));
}

TEST(CodecTest, StreamRowRoundTrips) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 500; ++i) {
    StreamRow row;
    row.policy = i % 3 == 0 ? "" : std::string(rng() % 20 + 1, static_cast<char>('a' + i % 26));
    row.last_seen_s = static_cast<uint32_t>(rng());
    row.last_produced_s = static_cast<uint32_t>(rng());
    row.bucket_s = 60;
    const size_t n = rng() % 6;
    for (size_t b = 0; b < n; ++b) row.rate_bytes.push_back(b + 1 == n ? rng() | 1 : rng() % 5);
    row.newest_bucket_s = n == 0 ? 0 : static_cast<uint32_t>(rng());
    std::string value = EncodeStreamRow(row);
    StreamRow back;
    ASSERT_TRUE(DecodeStreamRow(value, &back).ok());
    EXPECT_EQ(back, row);
    EXPECT_EQ(PeekLastSeen(value), row.last_seen_s);
  }
}

TEST(CodecTest, TrailingZeroBucketsAreNotStored) {
  StreamRow row{.policy = "p", .last_seen_s = 10, .last_produced_s = 0, .bucket_s = 60, .newest_bucket_s = 600,
                .rate_bytes = {5, 0, 0}};
  StreamRow back;
  ASSERT_TRUE(DecodeStreamRow(EncodeStreamRow(row), &back).ok());
  EXPECT_EQ(back.rate_bytes, std::vector<uint64_t>{5});
  row.rate_bytes = {0, 0};
  ASSERT_TRUE(DecodeStreamRow(EncodeStreamRow(row), &back).ok());
  EXPECT_TRUE(back.rate_bytes.empty());
  EXPECT_EQ(back.newest_bucket_s, 0u);
}

TEST(CodecTest, CorruptRowsAreReportedNotTrusted) {
  StreamRow row{.policy = "gold", .last_seen_s = 1, .last_produced_s = 2, .bucket_s = 60, .newest_bucket_s = 120,
                .rate_bytes = {7, 8}};
  const std::string good = EncodeStreamRow(row);
  StreamRow out;
  for (size_t len = 0; len < good.size(); ++len) {
    EXPECT_TRUE(DecodeStreamRow(good.substr(0, len), &out).IsCorruption()) << len;
  }
  EXPECT_TRUE(DecodeStreamRow(good + "x", &out).IsCorruption());
  std::string bad_tag = good;
  bad_tag[0] = 9;
  EXPECT_TRUE(DecodeStreamRow(bad_tag, &out).IsCorruption());
  EXPECT_FALSE(PeekLastSeen(bad_tag).has_value());
  EXPECT_FALSE(PeekLastSeen("short").has_value());
}

TEST(CheckpointTest, RoundTripsAndRejectsCorruption) {
  Checkpoint cp{.next_offset = 123456789012, .newest_record_ms = 1'700'000'000'123};
  Result<Checkpoint> back = DecodeCheckpoint(EncodeCheckpoint(cp));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, cp);
  const std::string raw = EncodeCheckpoint(cp);
  EXPECT_TRUE(DecodeCheckpoint("").status().IsCorruption());
  EXPECT_TRUE(DecodeCheckpoint(raw.substr(0, 10)).status().IsCorruption());
  std::string v2 = raw;
  v2[0] = 2;
  EXPECT_TRUE(DecodeCheckpoint(v2).status().IsCorruption());
  EXPECT_TRUE(DecodeCheckpoint(EncodeCheckpoint({.next_offset = -1, .newest_record_ms = 0})).status().IsCorruption());
}

TEST(CheckpointTest, KeysSortByPartition) {
  EXPECT_LT(CheckpointKey(2), CheckpointKey(10));
  EXPECT_LT(CheckpointKey(255), CheckpointKey(256));
  EXPECT_EQ(CheckpointKey(1).rfind(kCheckpointKeyPrefix, 0), 0u);
}

TEST(PartitionMetaTest, RoundTripsAndRejectsCorruption) {
  PartitionMeta m{.revoked_at_ms = 1'700'000'000'000, .evict_after_ms = 1'700'000'600'000};
  Result<PartitionMeta> back = DecodePartitionMeta(EncodePartitionMeta(m));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, m);
  EXPECT_TRUE(DecodePartitionMeta("").status().IsCorruption());
  EXPECT_TRUE(DecodePartitionMeta(EncodePartitionMeta(m).substr(1)).status().IsCorruption());
  int32_t p = -1;
  EXPECT_TRUE(ParseMetaKey(PartitionMetaKey(70000), kPartitionMetaKeyPrefix, &p));
  EXPECT_EQ(p, 70000);
  EXPECT_FALSE(ParseMetaKey(CheckpointKey(1), kPartitionMetaKeyPrefix, &p));
  EXPECT_FALSE(ParseMetaKey("partition/xyz", kPartitionMetaKeyPrefix, &p));
}

TEST(ColumnFamiliesTest, PartitionNamesRoundTrip) {
  EXPECT_EQ(PartitionCfName(17), "p00017");
  EXPECT_EQ(PartitionCfName(0), "p00000");
  EXPECT_EQ(ParsePartitionCfName("p00017"), 17);
  EXPECT_EQ(ParsePartitionCfName("p99999"), 99999);
  EXPECT_FALSE(ParsePartitionCfName("meta"));
  EXPECT_FALSE(ParsePartitionCfName("default"));
  EXPECT_FALSE(ParsePartitionCfName("p0017"));
  EXPECT_FALSE(ParsePartitionCfName("p0001x"));
  EXPECT_FALSE(ParsePartitionCfName("q00017"));
}

}  // namespace
}  // namespace limits::storage
