#include "config/load_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "testing/temp_dir.h"
#include "testing/test_certs.h"

namespace limits::config {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

std::string ErrorOf(std::string_view toml, const std::vector<std::string>& sets = {}) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", sets);
  if (c.ok()) return "<ok>";
  EXPECT_TRUE(c.status().IsInvalidArgument()) << c.status().ToString();
  return c.status().message();
}

Config Parse(std::string_view toml, const std::vector<std::string>& sets = {}) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", sets);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Config{};
}

TEST(LoadConfigTest, EmptyFileMeansDocumentedDefaults) {
  Config c = Parse("");
  EXPECT_EQ(c.node.zone, "zone-a");
  EXPECT_EQ(c.node.instance_id, Hostname());
  EXPECT_EQ(c.kafka.brokers, "");
  EXPECT_EQ(c.kafka.topic, "ingest-limits-metadata");
  EXPECT_EQ(c.kafka.num_partitions, 64);
  EXPECT_EQ(c.kafka.consumer_group, "limitsd-zone-a");
  EXPECT_TRUE(c.kafka.properties.empty());
  EXPECT_EQ(c.kafka.stall_timeout, 1min);
  EXPECT_EQ(c.kafka.max_consumer_restarts, 3);
  EXPECT_EQ(c.kafka.consumer_restart_window, 10min);
  EXPECT_EQ(c.store.path, "data");
  EXPECT_EQ(c.store.block_cache_bytes, 256ull << 20);
  EXPECT_EQ(c.store.write_buffer_bytes, 8ull << 20);
  EXPECT_EQ(c.windows.active, 2h);
  EXPECT_EQ(c.windows.rate, 5min);
  EXPECT_EQ(c.windows.bucket, 1min);
  EXPECT_EQ(c.windows.eviction_interval, 10min);
  EXPECT_EQ(c.windows.revoked_retention, 10min);
  EXPECT_EQ(c.windows.produce_interval, 1min);
  EXPECT_EQ(c.windows.wait_assign, 30s);
  EXPECT_EQ(c.server.grpc_listen, "0.0.0.0:9095");
  EXPECT_EQ(c.server.http_listen, "0.0.0.0:3100");
  EXPECT_TRUE(c.server.latch_readiness);  // Loki's semantics by default
  EXPECT_EQ(c.limits.overrides_file, "");
  EXPECT_FALSE(c.limits.enforce_rate);
  EXPECT_EQ(c.limits.max_tenants, 100'000);
  EXPECT_EQ(c.limits.max_rate_keys_per_tenant, 10'000);
  EXPECT_EQ(c.limits.max_rate_keys, 1'000'000);
  EXPECT_EQ(c.limits.defaults.max_global_streams_per_user, 5000u);
  EXPECT_DOUBLE_EQ(c.limits.defaults.ingestion_rate_mb, 4.0);
  EXPECT_DOUBLE_EQ(c.limits.defaults.ingestion_burst_size_mb, 6.0);
  EXPECT_TRUE(c.limits.defaults.policy_override_limits.empty());
  EXPECT_TRUE(c.limits.tenants.empty());
}

TEST(LoadConfigTest, TheShippedExampleIsValidAndStatesTheDefaults) {
  Result<Config> example = LoadConfig(LIMITSD_EXAMPLE_CONFIG);
  ASSERT_TRUE(example.ok()) << example.status().ToString();
  Config defaults = Parse("");
  EXPECT_EQ(example->kafka.num_partitions, defaults.kafka.num_partitions);
  EXPECT_EQ(example->windows.active, defaults.windows.active);
  EXPECT_EQ(example->store.block_cache_bytes, defaults.store.block_cache_bytes);
  EXPECT_EQ(example->limits.defaults, defaults.limits.defaults);
  EXPECT_EQ(example->kafka.consumer_group, "limitsd-zone-a");
  EXPECT_EQ(example->server.latch_readiness, defaults.server.latch_readiness);
  EXPECT_EQ(example->limits.enforce_rate, defaults.limits.enforce_rate);
  EXPECT_EQ(example->limits.max_tenants, defaults.limits.max_tenants);
  EXPECT_EQ(example->limits.max_rate_keys_per_tenant, defaults.limits.max_rate_keys_per_tenant);
  EXPECT_EQ(example->limits.max_rate_keys, defaults.limits.max_rate_keys);
  EXPECT_EQ(example->kafka.stall_timeout, defaults.kafka.stall_timeout);
  EXPECT_EQ(example->kafka.max_consumer_restarts, defaults.kafka.max_consumer_restarts);
  EXPECT_EQ(example->kafka.consumer_restart_window, defaults.kafka.consumer_restart_window);
  EXPECT_EQ(example->kafka.create_topic, defaults.kafka.create_topic);
  EXPECT_EQ(example->kafka.create_topic_replication_factor, defaults.kafka.create_topic_replication_factor);
  EXPECT_EQ(example->kafka.create_topic_retention, defaults.kafka.create_topic_retention);
}

TEST(LoadConfigTest, ReadsEveryKey) {
  Config c = Parse(R"(
[node]
zone = "eu-west-1b"
instance_id = "limitsd-2"
[kafka]
brokers = "k1:9092,k2:9092"
topic = "t"
num_partitions = 32
consumer_group = "g"
stall_timeout = "90s"
max_consumer_restarts = 5
consumer_restart_window = "30m"
[kafka.properties]
"security.protocol" = "SASL_SSL"
"fetch.wait.max.ms" = 10
"enable.idempotence" = true
[store]
path = "/var/lib/limitsd"
block_cache = "1GiB"
write_buffer = 134217728
[windows]
active = "1h"
rate = "2m"
bucket = "30s"
eviction_interval = "5m"
revoked_retention = "15m"
produce_interval = "30s"
wait_assign = "10s"
[server]
grpc_listen = "127.0.0.1:0"
http_listen = "[::1]:8080"
latch_readiness = false
[log]
level = "debug"
format = "logfmt"
[limits]
overrides_file = "/etc/limitsd/overrides.toml"
enforce_rate = true
max_tenants = 5000
max_rate_keys_per_tenant = 200
max_rate_keys = 300000
[limits.defaults]
max_global_streams_per_user = 100
ingestion_rate_mb = 8
ingestion_burst_size_mb = 12.5
policy_max_streams = { gold = 10, "silver tier" = 0 }
[limits.tenants."tenant-a"]
max_global_streams_per_user = 20000
[limits.tenants."tenant.b"]
policy_max_streams = { gold = 5 }
)");
  EXPECT_EQ(c.node.zone, "eu-west-1b");
  EXPECT_EQ(c.node.instance_id, "limitsd-2");
  EXPECT_EQ(c.kafka.brokers, "k1:9092,k2:9092");
  EXPECT_EQ(c.kafka.num_partitions, 32);
  EXPECT_EQ(c.kafka.consumer_group, "g");
  EXPECT_EQ(c.kafka.stall_timeout, 90s);
  EXPECT_EQ(c.kafka.max_consumer_restarts, 5);
  EXPECT_EQ(c.kafka.consumer_restart_window, 30min);
  EXPECT_EQ(c.kafka.properties.at("security.protocol"), "SASL_SSL");
  EXPECT_EQ(c.kafka.properties.at("fetch.wait.max.ms"), "10");
  EXPECT_EQ(c.kafka.properties.at("enable.idempotence"), "true");
  EXPECT_EQ(c.store.block_cache_bytes, 1ull << 30);
  EXPECT_EQ(c.store.write_buffer_bytes, 128ull << 20);
  EXPECT_EQ(c.windows.bucket, 30s);
  EXPECT_EQ(c.windows.wait_assign, 10s);
  EXPECT_EQ(c.server.http_listen, "[::1]:8080");
  EXPECT_FALSE(c.server.latch_readiness);
  EXPECT_EQ(c.log.format, "logfmt");
  EXPECT_TRUE(c.limits.enforce_rate);
  EXPECT_EQ(c.limits.max_tenants, 5000);
  EXPECT_EQ(c.limits.max_rate_keys_per_tenant, 200);
  EXPECT_EQ(c.limits.max_rate_keys, 300'000);
  EXPECT_EQ(c.limits.defaults.max_global_streams_per_user, 100u);
  EXPECT_DOUBLE_EQ(c.limits.defaults.ingestion_rate_mb, 8.0);
  EXPECT_DOUBLE_EQ(c.limits.defaults.ingestion_burst_size_mb, 12.5);
  EXPECT_EQ(c.limits.defaults.policy_override_limits,
            (std::map<std::string, PolicyLimits>{{"gold", {.max_global_streams_per_user = 10}},
                                                 {"silver tier", {.max_global_streams_per_user = 0}}}));
  ASSERT_EQ(c.limits.tenants.size(), 2u);
  EXPECT_EQ(c.limits.tenants.at("tenant-a").max_global_streams_per_user, 20000u);
  EXPECT_FALSE(c.limits.tenants.at("tenant-a").policy_override_limits.has_value());
  EXPECT_FALSE(c.limits.tenants.at("tenant-a").ingestion_rate_mb.has_value());
  EXPECT_EQ(*c.limits.tenants.at("tenant.b").policy_override_limits,
            (std::map<std::string, PolicyLimits>{{"gold", {.max_global_streams_per_user = 5}}}));
}

// A tenant's policies merge into the defaults' policy by policy, a named policy's entry
// replacing the default's whole: Loki decodes a tenant's YAML on top of limits_config, and Go's
// yaml adds to a map it decodes into.
TEST(LoadConfigTest, OverridesReplaceOnlyWhatTheySet) {
  Config c = Parse(R"(
[limits.defaults]
max_global_streams_per_user = 100
policy_max_streams = { gold = 10, silver = 20 }
[limits.tenants.t]
ingestion_rate_mb = 1.5
policy_max_streams = { gold = 3 }
)");
  TenantLimits t = ApplyOverrides(c.limits.defaults, c.limits.tenants.at("t"));
  EXPECT_EQ(t.max_global_streams_per_user, 100u);
  EXPECT_DOUBLE_EQ(t.ingestion_rate_mb, 1.5);
  EXPECT_DOUBLE_EQ(t.ingestion_burst_size_mb, 6.0);
  EXPECT_EQ(t.PolicyMaxStreams("gold"), 3u);
  EXPECT_EQ(t.PolicyMaxStreams("silver"), 20u);
}

// Issue 26 item 2: Loki's policy_override_limits in the TOML, with inherit_limits (Loki #23751),
// and the shorthand policy_max_streams naming a policy once.
TEST(LoadConfigTest, Issue26_PolicyOverrideLimitsAsLokiHasThem) {
  Config c = Parse(R"(
[limits.defaults]
max_global_streams_per_user = 1000
ingestion_rate_mb = 5
ingestion_burst_size_mb = 10
policy_max_streams = { bronze = 7 }
[limits.defaults.policy_override_limits.finance]
inherit_limits = true
[limits.defaults.policy_override_limits.ops]
inherit_limits = true
ingestion_rate_mb = 2
[limits.defaults.policy_override_limits.capped]
max_global_streams_per_user = 30
ingestion_burst_size_mb = 0
[limits.tenants.t.policy_override_limits.finance]
max_global_streams_per_user = 4
)");
  const TenantLimits& d = c.limits.defaults;
  EXPECT_EQ(d.PolicyMaxStreams("finance"), 1000u);
  EXPECT_EQ(d.PolicyRateMb("finance"), 5.0);
  EXPECT_EQ(d.PolicyRateMb("ops"), 2.0);
  EXPECT_EQ(d.PolicyMaxStreams("ops"), 1000u);
  EXPECT_EQ(d.PolicyBurstMb("ops"), 10.0);
  EXPECT_EQ(d.PolicyMaxStreams("capped"), 30u);
  EXPECT_EQ(d.PolicyRateMb("capped"), std::nullopt);  // a burst alone makes no bucket of its own
  EXPECT_EQ(d.PolicyMaxStreams("bronze"), 7u);
  EXPECT_EQ(d.PolicyMaxStreams("other"), std::nullopt);
  EXPECT_EQ(d.PolicyMaxStreams(""), std::nullopt);
  const TenantLimits t = ApplyOverrides(d, c.limits.tenants.at("t"));
  EXPECT_EQ(t.PolicyMaxStreams("finance"), 4u);  // the tenant's entry replaces the default's whole
  EXPECT_EQ(t.PolicyRateMb("finance"), std::nullopt);
  EXPECT_EQ(t.PolicyRateMb("ops"), 2.0);

  EXPECT_THAT(ErrorOf("[limits.defaults]\npolicy_max_streams = { gold = 1 }\n"
                      "[limits.defaults.policy_override_limits.gold]\nmax_global_streams_per_user = 2\n"),
              HasSubstr("limits.defaults.policy_max_streams: policy \"gold\" also has "
                        "policy_override_limits.gold.max_global_streams_per_user; set it in one place"));
  EXPECT_THAT(ErrorOf("[limits.defaults.policy_override_limits.gold]\ninherit_limits = \"yes\"\n"),
              HasSubstr("limits.defaults.policy_override_limits.gold.inherit_limits: expected true or false, got a string \"yes\""));
  EXPECT_THAT(ErrorOf("[limits.defaults.policy_override_limits.gold]\nmax_streams = 3\n"),
              HasSubstr("limits.defaults.policy_override_limits.gold.max_streams: unknown key"));
}

// --- validation: each error names the key, and the line when it came from the file --------

TEST(LoadConfigTest, UnknownKeyIsNamedWithItsLineAndASuggestion) {
  EXPECT_THAT(ErrorOf("[store]\npth = \"x\"\n"),
              HasSubstr("store.pth: unknown key; did you mean \"path\"? (limitsd.toml:2)"));
  EXPECT_THAT(ErrorOf("[nodes]\nzone = \"a\"\n"), HasSubstr("nodes: unknown key"));
  EXPECT_THAT(ErrorOf("[limits.tenants.t]\nmax_streams = 1\n"), HasSubstr("limits.tenants.t.max_streams: unknown key"));
}

TEST(LoadConfigTest, WrongTypeIsNamedWithItsLine) {
  EXPECT_THAT(ErrorOf("[kafka]\n\nnum_partitions = \"64\"\n"),
              HasSubstr("kafka.num_partitions: expected an integer, got a string \"64\" (limitsd.toml:3)"));
  EXPECT_THAT(ErrorOf("[node]\nzone = 5\n"), HasSubstr("node.zone: expected a string, got an integer (limitsd.toml:2)"));
  EXPECT_THAT(ErrorOf("[windows]\nactive = 7200\n"),
              HasSubstr("windows.active: expected a duration string like \"30s\", \"5m\" or \"2h\", got an integer"));
  EXPECT_THAT(ErrorOf("[limits.defaults]\npolicy_max_streams = { gold = \"x\" }\n"),
              HasSubstr("limits.defaults.policy_max_streams.gold: expected an integer"));
  EXPECT_THAT(ErrorOf("kafka = 3\n"), HasSubstr("kafka: expected a table, got an integer"));
}

TEST(LoadConfigTest, SyntaxErrorNamesTheLine) {
  EXPECT_THAT(ErrorOf("[node]\nzone = \"a\"\nbroken line\n"), HasSubstr("limitsd.toml:3: syntax error"));
}

TEST(LoadConfigTest, BadValuesAreNamed) {
  EXPECT_THAT(ErrorOf("[windows]\nactive = \"2x\"\n"), HasSubstr("windows.active: invalid duration \"2x\""));
  EXPECT_THAT(ErrorOf("[store]\nblock_cache = \"lots\"\n"), HasSubstr("store.block_cache: invalid size \"lots\""));
  EXPECT_THAT(ErrorOf("[store]\nwrite_buffer = \"1KiB\"\n"), HasSubstr("store.write_buffer: must be at least 1MiB"));
  EXPECT_THAT(ErrorOf("[server]\ngrpc_listen = \"9095\"\n"), HasSubstr("server.grpc_listen: expected host:port"));
  EXPECT_THAT(ErrorOf("[server]\nhttp_listen = \"h:99999\"\n"), HasSubstr("server.http_listen: expected host:port"));
  EXPECT_THAT(ErrorOf("[log]\nlevel = \"loud\"\n"), HasSubstr("log.level: expected debug, info, warn or error"));
  EXPECT_THAT(ErrorOf("[node]\nzone = \"\"\n"), HasSubstr("node.zone: must not be empty"));
  EXPECT_THAT(ErrorOf("[limits.defaults]\nmax_global_streams_per_user = -1\n"),
              HasSubstr("limits.defaults.max_global_streams_per_user: must be between 0 and"));
  EXPECT_THAT(ErrorOf("[limits.defaults]\ningestion_rate_mb = -0.5\n"),
              HasSubstr("limits.defaults.ingestion_rate_mb: must be a finite number >= 0"));
  EXPECT_THAT(ErrorOf("[limits.defaults]\ningestion_rate_mb = nan\n"),
              HasSubstr("limits.defaults.ingestion_rate_mb: must be a finite number >= 0"));
}

TEST(LoadConfigTest, MemoryBoundsArePositive) {
  EXPECT_THAT(ErrorOf("[limits]\nmax_tenants = 0\n"), HasSubstr("limits.max_tenants"));
  EXPECT_THAT(ErrorOf("[limits]\nmax_tenants = 16777217\n"), HasSubstr("limits.max_tenants"));
  EXPECT_THAT(ErrorOf("[limits]\nmax_rate_keys_per_tenant = 0\n"), HasSubstr("limits.max_rate_keys_per_tenant"));
  EXPECT_THAT(ErrorOf("[limits]\nmax_rate_keys = 0\n"), HasSubstr("limits.max_rate_keys"));
}

TEST(LoadConfigTest, ZeroPartitionsIsRejected) {
  EXPECT_THAT(ErrorOf("[kafka]\nnum_partitions = 0\n"),
              HasSubstr("kafka.num_partitions: must be between 1 and 100000, got 0 (limitsd.toml:2)"));
}

TEST(LoadConfigTest, ConsumerRecoveryKeysAreBounded) {
  EXPECT_THAT(ErrorOf("[kafka]\nstall_timeout = \"500ms\"\n"), HasSubstr("kafka.stall_timeout: must be at least 1s, got 500ms"));
  EXPECT_THAT(ErrorOf("[kafka]\nconsumer_restart_window = \"0s\"\n"),
              HasSubstr("kafka.consumer_restart_window: must be positive, got 0s"));
  EXPECT_THAT(ErrorOf("[kafka]\nmax_consumer_restarts = -1\n"),
              HasSubstr("kafka.max_consumer_restarts: must be between 0 and 1000, got -1 (limitsd.toml:2)"));
  EXPECT_EQ(ErrorOf("[kafka]\nmax_consumer_restarts = 0\nstall_timeout = \"1s\"\n"), "<ok>");
}

TEST(LoadConfigTest, NonPositiveWindowsAreRejected) {
  for (const char* key : {"active", "rate", "bucket", "eviction_interval", "revoked_retention", "produce_interval",
                          "wait_assign"}) {
    EXPECT_THAT(ErrorOf(std::string("[windows]\n") + key + " = \"0s\"\n"),
                HasSubstr(std::string("windows.") + key + ": must be positive, got 0s"));
  }
}

TEST(LoadConfigTest, RateWindowMustBeAMultipleOfTheBucket) {
  EXPECT_THAT(ErrorOf("[windows]\nrate = \"5m\"\nbucket = \"2m\"\n"),
              HasSubstr("windows.rate: must be a whole multiple of windows.bucket (2m), got 5m"));
  EXPECT_EQ(ErrorOf("[windows]\nrate = \"6m\"\nbucket = \"2m\"\n"), "<ok>");
}

TEST(LoadConfigTest, StoreWindowsAreWholeSeconds) {
  EXPECT_THAT(ErrorOf("[windows]\nbucket = \"1500ms\"\nrate = \"3s\"\n"),
              HasSubstr("windows.bucket: must be a whole number of seconds, got 1s500ms"));
  EXPECT_EQ(ErrorOf("[windows]\nwait_assign = \"1500ms\"\n"), "<ok>");
}

TEST(LoadConfigTest, RateWindowCannotExceedTheActiveWindow) {
  EXPECT_THAT(ErrorOf("[windows]\nactive = \"1m\"\n"), HasSubstr("windows.rate: must not exceed windows.active (1m)"));
}

TEST(LoadConfigTest, EveryProblemIsReportedAtOnce) {
  std::string err = ErrorOf("[node]\nzon = \"a\"\n[kafka]\nnum_partitions = \"x\"\n");
  EXPECT_THAT(err, HasSubstr("node.zon: unknown key"));
  EXPECT_THAT(err, HasSubstr("kafka.num_partitions: expected an integer"));
}

// --- --set -------------------------------------------------------------------------------

TEST(LoadConfigTest, SetOverridesTheFileWithTypedValues) {
  Config c = Parse("[kafka]\nbrokers = \"a:1\"\nnum_partitions = 8\n",
                   {"kafka.brokers=host:9092", "kafka.num_partitions=32", "node.instance_id=limitsd-0",
                    "windows.active=1h", "store.block_cache=1GiB", "limits.defaults.ingestion_rate_mb=2.5",
                    "limits.defaults.max_global_streams_per_user=0"});
  EXPECT_EQ(c.kafka.brokers, "host:9092");
  EXPECT_EQ(c.kafka.num_partitions, 32);
  EXPECT_EQ(c.node.instance_id, "limitsd-0");
  EXPECT_EQ(c.windows.active, 1h);
  EXPECT_EQ(c.store.block_cache_bytes, 1ull << 30);
  EXPECT_DOUBLE_EQ(c.limits.defaults.ingestion_rate_mb, 2.5);
  EXPECT_EQ(c.limits.defaults.max_global_streams_per_user, 0u);
}

TEST(LoadConfigTest, SetReachesQuotedTenantsPoliciesAndDottedKafkaProperties) {
  Config c = Parse("", {"limits.tenants.\"tenant.a\".max_global_streams_per_user=7",
                        "limits.defaults.policy_max_streams.gold=3", "kafka.properties.sasl.mechanism=PLAIN",
                        "kafka.properties.\"client.id\"=x", "node.zone=zone-b"});
  EXPECT_EQ(c.limits.tenants.at("tenant.a").max_global_streams_per_user, 7u);
  EXPECT_EQ(c.limits.defaults.PolicyMaxStreams("gold"), 3u);
  EXPECT_EQ(c.kafka.properties.at("sasl.mechanism"), "PLAIN");
  EXPECT_EQ(c.kafka.properties.at("client.id"), "x");
  EXPECT_EQ(c.kafka.consumer_group, "limitsd-zone-b");  // derived after --set
}

TEST(LoadConfigTest, PerClientKafkaPropertiesFromFileAndSet) {
  Config c = Parse(R"(
[kafka.consumer_properties]
"session.timeout.ms" = 30000
[kafka.producer_properties]
"linger.ms" = "50"
)",
                   {"kafka.consumer_properties.group.instance.id=pod-0", "kafka.producer_properties.acks=all"});
  EXPECT_TRUE(c.kafka.properties.empty());
  EXPECT_EQ(c.kafka.consumer_properties.at("session.timeout.ms"), "30000");
  EXPECT_EQ(c.kafka.consumer_properties.at("group.instance.id"), "pod-0");
  EXPECT_EQ(c.kafka.producer_properties.at("linger.ms"), "50");
  EXPECT_EQ(c.kafka.producer_properties.at("acks"), "all");
}

// Issue 25 item 1: dskit's server TLS keys, and a bad one named before any listener starts.
TEST(LoadConfigTest, GrpcTlsKeysAreDskitsAndBadFilesAreNamed) {
  testing::TempDir dir;
  testing::TestCerts ca(dir.path());
  const testing::CertPair server = ca.Server("server");
  const std::string tls = "[server.grpc_tls_config]\ncert_file = \"" + server.cert + "\"\nkey_file = \"" +
                          server.key + "\"\nclient_ca_file = \"" + ca.ca() +
                          "\"\nclient_auth_type = \"RequireAndVerifyClientCert\"\n";
  Config c = Parse("[server]\ntls_min_version = \"VersionTLS12\"\n"
                   "tls_cipher_suites = \"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256\"\ntls_reload_interval = \"2s\"\n" +
                   tls);
  EXPECT_EQ(c.server.grpc_tls.cert_file, server.cert);
  EXPECT_EQ(c.server.grpc_tls.client_auth_type, "RequireAndVerifyClientCert");
  EXPECT_EQ(c.server.tls_reload_interval, 2s);
  const Config defaults;
  EXPECT_FALSE(defaults.server.grpc_tls.enabled());

  EXPECT_THAT(ErrorOf("", {"server.grpc_tls_config.cert_file=" + dir.Sub("nope.pem"),
                           "server.grpc_tls_config.key_file=" + server.key}),
              HasSubstr("server.grpc_tls_config.cert_file: cannot read"));
  EXPECT_THAT(ErrorOf("", {"server.grpc_tls_config.cert_file=" + server.cert}),
              HasSubstr("server.grpc_tls_config.key_file: required with server.grpc_tls_config.cert_file"));
  EXPECT_THAT(ErrorOf(tls, {"server.grpc_tls_config.client_auth_type=Mutual"}),
              HasSubstr("server.grpc_tls_config.client_auth_type: unknown client_auth_type \"Mutual\""));
  EXPECT_THAT(ErrorOf(tls, {"server.tls_min_version=VersionTLS13"}),
              HasSubstr("server.tls_min_version: VersionTLS13 cannot be enforced on the gRPC listener"));
  EXPECT_THAT(ErrorOf("", {"server.tls_min_version=TLS1.2"}), HasSubstr("server.tls_min_version: one of"));
  EXPECT_THAT(ErrorOf("", {"server.tls_cipher_suites=AES128-SHA"}),
              HasSubstr("server.tls_cipher_suites: unknown cipher suite \"AES128-SHA\""));
  EXPECT_THAT(ErrorOf("", {"server.http_tls_config.key_file=" + server.key}),
              HasSubstr("server.http_tls_config.cert_file: required with server.http_tls_config.key_file"));
  // The HTTP listener is ours: TLS 1.3 only can be held there.
  const Config http = Parse("", {"server.http_tls_config.cert_file=" + server.cert,
                                 "server.http_tls_config.key_file=" + server.key, "server.tls_min_version=VersionTLS13"});
  EXPECT_TRUE(http.server.http_tls.enabled());
  EXPECT_THAT(ErrorOf("", {"server.grpc_tls_config.tls_enabled=true"}),
              HasSubstr("server.grpc_tls_config.tls_enabled"));
}

// Found by tests/fuzz/toml_config_fuzz: toml11 3.7.1 reads out of bounds on a literal string
// that is not UTF-8. TOML is UTF-8: such text is refused before toml11 parses it.
TEST(LoadConfigTest, TextThatIsNotUtf8IsRefusedBeforeItParses) {
  EXPECT_THAT(ErrorOf(std::string("'\xff'")), HasSubstr("limitsd.toml: not UTF-8 (byte 1 of 3)"));
  Result<std::map<std::string, TenantOverrides>> o = ParseOverrides("[tenants.t]\nx = '\xc3'\n", "o.toml");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr("o.toml: not UTF-8"));
}

// Found by tests/fuzz/toml_config_fuzz: toml11 3.7.1 reads before an empty array when a
// dotted key or a table header goes through the key that holds it (UB; a crash, not an error).
TEST(LoadConfigTest, AKeyThatGoesThroughAnEmptyArrayIsAnErrorNotACrash) {
  const std::string message = "goes through a key that holds an empty array ([]); an array holds no keys";
  EXPECT_THAT(ErrorOf("[ring]\netcd_endpoints = []\netcd_endpoints.x = 1\n"), HasSubstr("limitsd.toml: a dotted key"));
  EXPECT_THAT(ErrorOf("[ring]\netcd_endpoints = []\netcd_endpoints.x = 1\n"), HasSubstr(message));
  EXPECT_THAT(ErrorOf("x = [ ]\n[x.y]\nz = 1\n"), HasSubstr(message));
  Result<std::map<std::string, TenantOverrides>> o = ParseOverrides("[tenants]\nt = []\n[tenants.t.x]\n", "o.toml");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(), HasSubstr(message));
  // An array of tables still takes a table header below its last table.
  EXPECT_THAT(ErrorOf("[[x]]\na = 1\n[x.y]\nb = 2\n"), Not(HasSubstr(message)));
}

TEST(LoadConfigTest, SetErrorsSayTheyCameFromSet) {
  EXPECT_THAT(ErrorOf("", {"kafka.num_partitions=many"}),
              HasSubstr("kafka.num_partitions: expected an integer, got a string \"many\" (from --set)"));
  EXPECT_THAT(ErrorOf("", {"kafka.brokerz=x"}), HasSubstr("kafka.brokerz: unknown key; did you mean \"brokers\"? (from --set)"));
  EXPECT_THAT(ErrorOf("", {"no-equals-sign"}), HasSubstr("--set no-equals-sign: expected key=value"));
  EXPECT_THAT(ErrorOf("", {"a..b=1"}), HasSubstr("--set a..b=1: expected key=value"));
  EXPECT_THAT(ErrorOf("[node]\nzone = \"a\"\n", {"node.zone.x=1"}), HasSubstr("node.zone is not a table"));
}

// --- files -------------------------------------------------------------------------------

TEST(LoadConfigTest, MissingFileIsNamed) {
  Result<Config> c = LoadConfig("/nonexistent/limitsd.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("/nonexistent/limitsd.toml"));
}

TEST(LoadConfigTest, FileErrorsNameTheFile) {
  testing::TempDir dir;
  const std::string path = dir.Sub("c.toml");
  std::ofstream(path) << "[windows]\n\nrate = \"90s\"\n";
  Result<Config> c = LoadConfig(path);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.status().message(), HasSubstr("windows.rate: must be a whole multiple of windows.bucket"));
  std::ofstream(path) << "[windows]\n\nrate = 7\n";
  EXPECT_THAT(LoadConfig(path).status().message(), HasSubstr("(" + path + ":3)"));
}

TEST(OverridesFileTest, ParsesTenantTables) {
  auto o = ParseOverrides(R"(
[tenants."tenant-a"]
max_global_streams_per_user = 20000
[tenants.b]
ingestion_burst_size_mb = 1
policy_max_streams = { p = 2 }
)",
                          "overrides.toml");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_EQ(o->size(), 2u);
  EXPECT_EQ(o->at("tenant-a").max_global_streams_per_user, 20000u);
  EXPECT_DOUBLE_EQ(*o->at("b").ingestion_burst_size_mb, 1.0);
  EXPECT_EQ(o->at("b").policy_override_limits->at("p").max_global_streams_per_user, 2u);
}

TEST(OverridesFileTest, ErrorsNameKeyAndLine) {
  auto o = ParseOverrides("[tenants.a]\nmax_global_streams_per_user = \"x\"\n", "overrides.toml");
  ASSERT_FALSE(o.ok());
  EXPECT_THAT(o.status().message(),
              HasSubstr("tenants.a.max_global_streams_per_user: expected an integer, got a string \"x\" (overrides.toml:2)"));
  EXPECT_THAT(ParseOverrides("[tenant.a]\n", "o.toml").status().message(), HasSubstr("tenant: unknown key"));
  EXPECT_FALSE(LoadOverridesFile("/nonexistent/o.toml").ok());
}

}  // namespace
}  // namespace limits::config
