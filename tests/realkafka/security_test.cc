// Kafka over TLS and SASL (issue 25, item 5) against the real broker's SASL_SSL listener
// (kafka-dev.sh --sasl-ssl): a node with the right credentials serves; one with a wrong
// password logs the keys to check and never looks ready, whatever wait_assign says. SCRAM
// runs against a Kafka 3.9 broker: Debian 12's librdkafka 2.0.2 sends the client nonce twice
// in SCRAM's final message (fixed in librdkafka 2.6.1), which Kafka 4 refuses.
#include "realkafka/realkafka_fixture.h"

#include "testing/http_client.h"
#include "testing/wait_for.h"

namespace limits::realkafka {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

class SecurityTest : public RealKafkaTest {
 protected:
  config::Config SaslConfig(const std::string& name, const std::string& password, const std::string& mechanism = "PLAIN",
                            testing::RealKafka* broker = nullptr) const {
    testing::RealKafka& k = broker != nullptr ? *broker : Broker();
    config::Config c = NodeConfig(name);
    c.kafka.brokers = {k.sasl_bootstrap()};
    c.kafka.properties["security.protocol"] = "SASL_SSL";
    c.kafka.properties["sasl.mechanism"] = mechanism;
    c.kafka.properties["sasl.username"] = "limitsd";
    c.kafka.properties["sasl.password"] = password;
    c.kafka.properties["ssl.ca.location"] = k.ca_file();
    return c;
  }

  // Polls /ready until it is 503 naming the credentials (never ready); the body.
  static std::string RefusedCredentials(LimitsdProcess& node) {
    std::string body;
    EXPECT_TRUE(WaitFor([&] { return node.HttpPort() > 0; }, 30s)) << node.Log();
    EXPECT_TRUE(WaitFor(
        [&] {
          testing::HttpResult r = testing::HttpGet(node.HttpPort(), "/ready");
          body = r.body;
          return r.status == 503 && body.find("refuses this node's credentials") != std::string::npos;
        },
        30s))
        << body << node.Log();
    return body;
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
  const std::string body = RefusedCredentials(node);
  EXPECT_NE(body.find("sasl.password"), std::string::npos) << body;
  EXPECT_NE(node.Log().find("\"check\":\"kafka.properties: security.protocol"), std::string::npos);
  // Well past wait_assign, still not ready.
  EXPECT_EQ(testing::HttpGet(node.HttpPort(), "/ready").status, 503);
}

// SCRAM-SHA-256 and -512 against Kafka 3.9.2 (its own broker, with the fixture's topic): both
// serve, a wrong SCRAM password never looks ready. Against the fixture's Kafka 4 the same
// right credentials are refused (librdkafka 2.0.2's nonce bug): clearly, never a healthy node.
TEST_F(SecurityTest, SaslSslScramServesOnKafka3AndKafka4sRefusalIsNeverReady) {
  Result<std::unique_ptr<testing::RealKafka>> k3 = testing::RealKafka::Start(/*sasl_ssl=*/true, "3.9.2");
  ASSERT_TRUE(k3.ok()) << k3.status().ToString();
  ASSERT_TRUE((*k3)->CreateTopic(topic_, kPartitions).ok());
  for (const char* mechanism : {"SCRAM-SHA-256", "SCRAM-SHA-512"}) {
    SCOPED_TRACE(mechanism);
    LimitsdProcess node(SaslConfig(std::string("scram-") + mechanism, "scram-secret", mechanism, k3->get()),
                        dir_.Sub(std::string(mechanism) + ".log"));
    EXPECT_TRUE(WaitFor([&] { return node.ReadyWith(kPartitions); }, 60s)) << node.Log();
  }
  config::Config wrong = SaslConfig("scram-wrong", "not-the-secret", "SCRAM-SHA-256", k3->get());
  wrong.windows.wait_assign = std::chrono::seconds(1);
  LimitsdProcess refused(wrong, dir_.Sub("scram-wrong.log"));
  EXPECT_NE(RefusedCredentials(refused).find("sasl.password"), std::string::npos);

  config::Config on4 = SaslConfig("scram-kafka4", "scram-secret", "SCRAM-SHA-256");
  on4.windows.wait_assign = std::chrono::seconds(1);
  LimitsdProcess kafka4(on4, dir_.Sub("scram-kafka4.log"));
  RefusedCredentials(kafka4);
  EXPECT_EQ(testing::HttpGet(kafka4.HttpPort(), "/ready").status, 503);
}

}  // namespace
}  // namespace limits::realkafka
