#include "kafka/producer.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <vector>

#include "kafka/mock_cluster.h"
#include "testing/wait_for.h"

namespace limits::kafka {
namespace {

using namespace std::chrono_literals;

// Issue 10 item 3: loki_ingest_limits_records_produced_total counts attempts, failures
// included (Loki's meaning); limitsd_records_delivered_total counts what the brokers took.
TEST(StreamProducerTest, AttemptsCountFailuresDeliveriesDoNot) {
  auto cluster = MockCluster::Start("topic", 4);
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  prometheus::Registry registry;
  auto producer = StreamProducer::Create(
      StreamProducer::Options{.brokers = (*cluster)->bootstrap(),
                              .topic = "topic",
                              .zone = "zone-a",
                              .instance_id = "producer-test",
                              .run_tag = "producer-test/1",
                              .num_partitions = 4,
                              .properties = {}},
      Clock::System(), registry);
  ASSERT_TRUE(producer.ok()) << producer.status().ToString();
  StreamProducer& p = **producer;
  for (uint64_t h = 0; h < 10; ++h) p.Produce("t", h, 100, "");
  ASSERT_TRUE(p.Flush(20s).ok());
  EXPECT_EQ(p.stats().attempted.load(), 10u);
  EXPECT_EQ(p.stats().produced.load(), 10u);
  EXPECT_EQ(p.stats().failed.load(), 0u);

  // The brokers refuse the next Produce requests with a permanent error (one per partition
  // at most; extra ones are never used). Taking the brokers down instead needed a 1 s message
  // timeout, which under load failed the healthy records above too, or none of these in 30 s.
  const std::vector<rd_kafka_resp_err_t> refusals(8, RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
  rd_kafka_mock_push_request_errors_array((*cluster)->handle(), 0, refusals.size(), refusals.data());  // ApiKey 0: Produce
  for (uint64_t h = 0; h < 5; ++h) p.Produce("t", h, 100, "");
  ASSERT_TRUE(testing::WaitFor([&] { return p.stats().failed.load() == 5; }, 30s)) << p.stats().failed.load();
  EXPECT_EQ(p.stats().attempted.load(), 15u);
  EXPECT_EQ(p.stats().produced.load(), 10u);
}

}  // namespace
}  // namespace limits::kafka
