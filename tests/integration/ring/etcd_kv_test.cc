// EtcdKv and the lifecycler against a real etcd (Debian's etcd-server) on loopback.
#include "ring/etcd_kv.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>

#include <atomic>
#include <thread>

#include "common/clock.h"
#include "ring/lifecycler.h"
#include "ring/ring_codec.h"
#include "testing/test_etcd.h"
#include "testing/wait_for.h"

namespace limits::ring {
namespace {

using namespace std::chrono_literals;
constexpr char kKey[] = "collectors/ingest-limits";

std::unique_ptr<EtcdKv> Client(const std::vector<std::string>& endpoints, int max_cas_retries = 10) {
  EtcdKvOptions o;
  o.endpoints = endpoints;
  o.max_cas_retries = max_cas_retries;
  o.dial_timeout = 1s;
  o.request_timeout = 2s;
  Result<std::unique_ptr<EtcdKv>> kv = EtcdKv::Create(o);
  EXPECT_TRUE(kv.ok()) << kv.status().ToString();
  return kv.ok() ? std::move(*kv) : nullptr;
}

KvClient::CasFn AddInstance(const std::string& id, int* calls = nullptr) {
  return [id, calls](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    if (calls) ++*calls;
    ::ring::InstanceDesc& e = (*desc.mutable_ingesters())[id];
    e.set_id(id);
    e.set_timestamp(e.timestamp() + 1);
    return KvClient::CasAction::kWrite;
  };
}

class EtcdKvTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(etcd_.ok()) << etcd_.log(); }
  testing::TestEtcd etcd_;
};

TEST(EtcdEndpointTest, ParsesHostPortAndHttpUrls) {
  EXPECT_EQ(*ParseEtcdEndpoint("etcd-0.etcd:2379"), "etcd-0.etcd:2379");
  EXPECT_EQ(*ParseEtcdEndpoint("http://127.0.0.1:2379"), "127.0.0.1:2379");
  EXPECT_EQ(*ParseEtcdEndpoint("http://[::1]:2379/"), "[::1]:2379");
  EXPECT_EQ(*ParseEtcdEndpoint("https://etcd-0.etcd:2379"), "etcd-0.etcd:2379");  // TLS is the config's to say
  for (const char* bad : {"", "etcd", "etcd:", ":2379", "etcd:0", "etcd:65536", "etcd:23x", "http://etcd:2379/path"}) {
    EXPECT_FALSE(ParseEtcdEndpoint(bad).ok()) << bad;
  }
}

TEST_F(EtcdKvTest, CasCreatesUpdatesAndGetDecodes) {
  auto kv = Client({etcd_.endpoint()});
  Result<std::optional<::ring::Desc>> none = kv->Get(kKey);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_FALSE(none->has_value());

  ASSERT_TRUE(kv->Cas(kKey, AddInstance("a")).ok());
  ASSERT_TRUE(kv->Cas(kKey, AddInstance("b")).ok());
  Result<std::optional<::ring::Desc>> got = kv->Get(kKey);
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->ingesters_size(), 2);
  Result<std::optional<EtcdKv::Raw>> raw = kv->GetRaw(kKey);
  ASSERT_TRUE(raw.ok() && raw->has_value());
  EXPECT_EQ((*raw)->version, 2);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*DecodeDesc((*raw)->value), **got)) << "snappy(proto)";

  // kSkip writes nothing.
  ASSERT_TRUE(kv->Cas(kKey, [](::ring::Desc&) -> Result<KvClient::CasAction> { return KvClient::CasAction::kSkip; }).ok());
  EXPECT_EQ((*kv->GetRaw(kKey))->version, 2);
  // An error from the callback comes back unchanged and writes nothing.
  Status s = kv->Cas(kKey, [](::ring::Desc&) -> Result<KvClient::CasAction> { return Status::Internal("no"); });
  EXPECT_EQ(s, Status::Internal("no"));
}

// Issue 8 item 8: the longest ring.etcd_dial_timeout the key allows (2^32-1 s) works; gRPC's
// int of milliseconds for the keepalive timeout is clamped, never wrapped.
TEST_F(EtcdKvTest, Item8_TheLongestDialTimeoutTheKeyAllowsWorks) {
  EtcdKvOptions o;
  o.endpoints = {etcd_.endpoint()};
  o.dial_timeout = std::chrono::seconds(4'294'967'295);
  o.request_timeout = 2s;
  Result<std::unique_ptr<EtcdKv>> kv = EtcdKv::Create(o);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  ASSERT_TRUE((*kv)->Cas(kKey, AddInstance("a")).ok());
  Result<std::optional<::ring::Desc>> got = (*kv)->Get(kKey);
  ASSERT_TRUE(got.ok() && got->has_value());
}

TEST_F(EtcdKvTest, ALostRaceCallsTheCallbackAgainWithTheNewerValue) {
  auto kv = Client({etcd_.endpoint()});
  auto other = Client({etcd_.endpoint()});
  ASSERT_TRUE(kv->Cas(kKey, AddInstance("a")).ok());
  int calls = 0;
  std::vector<int> seen_sizes;
  Status s = kv->Cas(kKey, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    seen_sizes.push_back(desc.ingesters_size());
    if (++calls == 1) {
      // Another writer commits between our read and our write.
      EXPECT_TRUE(other->Cas(kKey, AddInstance("other")).ok());
    }
    (*desc.mutable_ingesters())["mine"].set_id("mine");
    return KvClient::CasAction::kWrite;
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(seen_sizes, (std::vector<int>{1, 2}));
  const ::ring::Desc after = **kv->Get(kKey);
  EXPECT_EQ(after.ingesters_size(), 3);
  EXPECT_TRUE(after.ingesters().count("other") && after.ingesters().count("mine") && after.ingesters().count("a"));
}

TEST_F(EtcdKvTest, ConcurrentWritersLoseNothing) {
  // Every writer bumps a counter only it touches, back to back: a lost update would show
  // as a counter below the writer's successful CAS calls.
  constexpr int kWriters = 4, kRounds = 15;
  std::atomic<int> calls{0};
  std::vector<int> successes(kWriters, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      auto kv = Client({etcd_.endpoint()}, /*max_cas_retries=*/100);
      for (int r = 0; r < kRounds; ++r) {
        Status s = kv->Cas(kKey, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
          ++calls;
          ::ring::InstanceDesc& e = (*desc.mutable_ingesters())["w" + std::to_string(w)];
          e.set_timestamp(e.timestamp() + 1);
          return KvClient::CasAction::kWrite;
        });
        if (s.ok()) ++successes[w];
      }
    });
  }
  for (auto& t : threads) t.join();
  const ::ring::Desc after = **Client({etcd_.endpoint()})->Get(kKey);
  ASSERT_EQ(after.ingesters_size(), kWriters);
  for (int w = 0; w < kWriters; ++w) {
    EXPECT_EQ(after.ingesters().at("w" + std::to_string(w)).timestamp(), successes[w]) << w;
    EXPECT_GT(successes[w], 0) << w;
  }
  EXPECT_GE(calls.load(), kWriters * kRounds) << "conflicts call the callback again";
}

TEST_F(EtcdKvTest, AnUndecodableValueIsNeverOverwritten) {
  auto kv = Client({etcd_.endpoint()});
  const std::string garbage = "{\"not\": \"a ring\"}";
  ASSERT_TRUE(kv->PutRaw(kKey, garbage).ok());
  bool called = false;
  Status s = kv->Cas(kKey, [&](::ring::Desc&) -> Result<KvClient::CasAction> {
    called = true;
    return KvClient::CasAction::kWrite;
  });
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_FALSE(called);
  EXPECT_TRUE(kv->Get(kKey).status().IsCorruption());
  Result<std::optional<EtcdKv::Raw>> raw = kv->GetRaw(kKey);
  ASSERT_TRUE(raw.ok() && raw->has_value());
  EXPECT_EQ((*raw)->value, garbage);
  EXPECT_EQ((*raw)->version, 1);
}

TEST_F(EtcdKvTest, AnOutageIsAnErrorWithinTheDialTimeoutAndRecovers) {
  auto kv = Client({etcd_.endpoint()});
  ASSERT_TRUE(kv->Cas(kKey, AddInstance("a")).ok());
  etcd_.Kill();
  const auto started = std::chrono::steady_clock::now();
  Result<std::optional<::ring::Desc>> down = kv->Get(kKey);
  EXPECT_EQ(down.status().code(), StatusCode::kUnavailable) << down.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  EXPECT_NE(down.status().message().find(etcd_.endpoint()), std::string::npos) << down.status().message();
  ASSERT_TRUE(etcd_.Restart()) << etcd_.log();
  ASSERT_TRUE(testing::WaitFor([&] { return kv->Get(kKey).ok(); }, 15s));
  EXPECT_EQ((**kv->Get(kKey)).ingesters_size(), 1) << "data survived the restart";
}

TEST_F(EtcdKvTest, FailsOverToAnEndpointThatAnswers) {
  const std::string dead = "127.0.0.1:" + std::to_string(testing::PickFreePort());
  auto kv = Client({dead, etcd_.endpoint()});
  ASSERT_TRUE(kv->Cas(kKey, AddInstance("a")).ok());
  ASSERT_TRUE(kv->Get(kKey).ok());
  auto only_dead = Client({dead});
  Status s = only_dead->Cas(kKey, AddInstance("b"));
  EXPECT_EQ(s.code(), StatusCode::kUnavailable);
}

TEST_F(EtcdKvTest, TwoLifecyclersShareTheRing) {
  auto kv = Client({etcd_.endpoint()});
  prometheus::Registry r1, r2;
  LifecyclerOptions o;
  o.ring_key = kKey;
  o.heartbeat_period = 50ms;
  o.min_backoff = 10ms;
  o.zone = "zone-a";
  o.instance_id = "limitsd-a-0";
  o.addr = "127.0.0.1:1001";
  Lifecycler a(*kv, Clock::System(), o, r1);
  o.instance_id = "limitsd-a-1";
  o.addr = "127.0.0.1:1002";
  auto kv2 = Client({etcd_.endpoint()});
  Lifecycler b(*kv2, Clock::System(), o, r2);
  a.Start();
  b.Start();
  a.SetServing();
  b.SetServing();
  auto both_active = [&] {
    Result<std::optional<::ring::Desc>> d = kv->Get(kKey);
    if (!d.ok() || !d->has_value() || (*d)->ingesters_size() != 2) return false;
    for (const auto& [id, e] : (*d)->ingesters()) {
      if (e.state() != ::ring::ACTIVE || e.tokens_size() != 128) return false;
    }
    return true;
  };
  ASSERT_TRUE(testing::WaitFor(both_active, 10s));
  const ::ring::Desc d = **kv->Get(kKey);
  std::set<uint32_t> tokens;
  for (const auto& [id, e] : d.ingesters()) tokens.insert(e.tokens().begin(), e.tokens().end());
  EXPECT_EQ(tokens.size(), 256u) << "no token shared";
  EXPECT_EQ(d.ingesters().at("limitsd-a-1").addr(), "127.0.0.1:1002");
  a.Stop();
  const ::ring::Desc after = **kv->Get(kKey);
  EXPECT_EQ(after.ingesters_size(), 1);
  EXPECT_TRUE(after.ingesters().count("limitsd-a-1"));
  b.Stop();
  EXPECT_EQ((**kv->Get(kKey)).ingesters_size(), 0);
}

}  // namespace
}  // namespace limits::ring
