// [ring] memberlist_* keys: dskit's defaults, every key read, errors naming the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load_config.h"

namespace limits::config {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string ErrorOf(std::string_view toml, const std::vector<std::string>& sets = {}) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", sets);
  if (c.ok()) return "<ok>";
  return c.status().message();
}

TEST(MemberlistConfigTest, DefaultsAreDskits) {
  Result<Config> c = ParseConfig("", "limitsd.toml", {});
  ASSERT_TRUE(c.ok());
  const RingConfig& r = c->ring;
  EXPECT_TRUE(r.memberlist_join.empty());
  EXPECT_EQ(r.memberlist_bind_addr, "0.0.0.0");
  EXPECT_EQ(r.memberlist_bind_port, 7946);
  EXPECT_EQ(r.memberlist_node_name, "");
  EXPECT_FALSE(r.memberlist_randomize_node_name);
  EXPECT_EQ(r.memberlist_cluster_label, "");
  EXPECT_EQ(r.memberlist_gossip_interval, 200ms);
  EXPECT_EQ(r.memberlist_gossip_nodes, 3);
  EXPECT_EQ(r.memberlist_pullpush_interval, 30s);
  EXPECT_EQ(r.memberlist_gossip_to_dead_nodes_time, 30s);
  EXPECT_EQ(r.memberlist_dead_node_reclaim_time, 0ms);
  EXPECT_EQ(r.memberlist_retransmit_factor, 4);
  EXPECT_EQ(r.memberlist_left_ingesters_timeout, 5min);
  EXPECT_EQ(r.memberlist_leave_timeout, 20s);
  EXPECT_EQ(r.memberlist_probe_interval, 5s);
  EXPECT_EQ(r.memberlist_probe_timeout, 2s);
}

TEST(MemberlistConfigTest, EveryKeyIsRead) {
  Result<Config> c = ParseConfig(R"(
[ring]
store = "memberlist"
memberlist_join = ["loki-memberlist.loki.svc:7946", "10.0.0.7", "[fd00::1]:7946"]
memberlist_bind_addr = "10.0.0.5"
memberlist_bind_port = 17946
memberlist_advertise_addr = "10.0.0.6"
memberlist_advertise_port = 27946
memberlist_node_name = "limits-0"
memberlist_randomize_node_name = true
memberlist_cluster_label = "loki-prod"
memberlist_cluster_label_verification_disabled = true
memberlist_gossip_interval = "1s"
memberlist_gossip_nodes = 5
memberlist_pullpush_interval = "1m"
memberlist_gossip_to_dead_nodes_time = "10s"
memberlist_dead_node_reclaim_time = "2m"
memberlist_retransmit_factor = 2
memberlist_stream_timeout = "3s"
memberlist_probe_interval = "2s"
memberlist_probe_timeout = "1s"
memberlist_left_ingesters_timeout = "10m"
memberlist_leave_timeout = "5s"
memberlist_min_join_backoff = "2s"
memberlist_max_join_backoff = "30s"
memberlist_rejoin_interval = "5m"
)",
                                 "limitsd.toml", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const RingConfig& r = c->ring;
  EXPECT_EQ(r.memberlist_join.size(), 3u);
  EXPECT_EQ(r.memberlist_bind_port, 17946);
  EXPECT_EQ(r.memberlist_advertise_port, 27946);
  EXPECT_EQ(r.memberlist_node_name, "limits-0");
  EXPECT_TRUE(r.memberlist_randomize_node_name);
  EXPECT_EQ(r.memberlist_cluster_label, "loki-prod");
  EXPECT_TRUE(r.memberlist_cluster_label_verification_disabled);
  EXPECT_EQ(r.memberlist_gossip_nodes, 5);
  EXPECT_EQ(r.memberlist_dead_node_reclaim_time, 2min);
  EXPECT_EQ(r.memberlist_rejoin_interval, 5min);
  // From the command line, a list is comma-separated.
  Result<Config> set = ParseConfig("", "limitsd.toml", {"ring.memberlist_join=a:1,b:2"});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->ring.memberlist_join, (std::vector<std::string>{"a:1", "b:2"}));
}

TEST(MemberlistConfigTest, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_join = [\"host:0\"]"), HasSubstr("ring.memberlist_join"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_join = [\"a b\"]"), HasSubstr("ring.memberlist_join"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_join = \"host:7946\""), HasSubstr("ring.memberlist_join"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_bind_addr = \"eth0\""), HasSubstr("ring.memberlist_bind_addr"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_bind_port = 70000"), HasSubstr("ring.memberlist_bind_port"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_advertise_addr = \"pod.example\""), HasSubstr("ring.memberlist_advertise_addr"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_cluster_label = \"" + std::string(256, 'x') + "\""),
              HasSubstr("ring.memberlist_cluster_label"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_gossip_interval = \"0s\""), HasSubstr("ring.memberlist_gossip_interval"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_gossip_nodes = 0"), HasSubstr("ring.memberlist_gossip_nodes"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_probe_timeout = \"5s\""), HasSubstr("ring.memberlist_probe_timeout"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_min_join_backoff = \"2m\""), HasSubstr("ring.memberlist_min_join_backoff"));
  EXPECT_THAT(ErrorOf("[ring]\nmemberlist_joins = []"), HasSubstr("memberlist_join"));  // unknown key, a suggestion
}

}  // namespace
}  // namespace limits::config
