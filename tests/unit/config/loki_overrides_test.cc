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
  // Only policies with their own stream limit become policy limits (silver keeps the tenant's).
  EXPECT_EQ(a.policy_max_streams, (std::map<std::string, uint64_t>{{"gold", 100}}));
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

}  // namespace
}  // namespace limits::config
