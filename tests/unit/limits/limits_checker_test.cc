#include "limits/decision/limits_checker.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/fake_clock.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr int32_t kPartitions = 4;

class RecordingSink final : public StreamSink {
 public:
  void Produce(const std::string& tenant, uint64_t hash, uint64_t bytes, const std::string& policy) override {
    produced.push_back({tenant, hash, bytes, policy});
  }
  struct Item {
    std::string tenant;
    uint64_t hash, bytes;
    std::string policy;
  };
  std::vector<Item> produced;
};

uint64_t HashIn(int32_t p, uint64_t n) { return n * kPartitions + static_cast<uint64_t>(p); }

class LimitsCheckerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    opened_ = testing::TestStore::Open(dir_, clock_, kPartitions);
    store_ = opened_.store.get();
    TenantLimits defaults;
    defaults.max_global_streams_per_user = 4;
    defaults.ingestion_rate_mb = 1;          // 1 MiB/s over all partitions
    defaults.ingestion_burst_size_mb = 0.5;  // 512 KiB
    std::map<std::string, TenantOverrides> tenants;
    tenants["gold"].policy_override_limits = std::map<std::string, PolicyLimits>{{"gold", {.max_global_streams_per_user = 1}}};
    // Loki's TestIngestionRateStrategy_PolicyOverride shapes (pkg/distributor), in MiB.
    tenants["pol"].policy_override_limits = std::map<std::string, PolicyLimits>{
        {"big", {.ingestion_rate_mb = 4, .ingestion_burst_size_mb = 2}},
        {"ops", {.ingestion_rate_mb = 4}},  // no burst of its own: the tenant's
        {"blocked", {.ingestion_rate_mb = 4, .ingestion_burst_size_mb = 0}},
        {"inherit", {.inherit_limits = true}},
        {"streams-only", {.max_global_streams_per_user = 10}}};
    tenants["free"].max_global_streams_per_user = 0;
    tenants["free"].ingestion_rate_mb = 0;
    limits_ = std::make_unique<LimitsProvider>(defaults, tenants);
    checker_ = std::make_unique<LimitsChecker>(*store_, manager_, *limits_, rates_, sink_, clock_, registry_,
                                               LimitsChecker::Options{.num_partitions = kPartitions,
                                                                      .slice_streams = 1000,
                                                                      .enforce_rate = true});
    for (int32_t p = 0; p < kPartitions; ++p) {
      const int64_t g = manager_.Assign(p);
      manager_.SetReady(p, g, 0, false);
    }
  }

  std::vector<Rejection> Check(const std::string& tenant, const std::vector<uint64_t>& hashes, uint64_t bytes = 100,
                               const std::string& policy = "") {
    std::vector<StreamUpdate> u;
    for (uint64_t h : hashes) u.push_back({.stream_hash = h, .bytes = bytes, .policy = policy});
    std::vector<Rejection> out;
    Status s = checker_->ExceedsLimits(tenant, u, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  static std::vector<std::pair<uint64_t, Reason>> Pairs(const std::vector<Rejection>& r) {
    std::vector<std::pair<uint64_t, Reason>> out;
    for (const Rejection& x : r) out.emplace_back(x.stream_hash, x.reason);
    std::sort(out.begin(), out.end());
    return out;
  }

  double Metric(const std::string& name, const std::string& label_value) {
    for (const auto& f : registry_.Collect()) {
      if (f.name != name) continue;
      for (const auto& m : f.metric) {
        for (const auto& l : m.label) {
          if (l.value == label_value) return m.counter.value;
        }
      }
    }
    return -1;
  }

  testing::TempDir dir_;
  testing::FakeClock clock_;
  testing::TestStore opened_;
  UsageStore* store_ = nullptr;
  PartitionManager manager_{clock_, 30s};
  std::unique_ptr<LimitsProvider> limits_;
  RateLimiter rates_;
  RecordingSink sink_;
  prometheus::Registry registry_;
  std::unique_ptr<LimitsChecker> checker_;
};

TEST_F(LimitsCheckerTest, ReturnsOnlyRejectedStreamsWithReasonTwoBeyondTheLimit) {
  EXPECT_TRUE(Check("t", {1, 2, 3, 4}).empty());
  EXPECT_EQ(Pairs(Check("t", {1, 5, 6})), (std::vector<std::pair<uint64_t, Reason>>{{5, kReasonMaxStreams},
                                                                                    {6, kReasonMaxStreams}}));
  EXPECT_EQ(Metric("limitsd_streams_rejected_total", "max_streams"), 2);
  EXPECT_EQ(checker_->ingested_bytes().Value("t"), 5 * 100);
}

TEST_F(LimitsCheckerTest, AcceptedStreamsDueAreProducedOnce) {
  Check("t", {1, 2}, 100, "p");
  ASSERT_EQ(sink_.produced.size(), 2u);
  EXPECT_EQ(sink_.produced[0].tenant, "t");
  EXPECT_EQ(sink_.produced[0].policy, "p");
  Check("t", {1, 2});
  EXPECT_EQ(sink_.produced.size(), 2u);  // within the produce interval
  clock_.Advance(75s);  // past any stream's delay (the interval and at most a quarter)
  Check("t", {1});
  EXPECT_EQ(sink_.produced.size(), 3u);
}

TEST_F(LimitsCheckerTest, StreamsOfPartitionsThatAreNotReadyAreReasonOneAndCounted) {
  manager_.Revoke(1);
  const int64_t g = manager_.Assign(2);  // pending again
  manager_.StartReplay(2, g, 0, 10);     // replaying
  std::vector<Rejection> r = Check("t", {HashIn(0, 1), HashIn(1, 1), HashIn(2, 1), HashIn(2, 2)});
  EXPECT_EQ(Pairs(r), (std::vector<std::pair<uint64_t, Reason>>{
                          {HashIn(1, 1), kReasonFailed}, {HashIn(2, 1), kReasonFailed}, {HashIn(2, 2), kReasonFailed}}));
  EXPECT_EQ(Metric("loki_ingest_limits_streams_discarded_total", "2"), 2);
  EXPECT_EQ(Metric("loki_ingest_limits_streams_discarded_total", "1"), 1);
  EXPECT_EQ(store_->UsageOf("t", PartitionSet::All(kPartitions)).active_streams, 1u);  // nothing else touched
}

TEST_F(LimitsCheckerTest, PolicyOverridesHaveTheirOwnLimit) {
  EXPECT_EQ(Pairs(Check("gold", {1, 2}, 10, "gold")), (std::vector<std::pair<uint64_t, Reason>>{{2, kReasonMaxStreams}}));
  EXPECT_TRUE(Check("gold", {3, 4, 5, 6}).empty());  // the default bucket is separate
}

// Issue 26 item 2 (Loki #22435, #23751): a policy with a rate of its own draws its streams'
// bytes from its own bucket — its burst, else the tenant's — and not from the tenant's; a
// request is taken from all its buckets or from none.
TEST_F(LimitsCheckerTest, Issue26_PolicyRateOverridesHaveBucketsOfTheirOwn) {
  using Pairs_ = std::vector<std::pair<uint64_t, Reason>>;
  EXPECT_EQ(Pairs(Check("pol", {1}, 600 << 10)), (Pairs_{{1, kReasonRateLimited}}));  // the tenant's 512 KiB
  EXPECT_TRUE(Check("pol", {2}, 1536 << 10, "big").empty());                          // big's own 2 MiB
  EXPECT_EQ(Pairs(Check("pol", {3}, 600 << 10, "ops")), (Pairs_{{3, kReasonRateLimited}}));  // the tenant's burst
  EXPECT_TRUE(Check("pol", {4}, 400 << 10, "ops").empty());
  EXPECT_EQ(Pairs(Check("pol", {5}, 1, "blocked")), (Pairs_{{5, kReasonRateLimited}}));  // burst 0 blocks
  EXPECT_TRUE(Check("pol", {6}, 400 << 10, "inherit").empty());  // the tenant's figures, its own bucket
  EXPECT_TRUE(Check("pol", {7}, 400 << 10).empty());              // so the tenant's bucket is still full
  EXPECT_EQ(Pairs(Check("pol", {8}, 400 << 10, "streams-only")),   // a stream limit alone: the tenant's bucket
            (Pairs_{{8, kReasonRateLimited}}));
  // Both buckets or neither: "blocked" cannot take its byte, so the 100 KiB the tenant's
  // bucket gave (of the 112 KiB it holds) go back.
  std::vector<StreamUpdate> mixed = {{.stream_hash = 9, .bytes = 1, .policy = "blocked"},
                                     {.stream_hash = 10, .bytes = 100 << 10, .policy = ""}};
  std::vector<Rejection> out;
  ASSERT_TRUE(checker_->ExceedsLimits("pol", mixed, &out).ok());
  EXPECT_EQ(Pairs(out), (Pairs_{{9, kReasonRateLimited}, {10, kReasonRateLimited}}));
  EXPECT_TRUE(Check("pol", {11}, 110 << 10).empty());
}

TEST_F(LimitsCheckerTest, RateLimitRejectsTheRequestWithReason1001AndRefills) {
  // Burst 512 KiB: a 600 KiB request never fits; 400 KiB does, once.
  EXPECT_EQ(Pairs(Check("t", {1, 2}, 300 << 10)), (std::vector<std::pair<uint64_t, Reason>>{
                                                      {1, kReasonRateLimited}, {2, kReasonRateLimited}}));
  EXPECT_EQ(store_->UsageOf("t", PartitionSet::All(kPartitions)).active_streams, 0u);  // nothing admitted
  EXPECT_TRUE(Check("t", {1, 2}, 200 << 10).empty());
  EXPECT_EQ(Check("t", {1, 2}, 200 << 10).size(), 2u);
  // The node serves all 4 partitions: it refills at the whole 1 MiB/s.
  clock_.Advance(400ms);
  EXPECT_TRUE(Check("t", {1, 2}, 200 << 10).empty());
  EXPECT_EQ(Metric("limitsd_streams_rejected_total", "rate_limited"), 4);
}

TEST_F(LimitsCheckerTest, BytesOfStreamsRejectedForTheirCountAreRefunded) {
  EXPECT_TRUE(Check("t", {1, 2, 3, 4}, 10).empty());
  // 4 new streams of 120 KiB: all over the stream limit, so the bucket keeps its bytes.
  for (int i = 0; i < 10; ++i) EXPECT_EQ(Check("t", {10, 11, 12, 13}, 120 << 10).size(), 4u);
  EXPECT_TRUE(Check("t", {1, 2, 3, 4}, 120 << 10).empty());
}

TEST_F(LimitsCheckerTest, ZeroMeansUnlimitedForStreamsAndRate) {
  std::vector<uint64_t> many;
  for (uint64_t i = 0; i < 100; ++i) many.push_back(i);
  EXPECT_TRUE(Check("free", many, 10 << 20).empty());
}

// Only a tenant Loki never sends fails a call (dskit's ValidTenantID allows 1-150 bytes).
TEST_F(LimitsCheckerTest, OnlyATenantLokiNeverSendsIsAnInvalidArgument) {
  std::vector<Rejection> out;
  std::vector<StreamUpdate> one = {{.stream_hash = 1, .bytes = 1, .policy = ""}};
  EXPECT_THAT(checker_->ExceedsLimits("", one, &out).message(), HasSubstr("tenant is required"));
  EXPECT_TRUE(checker_->ExceedsLimits(std::string(256, 't'), one, &out).IsInvalidArgument());
  EXPECT_TRUE(checker_->ExceedsLimits(std::string(150, 't'), one, &out).ok());  // Loki's longest tenant id
  std::vector<UsageStore::StreamRate> rates;
  EXPECT_TRUE(checker_->UpdateRates("", one, &rates).IsInvalidArgument());
}

// Issue 24, item 1: a policy over 255 bytes (or not UTF-8: the store's test) was a whole-call
// INVALID_ARGUMENT, so one X-Loki-Ingestion-Policy header switched the tenant's limit off.
// Now such a stream counts under no policy, and the call's other streams are answered.
TEST_F(LimitsCheckerTest, Item1_AnOverlongPolicyCountsInTheDefaultBucketAndFailsNothing) {
  const std::string long_policy(256, 'p');
  std::vector<StreamUpdate> u;
  for (uint64_t h = 1; h <= 6; ++h) u.push_back({.stream_hash = h, .bytes = 1, .policy = h % 2 ? long_policy : ""});
  std::vector<Rejection> out;
  ASSERT_TRUE(checker_->ExceedsLimits("t", u, &out).ok());
  // The default limit is 4: two of the six are over it, whatever their policy's name.
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(store_->UsageOf("t", PartitionSet::All(kPartitions)).active_by_policy,
            (std::map<std::string, uint64_t>{{"", 4}}));
  // Its record carries no policy (no consumer would keep the name).
  for (const auto& p : sink_.produced) EXPECT_EQ(p.policy, "");
  EXPECT_EQ(store_->ignored_policies().Of(PolicyNameCheck::kTooLong), 3u);
}

// Issue 24, item 1: more than 100 000 streams (one large push) was a whole-call error. A
// request is checked in slices (1000 here) and its limit is exact across them.
TEST_F(LimitsCheckerTest, Item1_ALargeRequestIsCheckedInSlicesAndTheLimitHolds) {
  std::vector<StreamUpdate> u;
  for (uint64_t h = 1; h <= 2500; ++h) u.push_back({.stream_hash = h, .bytes = 1, .policy = ""});
  std::vector<Rejection> out;
  // Not on a thread that must not wait: a later slice could not give up cleanly.
  EXPECT_TRUE(checker_->ExceedsLimits("t", u, &out, Wait::kNever).IsWouldBlock());
  EXPECT_EQ(store_->UsageOf("t", PartitionSet::All(kPartitions)).active_streams, 0u);
  ASSERT_TRUE(checker_->ExceedsLimits("t", u, &out).ok());
  EXPECT_EQ(out.size(), 2500u - 4);  // the default limit is 4
  EXPECT_EQ(store_->UsageOf("t", PartitionSet::All(kPartitions)).active_streams, 4u);
  // Accepted streams anywhere in the request are produced: the first four.
  ASSERT_EQ(sink_.produced.size(), 4u);
  // Unlimited: every slice's streams are admitted.
  ASSERT_TRUE(checker_->ExceedsLimits("free", u, &out).ok());
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(store_->UsageOf("free", PartitionSet::All(kPartitions)).active_streams, 2500u);
}

TEST_F(LimitsCheckerTest, UpdateRatesAnswersForReadyPartitionsOnly) {
  Check("t", {HashIn(0, 1), HashIn(1, 1)});
  manager_.Revoke(1);
  std::vector<StreamUpdate> u = {{.stream_hash = HashIn(0, 1), .bytes = 6000, .policy = ""},
                                 {.stream_hash = HashIn(1, 1), .bytes = 6000, .policy = ""}};
  std::vector<UsageStore::StreamRate> rates;
  ASSERT_TRUE(checker_->UpdateRates("t", u, &rates).ok());
  ASSERT_EQ(rates.size(), 1u);
  EXPECT_EQ(rates[0].stream_hash, HashIn(0, 1));
  EXPECT_EQ(rates[0].bytes_per_s, 100u);
  EXPECT_EQ(checker_->AssignedPartitions().size(), 3u);
}

TEST(LimitsProviderTest, OverridesFileWinsAndReloadsReplaceIt) {
  TenantLimits defaults;
  defaults.max_global_streams_per_user = 10;
  std::map<std::string, TenantOverrides> config;
  config["a"].max_global_streams_per_user = 20;
  config["a"].ingestion_rate_mb = 2;
  LimitsProvider provider(defaults, config);
  auto before = provider.Current();
  EXPECT_EQ(before->For("a").max_global_streams_per_user, 20u);
  EXPECT_EQ(before->For("zzz").max_global_streams_per_user, 10u);
  std::map<std::string, TenantOverrides> file;
  file["a"].max_global_streams_per_user = 30;
  file["b"].policy_override_limits = std::map<std::string, PolicyLimits>{{"p", {.max_global_streams_per_user = 1}}};
  provider.SetFileOverrides(file);
  auto after = provider.Current();
  EXPECT_EQ(after->For("a").max_global_streams_per_user, 30u);
  EXPECT_DOUBLE_EQ(after->For("a").ingestion_rate_mb, 2.0);  // the config's override stays under the file's
  EXPECT_EQ(after->For("b").PolicyMaxStreams("p"), 1u);
  EXPECT_EQ(before->For("a").max_global_streams_per_user, 20u);  // a held snapshot never changes
  provider.SetFileOverrides({});
  EXPECT_EQ(provider.Current()->For("a").max_global_streams_per_user, 20u);
}

TEST(RateLimiterTest, BucketsStartFullRefillAtTheRateAndCapAtTheBurst) {
  RateLimiter r;
  EXPECT_TRUE(r.TryTake("a", 100, 10, 100, 0));
  EXPECT_FALSE(r.TryTake("a", 1, 10, 100, 0));
  EXPECT_FALSE(r.TryTake("a", 11, 10, 100, 1000));
  EXPECT_TRUE(r.TryTake("a", 10, 10, 100, 1000));
  EXPECT_TRUE(r.TryTake("b", 100, 10, 100, 1000));  // tenants are independent
  EXPECT_TRUE(r.TryTake("a", 100, 10, 100, 1'000'000));  // capped at the burst, not more
  EXPECT_FALSE(r.TryTake("a", 1, 10, 100, 1'000'000));
  r.Refund("a", 50, 100);
  EXPECT_TRUE(r.TryTake("a", 50, 10, 100, 1'000'000));
  EXPECT_TRUE(r.TryTake("c", 100, 0, 100, 0));  // rate 0: the burst only, never refilled
  EXPECT_FALSE(r.TryTake("c", 1, 0, 100, 1'000'000));
  EXPECT_EQ(r.ForgetFull(2'000'000), 2u);  // "a" and "b" refilled; "c" never will
}

// Issue 10 item 3: rate limiting is opt-in (limits.enforce_rate), as in Loki.
TEST_F(LimitsCheckerTest, RateIsNotEnforcedUnlessAskedFor) {
  LimitsChecker loki_like(*store_, manager_, *limits_, rates_, sink_, clock_, registry_,
                          LimitsChecker::Options{.num_partitions = kPartitions,
                                                 .slice_streams = 1000,
                                                 .enforce_rate = false});
  std::vector<StreamUpdate> u;
  for (uint64_t h = 0; h < 4; ++h) u.push_back({.stream_hash = h, .bytes = 10 << 20, .policy = ""});  // 40 MiB
  std::vector<Rejection> out;
  ASSERT_TRUE(loki_like.ExceedsLimits("t", u, &out).ok());
  EXPECT_TRUE(out.empty());
}

}  // namespace
}  // namespace limits
