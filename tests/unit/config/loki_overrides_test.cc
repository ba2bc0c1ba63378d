// Loki's runtime-config YAML read as the overrides file (issue 10 item 3).
#include "config/loki_overrides.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "config/load_config.h"
#include "testing/temp_dir.h"

namespace limits::config {
namespace {

using ::testing::HasSubstr;

// A runtime config as Loki operators write it, with keys limitsd does not use.
constexpr char kRuntimeConfig[] = R"(# Loki runtime configuration
overrides:
  tenant-a:
    max_global_streams_per_user: 20000
    ingestion_rate_mb: 10
    ingestion_burst_size_mb: 20.5
    retention_period: 744h
    per_stream_rate_limit: 5MB
    policy_override_limits:
      gold:
        max_global_streams_per_user: 100
        ingestion_rate_mb: 2
      silver:
        ingestion_rate_mb: 1
  "tenant.b":
    ingestion_rate_mb: 0.5
  tenant-c:
configs:
  tenant-a:
    log_push_request: true
multi_kv_config:
  primary: consul
)";

TEST(LokiOverridesTest, ReadsLokisKeysAndIgnoresTheRest) {
  Result<std::map<std::string, TenantOverrides>> o = ParseLokiOverrides(kRuntimeConfig, "runtime.yaml");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  ASSERT_EQ(o->size(), 3u);
  const TenantOverrides& a = o->at("tenant-a");
  EXPECT_EQ(a.max_global_streams_per_user, 20000u);
  EXPECT_DOUBLE_EQ(*a.ingestion_rate_mb, 10.0);
  EXPECT_DOUBLE_EQ(*a.ingestion_burst_size_mb, 20.5);
  // silver sets no stream limit: its streams count in the tenant's bucket.
  const TenantLimits resolved = ApplyOverrides(TenantLimits{}, a);
  EXPECT_EQ(resolved.PolicyMaxStreams("gold"), 100u);
  EXPECT_EQ(resolved.PolicyMaxStreams("silver"), std::nullopt);
  const TenantOverrides& b = o->at("tenant.b");
  EXPECT_FALSE(b.max_global_streams_per_user);
  EXPECT_DOUBLE_EQ(*b.ingestion_rate_mb, 0.5);
  EXPECT_EQ(o->at("tenant-c"), TenantOverrides{});  // null: Loki's defaults
  EXPECT_TRUE(ParseLokiOverrides("", "r.yaml")->empty());
  EXPECT_TRUE(ParseLokiOverrides("overrides:\n", "r.yaml")->empty());
  EXPECT_TRUE(ParseLokiOverrides("configs: {}\n", "r.yaml")->empty());
}

TEST(LokiOverridesTest, WrongTypesAreNamedWithKeyAndLine) {
  Result<std::map<std::string, TenantOverrides>> o = ParseLokiOverrides(R"(overrides:
  t:
    max_global_streams_per_user: lots
    ingestion_rate_mb: "4"
    ingestion_burst_size_mb: -1
    policy_override_limits:
      gold:
        max_global_streams_per_user: 1.5
  u: 7
  v:
    policy_override_limits: [a]
)",
                                                                        "runtime.yaml");
  ASSERT_FALSE(o.ok());
  const std::string m = o.status().message();
  EXPECT_THAT(m, HasSubstr("overrides.t.max_global_streams_per_user: expected an integer, got \"lots\" (runtime.yaml:3)"));
  // Quoted numbers are strings in YAML, and Loki refuses them: so do we.
  EXPECT_THAT(m, HasSubstr("overrides.t.ingestion_rate_mb: expected a number, got a string \"4\" (runtime.yaml:4)"));
  EXPECT_THAT(m, HasSubstr("overrides.t.ingestion_burst_size_mb: must be a finite number >= 0, got -1 (runtime.yaml:5)"));
  EXPECT_THAT(m, HasSubstr("overrides.t.policy_override_limits.gold.max_global_streams_per_user: expected an integer, "
                           "got \"1.5\" (runtime.yaml:8)"));
  EXPECT_THAT(m, HasSubstr("overrides.u: expected a map of limits, got \"7\" (runtime.yaml:9)"));
  EXPECT_THAT(m, HasSubstr("overrides.v.policy_override_limits: expected a map of policy -> limits, got a list "
                           "(runtime.yaml:11)"));
  EXPECT_THAT(ParseLokiOverrides("overrides: [1]\n", "r.yaml").status().message(),
              HasSubstr("overrides: expected a map of tenant -> limits, got a list (r.yaml:1)"));
  EXPECT_THAT(ParseLokiOverrides("overrides:\n  t: {a: [}\n", "r.yaml").status().message(),
              HasSubstr("r.yaml:2: syntax error"));
  EXPECT_THAT(ParseLokiOverrides("overrides:\n  \"\": {}\n", "r.yaml").status().message(),
              HasSubstr("overrides.\"\": a tenant name must be 1 to 255 bytes, got 0 (r.yaml:2)"));
}

TEST(LokiOverridesTest, TheFileIsPickedByExtensionOrFormat) {
  testing::TempDir dir;
  const std::string yaml = dir.Sub("runtime.yaml");
  std::ofstream(yaml) << "overrides:\n  t:\n    max_global_streams_per_user: 3\n";
  Result<std::map<std::string, TenantOverrides>> o = LoadOverridesFile(yaml);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->at("t").max_global_streams_per_user, 3u);
  const std::string plain = dir.Sub("runtime-config");
  std::ofstream(plain) << "overrides:\n  t:\n    max_global_streams_per_user: 4\n";
  EXPECT_FALSE(LoadOverridesFile(plain).ok());  // TOML by default
  EXPECT_EQ(LoadOverridesFile(plain, "loki")->at("t").max_global_streams_per_user, 4u);
}

// Loki's TestLimits_PolicyInheritLimitsYAML and TestLimits_PolicyInheritLimits
// (pkg/validation/limits_test.go, #23751): an inheriting policy takes every figure it does not
// set from its tenant; a policy not listed, or none, has no figures of its own.
TEST(LokiOverridesTest, Issue26_InheritLimitsAsLokisTestsHaveIt) {
  Result<std::map<std::string, TenantOverrides>> o = ParseLokiOverrides(R"(overrides:
  t:
    ingestion_rate_mb: 5
    ingestion_burst_size_mb: 10
    max_global_streams_per_user: 1000
    policy_override_limits:
      finance: {inherit_limits: true}
      ops: {inherit_limits: true, ingestion_rate_mb: 2}
      partial: {inherit_limits: true, ingestion_rate_mb: 2, max_streams_per_user: 7}
      plain: {max_streams_per_user: 7}
)",
                                                                        "runtime.yaml");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  const TenantLimits t = ApplyOverrides(TenantLimits{}, o->at("t"));
  EXPECT_EQ(t.PolicyRateMb("finance"), 5.0);
  EXPECT_EQ(t.PolicyMaxStreams("finance"), 1000u);
  EXPECT_EQ(t.PolicyBurstMb("finance"), 10.0);
  EXPECT_EQ(t.PolicyRateMb("ops"), 2.0);
  EXPECT_EQ(t.PolicyMaxStreams("ops"), 1000u);
  EXPECT_EQ(t.PolicyRateMb("partial"), 2.0);
  EXPECT_EQ(t.PolicyBurstMb("partial"), 10.0);
  EXPECT_EQ(t.PolicyMaxStreams("partial"), 1000u);
  EXPECT_EQ(t.PolicyMaxStreams("plain"), std::nullopt);  // a local limit only: the tenant's bucket
  EXPECT_EQ(t.PolicyRateMb("plain"), std::nullopt);
  EXPECT_EQ(t.PolicyMaxStreams("other"), std::nullopt);
  EXPECT_EQ(t.PolicyMaxStreams(""), std::nullopt);
  EXPECT_THAT(ParseLokiOverrides("overrides:\n  t:\n    policy_override_limits:\n      p: {inherit_limits: 1}\n", "r.yaml")
                  .status()
                  .message(),
              HasSubstr("overrides.t.policy_override_limits.p.inherit_limits: expected true or false"));
}

// Issue 26 item 3: runtime_config.file lists several files; dskit merges them left to right,
// maps key by key at every depth, anything else replaced whole.
TEST(LokiOverridesTest, Issue26_SeveralRuntimeConfigFilesMergeAsDskitMergesThem) {
  testing::TempDir dir;
  const std::string base = dir.Sub("base.yaml"), team = dir.Sub("team.yaml"), missing = dir.Sub("later.yaml");
  std::ofstream(base) << "overrides:\n  t:\n    max_global_streams_per_user: 10\n    ingestion_rate_mb: 2\n"
                         "    policy_override_limits:\n      gold: {max_global_streams_per_user: 3}\n"
                         "  u:\n    max_global_streams_per_user: 7\n";
  std::ofstream(team) << "overrides:\n  t:\n    ingestion_rate_mb: 5\n"
                         "    policy_override_limits:\n      gold: {inherit_limits: true}\n      silver: {ingestion_rate_mb: 1}\n"
                         "  v:\n";
  std::vector<std::string> present;
  Result<std::map<std::string, TenantOverrides>> o = LoadOverridesFiles({base, team, missing}, "", &present);
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(present, (std::vector<std::string>{base, team}));  // a missing file is skipped
  const TenantLimits t = ApplyOverrides(TenantLimits{}, o->at("t"));
  EXPECT_EQ(t.max_global_streams_per_user, 10u);  // from the first file only
  EXPECT_EQ(t.ingestion_rate_mb, 5.0);            // the later file wins
  EXPECT_EQ(t.PolicyMaxStreams("gold"), 3u);      // gold merged field by field: 3 and inherit_limits
  EXPECT_TRUE(t.policy_override_limits.at("gold").inherit_limits);
  EXPECT_EQ(t.PolicyRateMb("silver"), 1.0);
  EXPECT_EQ(o->at("u").max_global_streams_per_user, 7u);
  EXPECT_EQ(o->at("v"), TenantOverrides{});

  // A map where another file has a scalar fails the load, as in dskit, even in a part of
  // Loki's runtime config limitsd does not read.
  const std::string kv1 = dir.Sub("kv1.yaml"), kv2 = dir.Sub("kv2.yaml");
  std::ofstream(kv1) << "multi_kv_config:\n  primary: consul\n";
  std::ofstream(kv2) << "multi_kv_config: 5\n";
  EXPECT_THAT(LoadOverridesFiles({base, kv1, kv2}, "").status().message(),
              HasSubstr("multi_kv_config: conflicting types: a map in one runtime-config file, \"5\" in another"));
  // Each file's own problems are named with its lines.
  const std::string bad = dir.Sub("bad.yaml");
  std::ofstream(bad) << "overrides:\n  t:\n    ingestion_rate_mb: fast\n";
  EXPECT_THAT(LoadOverridesFiles({base, bad}, "").status().message(),
              HasSubstr("overrides.t.ingestion_rate_mb: expected a number, got \"fast\" (" + bad + ":3)"));
  EXPECT_EQ(OverridesFiles("a.yaml,,b.yaml,"), (std::vector<std::string>{"a.yaml", "b.yaml"}));
}

// Issue 26 item 3: Loki's main configuration as the source of the defaults and of the
// runtime-config files, so a migration writes no limit twice.
TEST(LokiOverridesTest, Issue26_LokisMainConfigGivesTheDefaultsAndTheRuntimeConfigFiles) {
  testing::TempDir dir;
  const std::string loki = dir.Sub("loki.yaml");
  std::ofstream(loki) << "auth_enabled: true\nserver:\n  http_listen_port: 3100\n"
                         "limits_config:\n  max_global_streams_per_user: 1234\n  ingestion_rate_mb: 8\n"
                         "  retention_period: 744h\n  policy_override_limits:\n    gold: {max_global_streams_per_user: 9}\n"
                         "runtime_config:\n  file: /etc/loki/a.yaml,/etc/loki/b.yaml\n  period: 10s\n";
  const std::string toml = dir.Sub("limitsd.toml");
  std::ofstream(toml) << "[limits]\nloki_config_file = \"" << loki << "\"\n[limits.defaults]\ningestion_burst_size_mb = 12\n";
  Result<Config> c = LoadConfig(toml);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->limits.defaults.max_global_streams_per_user, 1234u);
  EXPECT_EQ(c->limits.defaults.ingestion_rate_mb, 8.0);
  EXPECT_EQ(c->limits.defaults.ingestion_burst_size_mb, 12.0);  // Loki's file does not set it
  EXPECT_EQ(c->limits.defaults.PolicyMaxStreams("gold"), 9u);
  EXPECT_EQ(c->limits.overrides_file, "/etc/loki/a.yaml,/etc/loki/b.yaml");
  EXPECT_EQ(c->limits.overrides_format, "loki");

  // limitsd's own overrides_file is kept; a limit set in both places is refused by name.
  std::ofstream(toml) << "[limits]\nloki_config_file = \"" << loki << "\"\noverrides_file = \"o.toml\"\n"
                      << "[limits.defaults]\nmax_global_streams_per_user = 5\npolicy_max_streams = { gold = 1 }\n";
  Result<Config> twice = LoadConfig(toml);
  ASSERT_FALSE(twice.ok());
  EXPECT_THAT(twice.status().message(),
              HasSubstr("limits.defaults.max_global_streams_per_user: also set by limits_config in " + loki));
  EXPECT_THAT(twice.status().message(), HasSubstr("limits.defaults.policy_override_limits.gold: also set"));
  std::ofstream(toml) << "[limits]\nloki_config_file = \"" << loki << "\"\noverrides_file = \"o.toml\"\n";
  EXPECT_EQ(LoadConfig(toml)->limits.overrides_file, "o.toml");

  std::ofstream(loki) << "limits_config:\n  ingestion_rate_mb: [1]\n";
  std::ofstream(toml) << "[limits]\nloki_config_file = \"" << loki << "\"\n";
  EXPECT_THAT(LoadConfig(toml).status().message(),
              HasSubstr("limits.loki_config_file: limits_config.ingestion_rate_mb: expected a number, got a list"));
  std::ofstream(toml) << "[limits]\nloki_config_file = \"" << dir.Sub("nope.yaml") << "\"\n";
  EXPECT_THAT(LoadConfig(toml).status().message(), HasSubstr("limits.loki_config_file"));
  // Several overrides files are merged as YAML: a TOML one among them is refused.
  std::ofstream(toml) << "[limits]\noverrides_file = \"a.yaml,b.toml\"\n";
  EXPECT_THAT(LoadConfig(toml).status().message(),
              HasSubstr("limits.overrides_file: several files are merged as Loki's runtime config (YAML), but \"b.toml\""));
}

}  // namespace
}  // namespace limits::config
