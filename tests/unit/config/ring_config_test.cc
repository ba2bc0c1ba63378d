// The [ring] section: dskit's lifecycler defaults, every key read, errors naming the key.
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
  EXPECT_TRUE(c.status().IsInvalidArgument()) << c.status().ToString();
  return c.status().message();
}

RingConfig Ring(std::string_view toml, const std::vector<std::string>& sets = {}) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", sets);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? c->ring : RingConfig{};
}

TEST(RingConfigTest, DefaultsAreDskitsLifecyclerDefaults) {
  const RingConfig r = Ring("");
  EXPECT_EQ(r.store, "");
  EXPECT_TRUE(r.etcd_endpoints.empty());
  EXPECT_EQ(r.etcd_dial_timeout, 10s);
  EXPECT_EQ(r.prefix, "collectors/");
  EXPECT_EQ(r.key, "ingest-limits");
  EXPECT_EQ(r.instance_addr, "");
  EXPECT_EQ(r.instance_port, 0);
  EXPECT_EQ(r.num_tokens, 128);
  EXPECT_EQ(r.heartbeat_period, 5s);
  EXPECT_EQ(r.heartbeat_timeout, 1min);
  EXPECT_TRUE(r.unregister_on_shutdown);
}

TEST(RingConfigTest, ReadsEveryKey) {
  const RingConfig r = Ring(R"(
[ring]
store = "etcd"
etcd_endpoints = ["etcd-0.etcd:2379", "http://etcd-1.etcd:2379"]
etcd_dial_timeout = "3s"
prefix = "loki/"
key = "limits"
instance_addr = "10.1.2.3"
instance_port = 9096
num_tokens = 64
heartbeat_period = "2s"
heartbeat_timeout = "20s"
unregister_on_shutdown = false
)");
  EXPECT_EQ(r.store, "etcd");
  EXPECT_EQ(r.etcd_endpoints, (std::vector<std::string>{"etcd-0.etcd:2379", "http://etcd-1.etcd:2379"}));
  EXPECT_EQ(r.etcd_dial_timeout, 3s);
  EXPECT_EQ(r.prefix, "loki/");
  EXPECT_EQ(r.key, "limits");
  EXPECT_EQ(r.instance_addr, "10.1.2.3");
  EXPECT_EQ(r.instance_port, 9096);
  EXPECT_EQ(r.num_tokens, 64);
  EXPECT_EQ(r.heartbeat_period, 2s);
  EXPECT_EQ(r.heartbeat_timeout, 20s);
  EXPECT_FALSE(r.unregister_on_shutdown);
}

TEST(RingConfigTest, SetTakesACommaSeparatedListAndBooleans) {
  const RingConfig r = Ring("", {"ring.store=etcd", "ring.etcd_endpoints=h1:2379, h2:2379", "ring.num_tokens=32",
                                 "ring.unregister_on_shutdown=false", "ring.instance_addr=fd00::1"});
  EXPECT_EQ(r.etcd_endpoints, (std::vector<std::string>{"h1:2379", "h2:2379"}));
  EXPECT_EQ(r.num_tokens, 32);
  EXPECT_FALSE(r.unregister_on_shutdown);
  EXPECT_EQ(r.instance_addr, "fd00::1");
  // --set replaces the file's list.
  EXPECT_EQ(Ring("[ring]\netcd_endpoints = [\"a:1\", \"b:2\"]\n", {"ring.etcd_endpoints=c:3"}).etcd_endpoints,
            std::vector<std::string>{"c:3"});
  EXPECT_EQ(Ring("", {"ring.store=memberlist"}).store, "memberlist") << "served by the memberlist backend";
}

TEST(RingConfigTest, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf("[ring]\nstore = \"consul\"\n"), HasSubstr("ring.store: expected \"\" (no ring), \"etcd\" or \"memberlist\", got \"consul\""));
  EXPECT_THAT(ErrorOf("[ring]\nstore = \"etcd\"\n"), HasSubstr("ring.etcd_endpoints: must list at least one host:port"));
  EXPECT_THAT(ErrorOf("[ring]\nstore = \"etcd\"\netcd_endpoints = [\"etcd\"]\n"),
              HasSubstr("ring.etcd_endpoints: \"etcd\": expected host:port"));
  EXPECT_THAT(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=h1:2379,https://h2:2379"}),
              HasSubstr("ring.etcd_endpoints: \"https://h2:2379\" is https: set ring.etcd_tls_enabled = true"));
  EXPECT_EQ(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=https://h2:2379", "ring.etcd_tls_enabled=true"}), "<ok>");
  EXPECT_THAT(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=h:2379", "ring.etcd_tls_ca_path=/ca.pem"}),
              HasSubstr("ring.etcd_tls_ca_path: set ring.etcd_tls_enabled = true to use it"));
  EXPECT_THAT(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=h:2379", "ring.etcd_tls_enabled=true",
                           "ring.etcd_tls_ca_path=/nonexistent/ca.pem"}),
              HasSubstr("ring.etcd_tls_ca_path: cannot read"));
  EXPECT_THAT(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=h:2379", "ring.etcd_tls_enabled=true",
                           "ring.etcd_tls_key_path=/k.pem"}),
              HasSubstr("ring.etcd_tls_cert_path: required with ring.etcd_tls_key_path"));
  EXPECT_THAT(ErrorOf("", {"ring.store=etcd", "ring.etcd_endpoints=h:2379", "ring.etcd_username=limitsd"}),
              HasSubstr("ring.etcd_password: etcd_username and etcd_password go together"));
  EXPECT_THAT(ErrorOf("[ring]\netcd_endpoints = \"h1:2379\"\n"), HasSubstr("ring.etcd_endpoints: expected an array of strings"));
  EXPECT_THAT(ErrorOf("[ring]\netcd_endpoints = [1]\n"), HasSubstr("ring.etcd_endpoints: expected an array of strings"));
  EXPECT_THAT(ErrorOf("[ring]\nnum_tokens = 0\n"), HasSubstr("ring.num_tokens: must be between 1 and 8192, got 0"));
  EXPECT_THAT(ErrorOf("[ring]\ninstance_port = 70000\n"), HasSubstr("ring.instance_port: must be between 0 and 65535"));
  EXPECT_THAT(ErrorOf("[ring]\nheartbeat_period = \"1m\"\n"),
              HasSubstr("ring.heartbeat_timeout: must be longer than ring.heartbeat_period (1m), got 1m"));
  EXPECT_THAT(ErrorOf("[ring]\nheartbeat_period = \"0s\"\n"), HasSubstr("ring.heartbeat_period: must be positive"));
  EXPECT_THAT(ErrorOf("[ring]\netcd_dial_timeout = \"0s\"\n"), HasSubstr("ring.etcd_dial_timeout: must be positive"));
  EXPECT_THAT(ErrorOf("[ring]\nkey = \"\"\n"), HasSubstr("ring.key: must not be empty"));
  EXPECT_THAT(ErrorOf("[ring]\ninstance_addr = \"10.0.0.1:9095\"\n"), HasSubstr("ring.instance_addr: expected a host name or IP address without a port"));
  EXPECT_THAT(ErrorOf("[ring]\nunregister_on_shutdown = \"yes\"\n"), HasSubstr("ring.unregister_on_shutdown: expected true or false"));
  EXPECT_THAT(ErrorOf("", {"ring.unregister_on_shutdown=yes"}), HasSubstr("ring.unregister_on_shutdown: expected true or false"));
  EXPECT_THAT(ErrorOf("[ring]\nheartbeat_periood = \"5s\"\n"),
              HasSubstr("ring.heartbeat_periood: unknown key; did you mean \"heartbeat_period\"?"));
}

}  // namespace
}  // namespace limits::config
