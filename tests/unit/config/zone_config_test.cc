// The [zone] section: off by default, every key read, errors naming the key.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load_config.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"

namespace limits::config {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string ErrorOf(std::string_view toml) {
  Result<Config> c = ParseConfig(toml, "limitsd.toml", {});
  if (c.ok()) return "<ok>";
  EXPECT_TRUE(c.status().IsInvalidArgument()) << c.status().ToString();
  return c.status().message();
}

constexpr std::string_view kRing = "[ring]\nstore = \"etcd\"\netcd_endpoints = [\"127.0.0.1:2379\"]\n";

TEST(ZoneConfigTest, OffByDefault) {
  Result<Config> c = ParseConfig("", "limitsd.toml", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->zone.enabled);
  EXPECT_EQ(c->zone.exchange_interval, 1s);
  EXPECT_EQ(c->zone.lease, 1min);
  EXPECT_EQ(c->zone.call_timeout, 2s);
  EXPECT_FALSE(c->zone.tls_enabled);
}

TEST(ZoneConfigTest, ReadsEveryKey) {
  testing::TempDir dir;
  testing::TestCerts ca(dir.path());
  const testing::CertPair client = ca.Client("node");
  const std::string toml = std::string(kRing) +
                           "[zone]\nenabled = true\nexchange_interval = \"250ms\"\nlease = \"10s\"\n"
                           "call_timeout = \"500ms\"\ntls_enabled = true\ntls_cert_path = \"" +
                           client.cert + "\"\ntls_key_path = \"" + client.key + "\"\ntls_ca_path = \"" + ca.ca() +
                           "\"\ntls_server_name = \"limitsd\"\ntls_insecure_skip_verify = true\n";
  Result<Config> c = ParseConfig(toml, "limitsd.toml", {});
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const ZoneConfig& z = c->zone;
  EXPECT_TRUE(z.enabled);
  EXPECT_EQ(z.exchange_interval, 250ms);
  EXPECT_EQ(z.lease, 10s);
  EXPECT_EQ(z.call_timeout, 500ms);
  EXPECT_TRUE(z.tls_enabled);
  EXPECT_EQ(z.tls_cert_path, client.cert);
  EXPECT_EQ(z.tls_key_path, client.key);
  EXPECT_EQ(z.tls_ca_path, ca.ca());
  EXPECT_EQ(z.tls_server_name, "limitsd");
  EXPECT_TRUE(z.tls_insecure_skip_verify);
}

TEST(ZoneConfigTest, ErrorsNameTheKey) {
  EXPECT_THAT(ErrorOf("[zone]\nenabled = true\n"), HasSubstr("zone.enabled: the zone's nodes find each other in the ring"));
  EXPECT_THAT(ErrorOf(std::string(kRing) + "[zone]\nenabled = true\nexchange_interval = \"0s\"\n"),
              HasSubstr("zone.exchange_interval: must be positive"));
  EXPECT_THAT(ErrorOf(std::string(kRing) + "[zone]\nenabled = true\nlease = \"2s\"\n"),
              HasSubstr("zone.lease: must be at least 3 exchange intervals (3s)"));
  EXPECT_THAT(ErrorOf("[zone]\ntls_ca_path = \"/ca.pem\"\n"),
              HasSubstr("zone.tls_ca_path: set zone.tls_enabled = true to use it"));
  EXPECT_THAT(ErrorOf("[zone]\ntls_enabled = true\ntls_ca_path = \"/nonexistent/ca.pem\"\n"),
              HasSubstr("zone.tls_ca_path"));
  EXPECT_THAT(ErrorOf("[zone]\nenable = true\n"), HasSubstr("zone.enable"));
}

}  // namespace
}  // namespace limits::config
