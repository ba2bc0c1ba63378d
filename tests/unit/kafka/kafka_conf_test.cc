#include "kafka/kafka_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "common/log.h"

namespace limits::kafka {
namespace {

using ::testing::HasSubstr;

std::string Get(RdKafka::Conf& conf, const std::string& key) {
  std::string v;
  EXPECT_EQ(conf.get(key, v), RdKafka::Conf::CONF_OK) << key;
  return v;
}

TEST(KafkaConfTest, PropertiesOverrideOurDefaults) {
  auto conf = MakeConf(ConsumerDefaults("b:9092", "g", "me"), {{"fetch.wait.max.ms", "7"}, {"client.rack", "az1"}});
  ASSERT_TRUE(conf.ok()) << conf.status().ToString();
  EXPECT_EQ(Get(**conf, "bootstrap.servers"), "b:9092");
  EXPECT_EQ(Get(**conf, "group.id"), "g");
  EXPECT_EQ(Get(**conf, "partition.assignment.strategy"), "cooperative-sticky");
  EXPECT_EQ(Get(**conf, "enable.auto.commit"), "false");
  EXPECT_EQ(Get(**conf, "fetch.wait.max.ms"), "7");
  EXPECT_EQ(Get(**conf, "client.rack"), "az1");
}

TEST(KafkaConfTest, AnInvalidPropertyIsNamedAsAConfigKey) {
  auto unknown = MakeConf(ProducerDefaults("b:9092", "me"), {{"no.such.property", "1"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(unknown.status().IsInvalidArgument());
  EXPECT_THAT(unknown.status().message(), HasSubstr("kafka.properties.\"no.such.property\":"));
  auto bad_value = MakeConf(ProducerDefaults("b:9092", "me"), {{"linger.ms", "soon"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.status().message(), HasSubstr("kafka.properties.\"linger.ms\":"));
}

TEST(KafkaConfTest, ProducerCompressesAndBatches) {
  auto conf = MakeConf(ProducerDefaults("b:9092", "me"), {});
  ASSERT_TRUE(conf.ok());
  EXPECT_EQ(Get(**conf, "compression.type"), "lz4");
  EXPECT_EQ(Get(**conf, "client.id"), "me");
}

TEST(KafkaConfTest, ScopesComeFromLibrdkafkasTable) {
  EXPECT_EQ(ScopeOf("session.timeout.ms"), PropertyScope::kConsumer);
  EXPECT_EQ(ScopeOf("auto.offset.reset"), PropertyScope::kConsumer);  // a topic-level property
  EXPECT_EQ(ScopeOf("linger.ms"), PropertyScope::kProducer);
  EXPECT_EQ(ScopeOf("acks"), PropertyScope::kProducer);
  EXPECT_EQ(ScopeOf("security.protocol"), PropertyScope::kBoth);
  EXPECT_EQ(ScopeOf("client.id"), PropertyScope::kBoth);
  EXPECT_EQ(ScopeOf("no.such.property"), PropertyScope::kUnknown);
}

TEST(KafkaConfTest, SharedPropertiesReachOnlyTheClientsTheyApplyTo) {
  const Properties shared = {{"session.timeout.ms", "30000"}, {"linger.ms", "50"}, {"security.protocol", "ssl"}};
  auto consumer = ClientProperties(Client::kConsumer, shared, {{"fetch.wait.max.ms", "5"}});
  ASSERT_TRUE(consumer.ok()) << consumer.status().ToString();
  EXPECT_EQ(*consumer, (Properties{{"session.timeout.ms", "30000"}, {"security.protocol", "ssl"},
                                   {"fetch.wait.max.ms", "5"}}));
  auto producer = ClientProperties(Client::kProducer, shared, {{"security.protocol", "sasl_ssl"}});
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  // The client's own section wins over the shared one.
  EXPECT_EQ(*producer, (Properties{{"linger.ms", "50"}, {"security.protocol", "sasl_ssl"}}));
}

TEST(KafkaConfTest, ClientPropertyErrorsNameTheirSection) {
  auto wrong_client = ClientProperties(Client::kProducer, {}, {{"session.timeout.ms", "1000"}});
  ASSERT_FALSE(wrong_client.ok());
  EXPECT_TRUE(wrong_client.status().IsInvalidArgument());
  EXPECT_THAT(wrong_client.status().message(),
              HasSubstr("kafka.producer_properties.\"session.timeout.ms\": a consumer property"));
  EXPECT_THAT(wrong_client.status().message(), HasSubstr("[kafka.consumer_properties]"));
  auto bad_value = ClientProperties(Client::kConsumer, {}, {{"session.timeout.ms", "soon"}});
  ASSERT_FALSE(bad_value.ok());
  EXPECT_THAT(bad_value.status().message(), HasSubstr("kafka.consumer_properties.\"session.timeout.ms\":"));
  auto unknown_shared = ClientProperties(Client::kConsumer, {{"no.such.property", "1"}}, {});
  ASSERT_FALSE(unknown_shared.ok());
  EXPECT_THAT(unknown_shared.status().message(), HasSubstr("kafka.properties.\"no.such.property\":"));
}

// A handle built from MakeConf logs through our log: librdkafka's CONFWARN (a consumer
// property on a producer, logged synchronously by Producer::create) arrives as our line.
TEST(KafkaConfTest, LibrdkafkaLogLinesBecomeOurLines) {
  std::mutex mu;
  std::vector<std::string> lines;
  log::SetSinkForTest([&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  });
  {
    auto conf = MakeConf({{"client.id", "conf-test"}}, {{"session.timeout.ms", "6000"}});
    ASSERT_TRUE(conf.ok());
    std::string err;
    std::unique_ptr<RdKafka::Producer> producer(RdKafka::Producer::create(conf->get(), err));
    ASSERT_TRUE(producer) << err;
  }
  log::SetSinkForTest(nullptr);
  std::lock_guard lock(mu);
  bool confwarn = false;
  for (const std::string& line : lines) {
    EXPECT_THAT(line, HasSubstr("\"component\":\"kafka\""));
    EXPECT_THAT(line, HasSubstr("\"client\":\"conf-test#producer-"));
    if (line.find("session.timeout.ms") != std::string::npos) {
      confwarn = true;
      EXPECT_THAT(line, HasSubstr("\"level\":\"warn\""));
      EXPECT_THAT(line, HasSubstr("\"fac\":\"CONFWARN\""));
    }
  }
  EXPECT_TRUE(confwarn) << "no CONFWARN line for session.timeout.ms among " << lines.size() << " lines";
}

TEST(KafkaConfTest, ErrorsMapToStatusCodes) {
  EXPECT_TRUE(FromKafka(RdKafka::ERR_NO_ERROR, "x").ok());
  EXPECT_EQ(FromKafka(RdKafka::ERR__TIMED_OUT, "lookup").code(), StatusCode::kUnavailable);
  EXPECT_THAT(FromKafka(RdKafka::ERR__TIMED_OUT, "lookup").message(), HasSubstr("lookup: "));
}

}  // namespace
}  // namespace limits::kafka
