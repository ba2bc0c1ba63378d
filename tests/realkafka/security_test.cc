// Kafka over TLS and SASL (issue 25, item 5) against the real broker's SASL_SSL listener
// (kafka-dev.sh --sasl-ssl): a node with the right credentials serves; one with a wrong
// password logs the keys to check and never looks ready, whatever wait_assign says.
#include "realkafka/realkafka_fixture.h"

#include "testing/http_client.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

class SecurityTest : public RealKafkaTest {
 protected:
  config::Config SaslConfig(const std::string& name, const std::string& password) const {
    config::Config c = NodeConfig(name);
    c.kafka.brokers = {Broker().sasl_bootstrap()};
    c.kafka.properties["security.protocol"] = "SASL_SSL";
    c.kafka.properties["sasl.mechanism"] = "PLAIN";
    c.kafka.properties["sasl.username"] = "limitsd";
    c.kafka.properties["sasl.password"] = password;
    c.kafka.properties["ssl.ca.location"] = Broker().ca_file();
    return c;
  }
};

TEST_F(SecurityTest, SaslSslPlainServesAndAWrongPasswordNeverLooksReady) {
  {
    LimitsdProcess good(SaslConfig("sasl-good", "plain-secret"), dir_.Sub("good.log"));
    ASSERT_TRUE(WaitFor([&] { return good.ReadyWith(kPartitions); }, 60s)) << good.Log();
  }
  // A process of its own: the failure is the process's state, and it must not leak into the
  // other tests of this binary.
  config::Config bad = SaslConfig("sasl-bad", "wrong");
  bad.windows.wait_assign = std::chrono::seconds(1);
  LimitsdProcess node(bad, dir_.Sub("bad.log"));
  ASSERT_TRUE(WaitFor([&] { return node.HttpPort() > 0; }, 30s)) << node.Log();
  std::string body;
  EXPECT_TRUE(WaitFor(
      [&] {
        testing::HttpResult r = testing::HttpGet(node.HttpPort(), "/ready");
        body = r.body;
        return r.status == 503 && body.find("refuses this node's credentials") != std::string::npos;
      },
      30s))
      << body << node.Log();
  EXPECT_NE(body.find("sasl.password"), std::string::npos) << body;
  EXPECT_NE(node.Log().find("\"check\":\"kafka.properties: security.protocol"), std::string::npos);
  // Well past wait_assign, still not ready.
  EXPECT_EQ(testing::HttpGet(node.HttpPort(), "/ready").status, 503);
}

}  // namespace
}  // namespace limits::realkafka
