#include "ring/lifecycler.h"

#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <set>

#include "common/log.h"
#include "ring/ring_members.h"
#include "testing/fake_clock.h"
#include "testing/fake_kv.h"
#include "testing/prometheus_parser.h"
#include "testing/wait_for.h"

namespace limits::ring {
namespace {

using testing::FakeClock;
using testing::FakeKv;

constexpr char kKey[] = "collectors/ingest-limits";

LifecyclerOptions Options(const std::string& id = "limitsd-0") {
  LifecyclerOptions o;
  o.ring_key = kKey;
  o.instance_id = id;
  o.addr = "10.0.0.1:9095";
  o.zone = "zone-a";
  o.num_tokens = 128;
  o.heartbeat_period = 5s;
  o.token_seed = 42;
  return o;
}

// Another instance's entry, with fields the lifecycler must carry over untouched.
::ring::InstanceDesc Other(std::vector<uint32_t> tokens) {
  ::ring::InstanceDesc d;
  d.set_id("ingest-limits-9");
  d.set_addr("10.0.0.9:9095");
  d.set_zone("zone-b");
  d.set_state(::ring::ACTIVE);
  d.set_timestamp(1699999000);
  d.set_registered_timestamp(1690000000);
  d.set_read_only(true);
  d.set_read_only_updated_timestamp(1699990000);
  (*d.mutable_versions())[1] = 7;
  for (uint32_t t : tokens) d.add_tokens(t);
  return d;
}

testing::ParsedMetrics Metrics(prometheus::Registry& registry) {
  return testing::ParsePrometheusText(prometheus::TextSerializer().Serialize(registry.Collect()));
}

class LifecyclerTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  FakeKv kv_;
  prometheus::Registry registry_;

  const ::ring::InstanceDesc& Ours(const ::ring::Desc& desc, const std::string& id = "limitsd-0") {
    static const ::ring::InstanceDesc kNone;
    auto it = desc.ingesters().find(id);
    return it == desc.ingesters().end() ? kNone : it->second;
  }
};

TEST_F(LifecyclerTest, RegistersJoiningWithUniqueSortedTokens) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  const ::ring::Desc desc = kv_.Value(kKey);
  ASSERT_EQ(desc.ingesters_size(), 1);
  const ::ring::InstanceDesc& e = Ours(desc);
  EXPECT_EQ(e.id(), "limitsd-0");
  EXPECT_EQ(e.addr(), "10.0.0.1:9095");
  EXPECT_EQ(e.zone(), "zone-a");
  EXPECT_EQ(e.state(), ::ring::JOINING);
  EXPECT_EQ(e.timestamp(), clock_.NowSeconds());
  EXPECT_EQ(e.registered_timestamp(), clock_.NowSeconds());
  ASSERT_EQ(e.tokens_size(), 128);
  std::set<uint32_t> unique(e.tokens().begin(), e.tokens().end());
  EXPECT_EQ(unique.size(), 128u);
  EXPECT_TRUE(std::is_sorted(e.tokens().begin(), e.tokens().end()));
  EXPECT_EQ(std::vector<uint32_t>(e.tokens().begin(), e.tokens().end()), lc.tokens());
  const LifecyclerStatus st = lc.status();
  EXPECT_TRUE(st.registered);
  EXPECT_EQ(st.state, ::ring::JOINING);
  EXPECT_EQ(st.last_success_ms, clock_.NowMillis());
  EXPECT_TRUE(st.last_error.empty());
}

TEST_F(LifecyclerTest, GoesActiveOnceServingAndHeartbeatKeepsTokens) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  const int64_t registered_at = clock_.NowSeconds();
  const std::vector<uint32_t> tokens = lc.tokens();

  clock_.Advance(5s);
  ASSERT_TRUE(lc.Heartbeat().ok());
  EXPECT_EQ(Ours(kv_.Value(kKey)).state(), ::ring::JOINING) << "not serving yet";

  lc.SetServing();
  clock_.Advance(5s);
  ASSERT_TRUE(lc.Heartbeat().ok());
  const ::ring::InstanceDesc e = Ours(kv_.Value(kKey));
  EXPECT_EQ(e.state(), ::ring::ACTIVE);
  EXPECT_EQ(e.timestamp(), clock_.NowSeconds());
  EXPECT_EQ(e.registered_timestamp(), registered_at);
  EXPECT_EQ(std::vector<uint32_t>(e.tokens().begin(), e.tokens().end()), tokens);
  EXPECT_EQ(lc.status().state, ::ring::ACTIVE);

  const testing::ParsedMetrics m = Metrics(registry_);
  EXPECT_TRUE(m.problems.empty());
  EXPECT_EQ(m.Value("limitsd_ring_registered"), 1);
  EXPECT_EQ(m.Value("limitsd_ring_state", {{"state", "ACTIVE"}}), 1);
  EXPECT_EQ(m.Value("limitsd_ring_state", {{"state", "JOINING"}}), 0);
  EXPECT_EQ(m.Value("limitsd_ring_heartbeats_total"), 2);
  EXPECT_EQ(m.Value("limitsd_ring_last_heartbeat_timestamp_seconds"), static_cast<double>(clock_.NowSeconds()));
}

TEST_F(LifecyclerTest, ARestartReusesItsTokensAndRegistrationTime) {
  ::ring::Desc before;
  ::ring::InstanceDesc& mine = (*before.mutable_ingesters())["limitsd-0"];
  mine.set_id("limitsd-0");
  mine.set_state(::ring::ACTIVE);
  mine.set_registered_timestamp(1600000000);
  mine.set_timestamp(1600000100);
  for (uint32_t t = 1; t <= 128; ++t) mine.add_tokens(t * 1000);
  kv_.Put(kKey, before);

  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  const ::ring::InstanceDesc e = Ours(kv_.Value(kKey));
  EXPECT_EQ(std::vector<uint32_t>(e.tokens().begin(), e.tokens().end()),
            std::vector<uint32_t>(mine.tokens().begin(), mine.tokens().end()));
  EXPECT_EQ(e.registered_timestamp(), 1600000000);
  EXPECT_EQ(e.timestamp(), clock_.NowSeconds());
  EXPECT_EQ(e.state(), ::ring::JOINING);
  EXPECT_EQ(e.addr(), "10.0.0.1:9095") << "address and zone are ours, not the old entry's";
}

TEST_F(LifecyclerTest, TopsUpTrimsAndNeverTakesAnotherInstancesToken) {
  ::ring::Desc before;
  (*before.mutable_ingesters())["ingest-limits-9"] = Other({5, 6, 7});
  ::ring::InstanceDesc& mine = (*before.mutable_ingesters())["limitsd-0"];
  for (uint32_t t : {1u, 5u, 9u, 9u}) mine.add_tokens(t);  // 5 is taken, 9 is doubled
  kv_.Put(kKey, before);

  LifecyclerOptions o = Options();
  o.num_tokens = 10;
  Lifecycler lc(kv_, clock_, o, registry_);
  ASSERT_TRUE(lc.Register().ok());
  const std::vector<uint32_t> tokens = lc.tokens();
  ASSERT_EQ(tokens.size(), 10u);
  const std::set<uint32_t> set(tokens.begin(), tokens.end());
  EXPECT_EQ(set.size(), 10u);
  EXPECT_TRUE(set.count(1) && set.count(9)) << "its own tokens are kept";
  for (uint32_t t : {5u, 6u, 7u}) EXPECT_FALSE(set.count(t)) << t;

  // Too many tokens (num_tokens lowered): trimmed to num_tokens, all of them its own.
  LifecyclerOptions o2 = Options();
  o2.num_tokens = 4;
  prometheus::Registry registry2;
  Lifecycler fewer(kv_, clock_, o2, registry2);
  ASSERT_TRUE(fewer.Register().ok());
  ASSERT_EQ(fewer.tokens().size(), 4u);
  for (uint32_t t : fewer.tokens()) EXPECT_TRUE(set.count(t)) << t;
}

TEST_F(LifecyclerTest, NeverChangesOtherEntries) {
  ::ring::Desc before;
  (*before.mutable_ingesters())["ingest-limits-9"] = Other({5, 6, 7});
  kv_.Put(kKey, before);
  const std::string other_bytes = before.ingesters().at("ingest-limits-9").SerializeAsString();

  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  lc.SetServing();
  ASSERT_TRUE(lc.Heartbeat().ok());
  ASSERT_TRUE(lc.Leave().ok());
  for (const ::ring::Desc& d : kv_.History(kKey)) {
    ASSERT_TRUE(d.ingesters().count("ingest-limits-9"));
    EXPECT_EQ(d.ingesters().at("ingest-limits-9").SerializeAsString(), other_bytes);
  }
  EXPECT_EQ(kv_.Value(kKey).ingesters_size(), 1);
}

TEST_F(LifecyclerTest, KeepsFieldsItDoesNotOwnInItsOwnEntry) {
  ::ring::Desc before;
  ::ring::InstanceDesc& mine = (*before.mutable_ingesters())["limitsd-0"];
  mine.set_read_only(true);
  mine.set_read_only_updated_timestamp(1699000000);
  (*mine.mutable_versions())[3] = 4;
  kv_.Put(kKey, before);
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  ASSERT_TRUE(lc.Heartbeat().ok());
  const ::ring::InstanceDesc e = Ours(kv_.Value(kKey));
  EXPECT_TRUE(e.read_only());
  EXPECT_EQ(e.read_only_updated_timestamp(), 1699000000);
  EXPECT_EQ(e.versions().at(3), 4u);
}

// A node with [zone] says so in its entry (the zone's members are those that do); the same
// node restarted without it takes the mark away, and leaves the other versions as they were.
TEST_F(LifecyclerTest, AdvertisesItsZoneProtocolAndTakesItAwayWithout) {
  LifecyclerOptions with = Options();
  with.zone_protocol = kZoneProtocol;
  with.unregister_on_shutdown = false;  // the next process finds the entry
  {
    Lifecycler lc(kv_, clock_, with, registry_);
    ASSERT_TRUE(lc.Register().ok());
    ASSERT_TRUE(lc.Heartbeat().ok());
  }
  ::ring::InstanceDesc e = Ours(kv_.Value(kKey));
  EXPECT_EQ(e.versions().at(kZoneProtocolKey), kZoneProtocol);
  ::ring::Desc d = kv_.Value(kKey);
  (*(*d.mutable_ingesters())["limitsd-0"].mutable_versions())[3] = 4;
  kv_.Put(kKey, d);
  prometheus::Registry other_registry;
  Lifecycler without(kv_, clock_, Options(), other_registry);
  ASSERT_TRUE(without.Register().ok());
  e = Ours(kv_.Value(kKey));
  EXPECT_FALSE(e.versions().contains(kZoneProtocolKey));
  EXPECT_EQ(e.versions().at(3), 4u);
}

TEST_F(LifecyclerTest, ACasConflictIsRetriedAndKeepsTheOtherWriter) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  // Another instance registers between our read and our commit.
  kv_.BeforeNextCommit([this] {
    ::ring::Desc d;
    (*d.mutable_ingesters())["ingest-limits-9"] = Other({5, 6, 7});
    kv_.Put(kKey, d);
  });
  ASSERT_TRUE(lc.Register().ok());
  const ::ring::Desc desc = kv_.Value(kKey);
  EXPECT_EQ(desc.ingesters_size(), 2);
  EXPECT_EQ(Ours(desc).state(), ::ring::JOINING);
  EXPECT_EQ(Ours(desc, "ingest-limits-9").addr(), "10.0.0.9:9095");
  for (uint32_t t : lc.tokens()) EXPECT_TRUE(t < 5 || t > 7) << "the retry re-picks around the new tokens";
  EXPECT_EQ(kv_.conflicts(), 1);
  EXPECT_EQ(lc.status().cas_conflicts, 1u);
  EXPECT_EQ(Metrics(registry_).Value("limitsd_ring_cas_conflicts_total"), 1);
}

TEST_F(LifecyclerTest, AnUndecodableValueIsNeverOverwritten) {
  const std::string garbage = "\x01\x02 this is not snappy";
  kv_.PutRaw(kKey, garbage);
  Lifecycler lc(kv_, clock_, Options(), registry_);
  Status s = lc.Register();
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(kv_.Raw(kKey), garbage);
  EXPECT_FALSE(lc.status().registered);
  EXPECT_NE(lc.status().last_error.find("snappy"), std::string::npos) << lc.status().last_error;
  EXPECT_FALSE(lc.Heartbeat().ok()) << "no heartbeat before registration";
  EXPECT_FALSE(lc.Leave().ok());
  EXPECT_EQ(kv_.Raw(kKey), garbage);
  const testing::ParsedMetrics m = Metrics(registry_);
  EXPECT_EQ(m.Value("limitsd_ring_undecodable_values_total"), 2);
  EXPECT_EQ(m.Value("limitsd_ring_errors_total", {{"op", "register"}}), 1);
  EXPECT_EQ(m.Value("limitsd_ring_registered"), 0);

  // Once the value is repaired the instance registers.
  kv_.Erase(kKey);
  ASSERT_TRUE(lc.Register().ok());
  EXPECT_TRUE(lc.status().registered);
  EXPECT_TRUE(lc.status().last_error.empty());

  // Corrupted after registration: heartbeats fail, the bytes stay, the instance stays
  // "registered" (latched) and reports the error.
  kv_.PutRaw(kKey, garbage);
  EXPECT_TRUE(lc.Heartbeat().IsCorruption());
  EXPECT_EQ(kv_.Raw(kKey), garbage);
  EXPECT_TRUE(lc.status().registered);
  EXPECT_FALSE(lc.status().last_error.empty());
}

TEST_F(LifecyclerTest, AnUnavailableKvIsRetriedAndCounted) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  kv_.FailNext(2);
  EXPECT_EQ(lc.Register().code(), StatusCode::kUnavailable);
  EXPECT_EQ(lc.Register().code(), StatusCode::kUnavailable);
  EXPECT_FALSE(lc.status().registered);
  EXPECT_EQ(lc.status().last_success_ms, 0);
  ASSERT_TRUE(lc.Register().ok());
  ASSERT_TRUE(lc.Heartbeat().ok());
  kv_.FailNext(1);
  clock_.Advance(5s);
  EXPECT_FALSE(lc.Heartbeat().ok());
  EXPECT_EQ(lc.status().last_success_ms, clock_.NowMillis() - 5000);
  const testing::ParsedMetrics m = Metrics(registry_);
  EXPECT_EQ(m.Value("limitsd_ring_errors_total", {{"op", "register"}}), 2);
  EXPECT_EQ(m.Value("limitsd_ring_errors_total", {{"op", "heartbeat"}}), 1);
  EXPECT_EQ(m.Value("limitsd_ring_undecodable_values_total"), 0);
}

TEST_F(LifecyclerTest, WarnsOnceWhenItsHeartbeatGoesStale) {
  std::vector<std::string> lines;
  log::SetSinkForTest([&](std::string_view line) { lines.emplace_back(line); });
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  kv_.FailNext(100);
  auto stale_warnings = [&] {
    return std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
      return l.find("older than heartbeat_timeout") != std::string::npos;
    });
  };
  for (int i = 0; i < 12; ++i) {  // one minute of failed heartbeats: not stale yet
    clock_.Advance(5s);
    EXPECT_FALSE(lc.Heartbeat().ok());
  }
  EXPECT_EQ(stale_warnings(), 0);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(5s);
    EXPECT_FALSE(lc.Heartbeat().ok());
  }
  EXPECT_EQ(stale_warnings(), 1);
  const auto failures = std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("ring KV store operation failed") != std::string::npos;
  });
  EXPECT_EQ(failures, 1) << "logged once per condition, not per attempt";
  log::SetSinkForTest(nullptr);
}

TEST_F(LifecyclerTest, AVanishedEntryIsRegisteredAgainWithTheSameTokens) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  const std::vector<uint32_t> tokens = lc.tokens();
  kv_.Erase(kKey);  // the KV store was reset
  clock_.Advance(30s);
  ASSERT_TRUE(lc.Heartbeat().ok());
  const ::ring::InstanceDesc e = Ours(kv_.Value(kKey));
  EXPECT_EQ(std::vector<uint32_t>(e.tokens().begin(), e.tokens().end()), tokens);
  EXPECT_EQ(e.registered_timestamp(), clock_.NowSeconds()) << "dskit: a new registration time";
}

TEST_F(LifecyclerTest, LeaveWritesLeavingThenRemovesTheEntry) {
  Lifecycler lc(kv_, clock_, Options(), registry_);
  ASSERT_TRUE(lc.Register().ok());
  lc.SetServing();
  ASSERT_TRUE(lc.Heartbeat().ok());
  ASSERT_TRUE(lc.Leave().ok());
  const std::vector<::ring::Desc> history = kv_.History(kKey);
  ASSERT_GE(history.size(), 2u);
  EXPECT_EQ(Ours(history[history.size() - 2]).state(), ::ring::LEAVING);
  EXPECT_EQ(history.back().ingesters().count("limitsd-0"), 0u);
  EXPECT_FALSE(lc.status().registered);
  EXPECT_EQ(Metrics(registry_).Value("limitsd_ring_registered"), 0);
}

TEST_F(LifecyclerTest, WithoutUnregisterTheEntryStaysLeavingAndARestartReusesIt) {
  LifecyclerOptions o = Options();
  o.unregister_on_shutdown = false;
  std::vector<uint32_t> tokens;
  {
    Lifecycler lc(kv_, clock_, o, registry_);
    ASSERT_TRUE(lc.Register().ok());
    tokens = lc.tokens();
    ASSERT_TRUE(lc.Leave().ok());
  }
  EXPECT_EQ(Ours(kv_.Value(kKey)).state(), ::ring::LEAVING);
  prometheus::Registry registry2;
  Lifecycler again(kv_, clock_, o, registry2);
  ASSERT_TRUE(again.Register().ok());
  EXPECT_EQ(again.tokens(), tokens);
}

TEST_F(LifecyclerTest, TheThreadRegistersRetriesGoesActiveAndLeaves) {
  LifecyclerOptions o = Options();
  o.heartbeat_period = 20ms;
  o.min_backoff = 1ms;
  kv_.FailNext(3);  // etcd down at start
  Lifecycler lc(kv_, clock_, o, registry_);
  lc.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return lc.status().registered; }, 5s));
  lc.SetServing();
  ASSERT_TRUE(testing::WaitFor([&] { return Ours(kv_.Value(kKey)).state() == ::ring::ACTIVE; }, 5s));
  const int calls = kv_.calls();
  ASSERT_TRUE(testing::WaitFor([&] { return kv_.calls() >= calls + 2; }, 5s)) << "heartbeats go on";
  lc.Stop();
  EXPECT_EQ(kv_.Value(kKey).ingesters_size(), 0);
  EXPECT_EQ(Metrics(registry_).Value("limitsd_ring_errors_total", {{"op", "register"}}), 3);
  lc.Stop();  // idempotent
}

TEST_F(LifecyclerTest, StopWithoutRegistrationWritesNothing) {
  LifecyclerOptions o = Options();
  o.min_backoff = 1ms;
  o.heartbeat_period = 10ms;
  kv_.FailNext(1000000);
  Lifecycler lc(kv_, clock_, o, registry_);
  lc.Start();
  ASSERT_TRUE(testing::WaitFor([&] { return kv_.calls() >= 2; }, 5s));
  lc.Stop();
  EXPECT_FALSE(kv_.Raw(kKey).has_value());
}

}  // namespace
}  // namespace limits::ring
