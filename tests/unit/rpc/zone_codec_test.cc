#include "rpc/zone_codec.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

namespace limits::rpc {
namespace {

constexpr int32_t kPartitions = 8;

zone::BucketReport Report(const std::string& tenant, const std::string& policy = "") {
  zone::BucketReport r;
  r.key = {tenant, policy};
  r.report.seq = 3;
  r.report.counts = {{0, 4, 10, 12, 1, 2, true}, {7, 1, 5, INT64_MAX, 1, 3, false}};
  r.report.unused = 6;
  r.report.applied_home = 1700000000000;
  r.report.applied_directive = 2;
  r.want = 9;
  r.trigger = true;
  r.waiting = 5;
  return r;
}

wire::ExchangeRequest Request() {
  wire::ExchangeRequest w;
  Encode(zone::ExchangeRequest{"node-a@1",
                               {Report("tenant-1"), Report("tenant-1", "gold")},
                               {{{"tenant-1", ""}, 2 * zone::kWholeRate, 250'000}, {{"tenant-1", "gold"}, 0, 1}}},
         &w);
  return w;
}

// Decodes `w` after `mutate`, expecting INVALID_ARGUMENT whose message names `field`.
void ExpectRefused(const std::function<void(wire::ExchangeRequest&)>& mutate, const std::string& field) {
  wire::ExchangeRequest w = Request();
  mutate(w);
  Result<zone::ExchangeRequest> r = Decode(w, kPartitions);
  ASSERT_FALSE(r.ok()) << field;
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().message().find(field), std::string::npos) << r.status().message();
}

TEST(ZoneCodecTest, AnExchangeRequestComesBackAsItWasSent) {
  Result<zone::ExchangeRequest> r = Decode(Request(), kPartitions);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->member, "node-a@1");
  ASSERT_EQ(r->reports.size(), 2u);
  const zone::BucketReport want = Report("tenant-1", "gold");
  const zone::BucketReport& got = r->reports[1];
  EXPECT_EQ(got.key, want.key);
  EXPECT_EQ(got.want, 9u);
  EXPECT_TRUE(got.trigger);
  EXPECT_EQ(got.waiting, 5u);
  EXPECT_EQ(got.report.seq, 3u);
  EXPECT_EQ(got.report.unused, 6u);
  EXPECT_EQ(got.report.applied_home, 1700000000000u);
  EXPECT_EQ(got.report.applied_directive, 2u);
  ASSERT_EQ(got.report.counts.size(), 2u);
  const zone::PartitionCount& c = got.report.counts[1];
  EXPECT_EQ(c.partition, 7);
  EXPECT_EQ(c.active, 1u);
  EXPECT_EQ(c.consumed, 5);
  EXPECT_EQ(c.horizon, INT64_MAX);
  EXPECT_EQ(c.admitted, 1u);
  EXPECT_EQ(c.generation, 3u);
  EXPECT_FALSE(c.caught_up);
  ASSERT_EQ(r->rates.size(), 2u);
  EXPECT_EQ(r->rates[0].key, (zone::BucketKey{"tenant-1", ""}));
  EXPECT_EQ(r->rates[0].demand, 2 * zone::kWholeRate);
  EXPECT_EQ(r->rates[0].applied, 250'000u);
  EXPECT_EQ(r->rates[1].key, (zone::BucketKey{"tenant-1", "gold"}));
  EXPECT_EQ(r->rates[1].applied, 1u);
}

TEST(ZoneCodecTest, RateReportsAndSharesOutOfRangeOrTwiceAreRefused) {
  ExpectRefused([](auto& w) { w.mutable_rates(1)->mutable_key()->set_policy(""); },
                "rates[1].key names a rate bucket reported twice");
  ExpectRefused([](auto& w) { w.mutable_rates(0)->set_applied(zone::kWholeRate + 1); },
                "rates[0].applied is above the whole rate");
  ExpectRefused([](auto& w) { w.mutable_rates(0)->set_demand(kMaxZonePlaces + 1); }, "rates[0].demand is above 2^40");
  ExpectRefused([](auto& w) { w.mutable_rates(1)->mutable_key()->set_tenant("\xff"); },
                "rates[1].key.tenant is not valid UTF-8");
  wire::ExchangeRequest w = Request();
  w.mutable_rates(0)->set_applied(zone::kWholeRate);  // the whole rate is a share, not an attack
  EXPECT_TRUE(Decode(w, kPartitions).ok());

  zone::ExchangeAnswer answer;
  answer.rate_shares = {{{"t", ""}, 750'000}, {{"t", "gold"}, zone::kWholeRate}};
  wire::ExchangeAnswer wa;
  Encode(answer, &wa);
  Result<zone::ExchangeAnswer> a = Decode(wa);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_EQ(a->rate_shares.size(), 2u);
  EXPECT_EQ(a->rate_shares[0].share, 750'000u);
  EXPECT_EQ(a->rate_shares[1].key, (zone::BucketKey{"t", "gold"}));
  wa.mutable_rate_shares(1)->set_share(zone::kWholeRate + 1);
  Result<zone::ExchangeAnswer> bad = Decode(wa);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rate_shares[1].share is above the whole rate"), std::string::npos)
      << bad.status().ToString();
}

TEST(ZoneCodecTest, AnswersAndDirectsComeBackAsTheyWereSent) {
  zone::ExchangeAnswer answer;
  answer.roster = {{"t", ""}, {"t", "gold"}};
  answer.directives = {{{"t", ""}, {5, 1, 99}}, {{"t", "gold"}, {-3, 2, 99}}};
  answer.recalls = {{"node-b", {{"t", ""}, {-1, 4, 99}}}};
  answer.full = {{"t", "gold"}};
  wire::ExchangeAnswer wa;
  Encode(answer, &wa);
  EXPECT_EQ(wa.directives_size(), 2);  // recalls are the home's to send, not the asker's
  Result<zone::ExchangeAnswer> a = Decode(wa);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->roster, answer.roster);
  EXPECT_EQ(a->full, answer.full);
  ASSERT_EQ(a->directives.size(), 2u);
  EXPECT_EQ(a->directives[1].directive.delta, -3);
  EXPECT_EQ(a->directives[1].directive.seq, 2u);
  EXPECT_EQ(a->directives[1].directive.home, 99u);

  wire::DirectRequest wd;
  Encode(DirectRequest{"home-1", {{{"t", ""}, {-2, 7, 99}}}, {{"t", "gold"}}}, &wd);
  Result<DirectRequest> d = Decode(wd);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->home, "home-1");
  ASSERT_EQ(d->directives.size(), 1u);
  EXPECT_EQ(d->directives[0].directive.delta, -2);
  EXPECT_EQ(d->reports, (std::vector<zone::BucketKey>{{"t", "gold"}}));
  wd.add_reports()->set_tenant("\xff");
  Result<DirectRequest> bad = Decode(wd);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("reports[1].tenant is not valid UTF-8"), std::string::npos)
      << bad.status().ToString();

  wire::DirectAnswer wr;
  Encode(std::vector<zone::BucketReport>{Report("t")}, &wr);
  Result<std::vector<zone::BucketReport>> reports = Decode(wr, kPartitions);
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  ASSERT_EQ(reports->size(), 1u);
  EXPECT_EQ((*reports)[0].report.counts.size(), 2u);
}

TEST(ZoneCodecTest, NamesThatAreMissingTooLongOrNotUtf8AreRefused) {
  ExpectRefused([](auto& w) { w.set_member(""); }, "member is required");
  ExpectRefused([](auto& w) { w.set_member(std::string(kMaxMemberLength + 1, 'm')); }, "member is longer");
  ExpectRefused([](auto& w) { w.set_member("node\xff"); }, "member is not valid UTF-8");
  ExpectRefused([](auto& w) { w.mutable_reports(1)->mutable_key()->set_tenant(""); }, "reports[1].key.tenant");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_key()->set_tenant(std::string(256, 't')); },
                "reports[0].key.tenant is longer");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_key()->set_policy("\xc0\x80"); },
                "reports[0].key.policy is not valid UTF-8");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_key()->set_policy(std::string(256, 'p')); },
                "reports[0].key.policy is longer");
}

TEST(ZoneCodecTest, PartitionsOutsideTheTopicOrCountedTwiceAreRefused) {
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_report()->mutable_counts(1)->set_partition(kPartitions); },
                "reports[0].report.counts[1].partition");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_report()->mutable_counts(0)->set_partition(-1); },
                "is not a partition of the topic");
  ExpectRefused([](auto& w) { w.mutable_reports(1)->mutable_report()->mutable_counts(1)->set_partition(0); },
                "0 is counted twice");
  ExpectRefused(
      [](auto& w) {
        auto* counts = w.mutable_reports(0)->mutable_report()->mutable_counts();
        for (int p = 0; p < kPartitions; ++p) counts->Add()->set_partition(p);
      },
      "more entries than the topic has partitions");
}

TEST(ZoneCodecTest, CountsAndHeadroomAbove2To40AreRefusedSoThatSumsNeverWrap) {
  const uint64_t over = kMaxZonePlaces + 1;
  ExpectRefused([&](auto& w) { w.mutable_reports(0)->mutable_report()->mutable_counts(0)->set_active(over); },
                "counts[0].active is above 2^40");
  ExpectRefused([&](auto& w) { w.mutable_reports(0)->mutable_report()->mutable_counts(0)->set_admitted(over); },
                "counts[0].admitted");
  ExpectRefused([&](auto& w) { w.mutable_reports(0)->mutable_report()->set_unused(over); }, "report.unused");
  ExpectRefused([&](auto& w) { w.mutable_reports(0)->set_want(UINT64_MAX); }, "reports[0].want");
  ExpectRefused([](auto& w) { w.mutable_reports(1)->set_waiting(10); }, "reports[1].waiting is more than want");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_report()->mutable_counts(0)->set_consumed(-1); },
                "negative offset");
  ExpectRefused([](auto& w) { w.mutable_reports(0)->mutable_report()->set_seq(0); }, "report.seq is 0");
  // At the bound is a count, not an attack.
  wire::ExchangeRequest w = Request();
  w.mutable_reports(0)->mutable_report()->mutable_counts(0)->set_active(kMaxZonePlaces);
  EXPECT_TRUE(Decode(w, kPartitions).ok());
}

TEST(ZoneCodecTest, ABucketReportedTwiceIsRefused) {
  ExpectRefused([](auto& w) { w.mutable_reports(1)->mutable_key()->set_policy(""); },
                "reports[1].key names a bucket reported twice");
}

TEST(ZoneCodecTest, DirectivesOutOfRangeOrUnnumberedAreRefused) {
  auto refused = [](int64_t delta, uint64_t seq, uint64_t home) {
    wire::DirectRequest w;
    Encode(DirectRequest{"home", {{{"t", ""}, {delta, seq, home}}}}, &w);
    Result<DirectRequest> r = Decode(w);
    return !r.ok() && r.status().IsInvalidArgument() &&
           r.status().message().find("directives[0].directive") != std::string::npos;
  };
  EXPECT_FALSE(refused(static_cast<int64_t>(kMaxZonePlaces), 1, 1));
  EXPECT_FALSE(refused(-static_cast<int64_t>(kMaxZonePlaces), 1, 1));
  EXPECT_TRUE(refused(static_cast<int64_t>(kMaxZonePlaces) + 1, 1, 1));
  EXPECT_TRUE(refused(INT64_MIN, 1, 1));
  EXPECT_TRUE(refused(1, 0, 1));
  EXPECT_TRUE(refused(1, 1, 0));
  wire::DirectRequest w;
  EXPECT_FALSE(Decode(w).ok());  // no home
  wire::ExchangeAnswer a;
  a.add_roster()->set_tenant("");
  EXPECT_FALSE(Decode(a).ok());
}

}  // namespace
}  // namespace limits::rpc
