// NodeZone: the ring is read on a thread of its own, so a ring store that hangs holds back no
// exchange — the rounds go on renewing this node's leases while a read waits (etcd's request
// timeout is 5 s; a zone's lease may be shorter).
#include "node/node_zone.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "limits/decision/limits_provider.h"
#include "limits/lifecycle/partition_manager.h"
#include "testing/fake_clock.h"
#include "ring/ring_members.h"
#include "testing/temp_dir.h"
#include "testing/test_store.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
constexpr int32_t kPartitions = 4;

// A ring store whose reads after the first hang until released.
class HangingKv final : public ring::KvClient {
 public:
  explicit HangingKv(::ring::Desc desc) : desc_(std::move(desc)) {}
  Result<std::optional<::ring::Desc>> Get(const std::string&) override {
    std::unique_lock lock(mu_);
    if (++reads_ > 1) cv_.wait(lock, [this] { return released_; });
    return std::optional<::ring::Desc>(desc_);
  }
  Status Cas(const std::string&, const CasFn&) override { return Status::Unavailable("read only"); }
  const char* name() const override { return "hanging"; }

  void Release() {
    {
      std::lock_guard lock(mu_);
      released_ = true;
    }
    cv_.notify_all();
  }
  int reads() {
    std::lock_guard lock(mu_);
    return reads_;
  }

 private:
  const ::ring::Desc desc_;
  std::mutex mu_;
  std::condition_variable cv_;
  int reads_ = 0;          // GUARDED_BY(mu_)
  bool released_ = false;  // GUARDED_BY(mu_)
};

// A node's clock, store and partitions for a NodeZone, and the ring it reads.
struct NodeZoneTest : ::testing::Test {
  // An ACTIVE instance of zone-a with a fresh heartbeat, speaking the zone protocol or not.
  void Add(const std::string& id, bool shares) {
    ::ring::InstanceDesc& i = (*desc.mutable_ingesters())[id];
    i.set_addr("127.0.0.1:1");
    i.set_zone("zone-a");
    i.set_state(::ring::ACTIVE);
    i.set_timestamp(clock.NowMillis() / 1000);
    if (shares) (*i.mutable_versions())[ring::kZoneProtocolKey] = ring::kZoneProtocol;
  }

  testing::FakeClock clock{1'000'000};
  testing::TempDir dir;
  testing::TestStore opened = testing::TestStore::Open(dir, clock, kPartitions);
  PartitionManager partitions{clock, 30s};
  prometheus::Registry registry;
  ::ring::Desc desc;
};

TEST_F(NodeZoneTest, AHungRingStoreHoldsBackNoExchange) {
  for (int32_t p = 0; p < kPartitions; ++p) partitions.SetReady(p, partitions.Assign(p), 0, false);
  TenantLimits defaults;
  defaults.max_global_streams_per_user = 100;
  LimitsProvider limits(defaults, {});
  Add("a", true);
  HangingKv kv(desc);
  config::ZoneConfig config;
  config.enabled = true;
  config.exchange_interval = 20ms;
  config.lease = 1s;
  NodeZone zone(config, "a", "zone-a", kPartitions, *opened.store, partitions, limits, clock, registry);
  struct ReleaseFirst {  // the hung read ends before the zone's threads are joined, pass or fail
    HangingKv& kv;
    ~ReleaseFirst() { kv.Release(); }
  } release{kv};

  zone.Start(kv, "ring", 1min);
  const zone::BucketKey key{"t", ""};
  ASSERT_TRUE(testing::WaitFor([&] { return std::string(zone.agent().Describe(key, 100).state) == "cold"; }, 10s))
      << "the first rounds give this node a lease from the bucket's home (itself)";
  ASSERT_TRUE(testing::WaitFor([&] { return kv.reads() >= 2; }, 10s)) << "a second read, which hangs";

  // Past the lease: only a round after this point renews it, while the ring read still hangs.
  clock.Advance(2s);
  EXPECT_TRUE(testing::WaitFor([&] { return std::string(zone.agent().Describe(key, 100).state) == "cold"; }, 10s))
      << "the rounds went on while the ring read hung";
  EXPECT_EQ(kv.reads(), 2) << "the read was still hanging";
}

// A live node of the zone that does not share its limits (not restarted yet with [zone]): this
// node admits on static shares, and says so, until the ring no longer lists one.
TEST_F(NodeZoneTest, ALiveNodeOfTheZoneThatDoesNotShareMakesItAdmitOnStaticShares) {
  LimitsProvider limits(TenantLimits{}, {});
  Add("a", true);
  Add("b", false);
  HangingKv kv(desc);
  config::ZoneConfig config;
  config.enabled = true;
  config.exchange_interval = 20ms;
  NodeZone zone(config, "a", "zone-a", kPartitions, *opened.store, partitions, limits, clock, registry);
  struct ReleaseFirst {
    HangingKv& kv;
    ~ReleaseFirst() { kv.Release(); }
  } release{kv};
  EXPECT_TRUE(zone.agent().Shared());
  zone.Start(kv, "ring", 1min);  // its first read of the ring is done before it returns
  EXPECT_FALSE(zone.agent().Shared());
  EXPECT_EQ(zone.agent().Describe({"t", ""}, 100).home, "a") << "b is no bucket's home";
  bool gauge = false;
  for (const auto& f : registry.Collect()) {
    if (f.name == "limitsd_zone_outsiders") gauge = f.metric.at(0).gauge.value == 1;
  }
  EXPECT_TRUE(gauge);
}

}  // namespace
}  // namespace limits
