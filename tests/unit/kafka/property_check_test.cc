#include "kafka/property_check.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace limits::kafka {
namespace {

using ::testing::HasSubstr;

// Issue 8 item 22: --check-config said "valid" for properties librdkafka refuses at start,
// and for the ones the node sets itself (an eager assignment strategy left it consuming
// nothing; a group.id of its own took it out of its zone's group).
TEST(PropertyCheckTest, Item22_UnknownBadAndNodeOwnedPropertiesAreRefusedByKey) {
  EXPECT_TRUE(ValidateProperties({{"client.rack", "az1"}, {"fetch.wait.max.ms", "20"}, {"security.protocol", "SSL"}},
                                 "kafka.properties")
                  .ok());
  const Status s = ValidateProperties({{"no.such.property", "1"},
                                       {"linger.ms", "soon"},
                                       {"partition.assignment.strategy", "range"},
                                       {"group.id", "mine"},
                                       {"bootstrap.servers", "k:9092"},
                                       {"enable.auto.commit", "true"},
                                       {"enable.auto.offset.store", "true"},
                                       {"group.instance.id", "pod-0"},
                                       {"enable.partition.eof", "false"}},
                                      "kafka.consumer_properties");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.IsInvalidArgument());
  const std::string m = s.message();
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"no.such.property\": No such configuration property"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"linger.ms\": Invalid value"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"partition.assignment.strategy\": set by the node: "
                           "cooperative-sticky"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"group.id\": set by the node from kafka.consumer_group; set "
                           "kafka.consumer_group instead"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"bootstrap.servers\": set by the node from kafka.brokers; set "
                           "kafka.brokers instead"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"enable.auto.commit\": set by the node"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"enable.auto.offset.store\": set by the node"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"group.instance.id\": set by the node from node.instance_id "
                           "while kafka.static_membership = true"));
  EXPECT_THAT(m, HasSubstr("kafka.consumer_properties.\"enable.partition.eof\": set by the node: the end-of-log "
                           "event completes a replay"));
  EXPECT_EQ(std::count(m.begin(), m.end(), '\n'), 8);  // all nine at once
}

// What only a client can tell: librdkafka's checks across properties.
TEST(PropertyCheckTest, Item22_ClientConfigsAreBuiltAsTheNodeBuildsThem) {
  EXPECT_TRUE(CheckClientConfigs({}, {}, "limitsd-zone-a", "node-0").ok());
  const Status sasl = CheckClientConfigs({{"security.protocol", "SASL_PLAINTEXT"}, {"sasl.mechanisms", "PLAIN"}},
                                         {}, "g", "node-0");
  ASSERT_FALSE(sasl.ok());
  EXPECT_THAT(sasl.message(),
              HasSubstr("kafka.properties, kafka.consumer_properties: librdkafka refuses the consumer configuration: "
                        "sasl.username and sasl.password must be set"));
  const Status idempotence = CheckClientConfigs({}, {{"enable.idempotence", "true"}, {"acks", "1"}}, "g", "node-0");
  ASSERT_FALSE(idempotence.ok());
  EXPECT_THAT(idempotence.message(), HasSubstr("kafka.producer_properties: librdkafka refuses the producer "
                                               "configuration: `acks` must be set to `all`"));
}

}  // namespace
}  // namespace limits::kafka
