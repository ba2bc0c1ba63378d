// What --check-config refuses at load time: durations and sizes beyond what the node keeps
// (issue 8 item 8), names, ports and paths that would misbehave at run time (item 22), Loki's
// ":port" listen form (issue 10 item 3).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "config/load_config.h"
#include "config/units.h"
#include "testing/temp_dir.h"

namespace limits::config {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string ErrorOf(std::string_view toml, const std::vector<std::string>& sets = {}) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", sets);
  return c.ok() ? "<ok>" : c.status().message();
}

// Issue 8 item 8: "1193047h" is 4294969200 s, which the u32 seconds of WindowsOf wrapped to
// 1904 s: an active window of half an hour where two months were asked for.
TEST(ConfigChecksTest, Item8_DurationsBeyondWhatTheStoreKeepsAreRejected) {
  EXPECT_THAT(ErrorOf("[windows]\nactive = \"1193047h\"\n"),
              HasSubstr("windows.active: must be at most 1193046h28m15s (2^32 - 1 seconds, what the node keeps), "
                        "got \"1193047h\" (limitsd.toml:2)"));
  EXPECT_EQ(ErrorOf("[windows]\nactive = \"1193046h28m15s\"\n"), "<ok>");  // the bound itself is kept exactly
  EXPECT_EQ(ParseConfig("[windows]\nactive = \"1193046h28m15s\"\n", "t")->windows.active, kMaxDuration);
  for (const char* key : {"rate", "bucket", "eviction_interval", "revoked_retention", "produce_interval", "wait_assign"}) {
    EXPECT_THAT(ErrorOf(std::string("[windows]\n") + key + " = \"49711d\"\n"),
                HasSubstr(std::string("windows.") + key + ": must be at most 1193046h28m15s"));
  }
  EXPECT_THAT(ErrorOf("", {"windows.eviction_interval=1193047h"}),
              HasSubstr("windows.eviction_interval: must be at most 1193046h28m15s"));
  // Sizes: RocksDB takes size_t, and the WAL bound doubles the write buffer.
  EXPECT_THAT(ErrorOf("[store]\nwrite_buffer = \"9223372036854775808\"\n"),
              HasSubstr("store.write_buffer: must be at most 9223372036854775807 bytes (2^63 - 1)"));
  EXPECT_THAT(ErrorOf("[store]\nblock_cache = \"16777215TiB\"\n"), HasSubstr("store.block_cache: must be at most"));
  EXPECT_EQ(ErrorOf("[store]\nblock_cache = \"8388607TiB\"\n"), "<ok>");
  // Decimals through the loader are exact too.
  EXPECT_EQ(ParseConfig("[windows]\nbucket = \"0.07h\"\nrate = \"0.07h\"\n", "t")->windows.bucket, 252s);
  EXPECT_EQ(ParseConfig("[store]\nblock_cache = \"1.001GB\"\n", "t")->store.block_cache_bytes, 1'001'000'000u);
}

// Issue 8 item 22: names no request or record can carry are refused, not kept as dead limits.
TEST(ConfigChecksTest, Item22_TenantAndPolicyNamesMustBeOneTo255Bytes) {
  const std::string long_name(256, 'x');
  EXPECT_THAT(ErrorOf("[limits.tenants.\"\"]\nmax_global_streams_per_user = 1\n"),
              HasSubstr("limits.tenants.\"\": a tenant name must be 1 to 255 bytes, got 0"));
  EXPECT_THAT(ErrorOf("[limits.tenants." + long_name + "]\nmax_global_streams_per_user = 1\n"),
              HasSubstr("a tenant name must be 1 to 255 bytes, got 256"));
  EXPECT_THAT(ErrorOf("[limits.defaults.policy_max_streams]\n\"\" = 3\n"),
              HasSubstr("limits.defaults.policy_override_limits.\"\": an ingestion policy name must be 1 to 255 bytes"));
  EXPECT_THAT(ErrorOf("[limits.tenants.t.policy_max_streams]\n" + long_name + " = 3\n"),
              HasSubstr("limits.tenants.t.policy_override_limits." + long_name + ": an ingestion policy name"));
  EXPECT_EQ(ErrorOf("[limits.tenants." + std::string(255, 'x') + "]\nmax_global_streams_per_user = 1\n"), "<ok>");
  // The overrides file holds to the same rule.
  EXPECT_THAT(ParseOverrides("[tenants.\"\"]\nmax_global_streams_per_user = 1\n", "o.toml").status().message(),
              HasSubstr("tenants.\"\": a tenant name must be 1 to 255 bytes"));
}

TEST(ConfigChecksTest, Item22_GrpcAndHttpOnOnePortIsRefused) {
  EXPECT_THAT(ErrorOf("[server]\ngrpc_listen = \"0.0.0.0:9000\"\nhttp_listen = \"127.0.0.1:9000\"\n"),
              HasSubstr("server.http_listen: port 9000 is also server.grpc_listen's"));
  EXPECT_THAT(ErrorOf("[server]\ngrpc_listen = \":9000\"\nhttp_listen = \":9000\"\n"),
              HasSubstr("server.http_listen: port 9000 is also server.grpc_listen's"));
  EXPECT_EQ(ErrorOf("[server]\ngrpc_listen = \"127.0.0.1:9000\"\nhttp_listen = \"127.0.0.2:9000\"\n"), "<ok>");
  EXPECT_EQ(ErrorOf("[server]\ngrpc_listen = \"127.0.0.1:0\"\nhttp_listen = \"127.0.0.1:0\"\n"), "<ok>");  // kernel picks
}

// Issue 25 item 2: the operator listener is a third port, checked against both others.
TEST(ConfigChecksTest, Issue25_TheOperatorListenerNeedsItsOwnPortAndItsTlsNeedsIt) {
  EXPECT_THAT(ErrorOf("[server]\nhttp_listen = \":3100\"\noperator_http_listen = \"127.0.0.1:3100\"\n"),
              HasSubstr("server.operator_http_listen: port 3100 is also server.http_listen's"));
  EXPECT_THAT(ErrorOf("[server]\ngrpc_listen = \":9095\"\noperator_http_listen = \":9095\"\n"),
              HasSubstr("server.operator_http_listen: port 9095 is also server.grpc_listen's"));
  EXPECT_THAT(ErrorOf("[server]\noperator_http_listen = \"localhost\"\n"),
              HasSubstr("server.operator_http_listen: expected host:port"));
  EXPECT_THAT(ErrorOf("[server.operator_http_tls_config]\ncert_file = \"c.pem\"\nkey_file = \"k.pem\"\n"),
              HasSubstr("server.operator_http_tls_config: set, but server.operator_http_listen is empty"));
  EXPECT_THAT(ErrorOf("[server]\noperator_http_listen = \"127.0.0.1:3101\"\n[server.operator_http_tls_config]\n"
                      "cert_file = \"c.pem\"\n"),
              HasSubstr("server.operator_http_tls_config"));
  Result<Config> c = ParseConfig("[server]\noperator_http_listen = \"127.0.0.1:3101\"\n", "t");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.operator_http_listen, "127.0.0.1:3101");
  EXPECT_TRUE(ParseConfig("", "t")->server.operator_http_listen.empty());
}

TEST(ConfigChecksTest, Item22_ADirectoryIsNotAConfigurationOrAnOverridesFile) {
  testing::TempDir dir;
  Result<Config> c = LoadConfig(dir.path());
  ASSERT_FALSE(c.ok());  // it used to read as an empty file: every default, the embedded mock
  EXPECT_THAT(c.status().message(), HasSubstr("cannot read " + dir.path() + ": is a directory"));
  Result<std::map<std::string, TenantOverrides>> o = LoadOverridesFile(dir.path());
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr("is a directory"));
}

// Issue 10 item 3: Loki's default listen form.
TEST(ConfigChecksTest, LokiColonPortListenAddressesAreAccepted) {
  Result<Config> c = ParseConfig("[server]\ngrpc_listen = \":9095\"\nhttp_listen = \":3100\"\n", "t");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->server.grpc_listen, ":9095");
  EXPECT_THAT(ErrorOf("[server]\ngrpc_listen = \"9095\"\n"), HasSubstr("server.grpc_listen: expected host:port"));
  EXPECT_THAT(ErrorOf("[server]\nhttp_listen = \"::1:80\"\n"), HasSubstr("server.http_listen: expected host:port"));
}

TEST(ConfigChecksTest, OverridesFormatIsTomlLokiOrByExtension) {
  EXPECT_THAT(ErrorOf("[limits]\noverrides_format = \"json\"\n"),
              HasSubstr("limits.overrides_format: expected \"\" (by the file's extension), \"toml\" or \"loki\""));
  EXPECT_TRUE(IsLokiOverrides("/etc/loki/runtime.yaml", ""));
  EXPECT_TRUE(IsLokiOverrides("runtime.yml", ""));
  EXPECT_FALSE(IsLokiOverrides("overrides.toml", ""));
  EXPECT_TRUE(IsLokiOverrides("overrides", "loki"));
  EXPECT_FALSE(IsLokiOverrides("overrides.yaml", "toml"));
}

// Issue 26 item 5: the topic limitsd may create, and what it gets.
TEST(ConfigChecksTest, Issue26_CreateTopicKeys) {
  Result<Config> defaults = ParseConfig("", "t");
  ASSERT_TRUE(defaults.ok());
  EXPECT_FALSE(defaults->kafka.create_topic);  // off by default: an operator creates the topic
  EXPECT_EQ(defaults->kafka.create_topic_replication_factor, -1);  // the broker's default
  EXPECT_EQ(defaults->kafka.create_topic_retention, 0ms);          // the broker's default
  Result<Config> c = ParseConfig("[kafka]\ncreate_topic = true\ncreate_topic_replication_factor = 3\n"
                                 "create_topic_retention = \"1d\"\n",
                                 "t");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(c->kafka.create_topic);
  EXPECT_EQ(c->kafka.create_topic_replication_factor, 3);
  EXPECT_EQ(c->kafka.create_topic_retention, 24h);
  EXPECT_TRUE(ParseConfig("", "t", {"kafka.create_topic=true"})->kafka.create_topic);
  EXPECT_THAT(ErrorOf("[kafka]\ncreate_topic_replication_factor = 0\n"),
              HasSubstr("kafka.create_topic_replication_factor: must be -1 (the broker's default) or at least 1"));
  EXPECT_THAT(ErrorOf("[kafka]\ncreate_topic_replication_factor = -2\n"),
              HasSubstr("kafka.create_topic_replication_factor: must be between -1 and 32767"));
  // Shorter than the active window, a replay would miss streams the window still counts.
  EXPECT_THAT(ErrorOf("[kafka]\ncreate_topic_retention = \"1h\"\n"),
              HasSubstr("kafka.create_topic_retention: must be 0 (the broker's default) or at least windows.active (2h)"));
  EXPECT_EQ(ErrorOf("[kafka]\ncreate_topic_retention = \"2h\"\n"), "<ok>");
  EXPECT_EQ(ErrorOf("[kafka]\ncreate_topic_retention = \"0s\"\n"), "<ok>");
  EXPECT_THAT(ErrorOf("[kafka]\ncreate_topics = true\n"), HasSubstr("did you mean \"create_topic\"?"));
}

}  // namespace
}  // namespace limits::config
