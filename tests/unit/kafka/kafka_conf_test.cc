#include "kafka/kafka_conf.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(KafkaConfTest, ErrorsMapToStatusCodes) {
  EXPECT_TRUE(FromKafka(RdKafka::ERR_NO_ERROR, "x").ok());
  EXPECT_EQ(FromKafka(RdKafka::ERR__TIMED_OUT, "lookup").code(), StatusCode::kUnavailable);
  EXPECT_THAT(FromKafka(RdKafka::ERR__TIMED_OUT, "lookup").message(), HasSubstr("lookup: "));
}

}  // namespace
}  // namespace limits::kafka
