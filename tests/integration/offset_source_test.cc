// KafkaOffsetSource against the mock cluster, whose ListOffsets-by-time always answers -1:
// the window start must still be found, exactly, and never taken from that -1.
#include "kafka/kafka_offset_source.h"

#include <gtest/gtest.h>

#include "testing/test_kafka.h"

namespace limits {
namespace {

class OffsetSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = kafka::KafkaOffsetSource::Create(
        {.brokers = kafka_.bootstrap(), .topic = testing::kTopic, .client_id = "test", .properties = {}});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_ = std::move(*source);
  }
  testing::TestKafka kafka_{4};
  std::unique_ptr<kafka::KafkaOffsetSource> source_;
};

TEST_F(OffsetSourceTest, FindsTheFirstRecordInsideTheWindowOnEveryPartitionAtOnce) {
  const int64_t base = 1'700'000'000'000;
  // Partition p holds 1000 records one second apart, starting p * 100 s after base.
  for (int32_t p = 0; p < 3; ++p) {
    for (int64_t i = 0; i < 1000; ++i) kafka_.Produce("t", uint64_t(i) * 4 + uint64_t(p), base + p * 100'000 + i * 1000);
  }
  kafka_.Flush();
  const int64_t window_start = base + 400'500;  // between two records of each partition
  const int32_t partitions[] = {0, 1, 2, 3};
  std::vector<PartitionOffsets> out = source_->Lookup(partitions, window_start);
  ASSERT_EQ(out.size(), 4u);
  for (int32_t p = 0; p < 3; ++p) {
    ASSERT_TRUE(out[p].ok) << out[p].error;
    EXPECT_EQ(out[p].start, 0);
    EXPECT_EQ(out[p].end, 1000);
    // Records at or after base + 400.5 s: i >= 401 - p * 100.
    EXPECT_EQ(out[p].window_start, 401 - p * 100) << "partition " << p;
  }
  ASSERT_TRUE(out[3].ok) << out[3].error;  // empty partition
  EXPECT_EQ(out[3].end, 0);
  EXPECT_EQ(out[3].window_start, 0);
}

TEST_F(OffsetSourceTest, WindowEdgesAreExact) {
  const int64_t base = 1'700'000'000'000;
  for (int64_t i = 0; i < 10; ++i) kafka_.Produce("t", 0, base + i * 1000);
  kafka_.Flush();
  const int32_t p0[] = {0};
  EXPECT_EQ(source_->Lookup(p0, base)[0].window_start, 0);              // everything inside
  EXPECT_EQ(source_->Lookup(p0, base + 9000)[0].window_start, 9);       // only the newest
  EXPECT_EQ(source_->Lookup(p0, base + 9001)[0].window_start, 10);      // nothing: the end
  EXPECT_EQ(source_->Lookup(p0, base + 3000)[0].window_start, 3);       // exactly on a record
}

TEST_F(OffsetSourceTest, BrokerErrorsFailThePartitionsLookup) {
  kafka_.Produce("t", 0, 1'700'000'000'000);
  kafka_.Flush();
  std::vector<rd_kafka_resp_err_t> errors(20, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  rd_kafka_mock_push_request_errors_array(kafka_.mock(), 2, errors.size(), errors.data());
  const int32_t p0[] = {0};
  std::vector<PartitionOffsets> out = source_->Lookup(p0, 0);
  EXPECT_FALSE(out[0].ok);
  EXPECT_NE(out[0].error.find("authorization"), std::string::npos) << out[0].error;
  rd_kafka_mock_clear_request_errors(kafka_.mock(), 2);
  EXPECT_TRUE(source_->Lookup(p0, 0)[0].ok);
}

}  // namespace
}  // namespace limits
