#include "testing/test_kafka.h"

#include <stdexcept>

#include "config/load_config.h"
#include "kafka/record_codec.h"
#include "limits/lifecycle/record_filter.h"

namespace limits::testing {

TestKafka::TestKafka(int32_t partitions) : partitions_(partitions) {
  auto cluster = kafka::MockCluster::Start(kTopic, partitions);
  if (!cluster.ok()) throw std::runtime_error(cluster.status().ToString());
  cluster_ = std::move(*cluster);
  bootstrap_ = cluster_->bootstrap();
  CreateProducer();
}

TestKafka::TestKafka(const std::string& bootstrap, const std::string& topic, int32_t partitions)
    : partitions_(partitions), topic_(topic), bootstrap_(bootstrap) {
  CreateProducer();
}

void TestKafka::CreateProducer() {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  conf->set("bootstrap.servers", bootstrap_, err);
  conf->set("linger.ms", "5", err);
  // Tests lay records out in a partition in order (timestamps rising): a retried batch must
  // not overtake the next one, as it could with several in flight (a fresh real broker
  // answers the first produce with a retriable error now and then).
  conf->set("max.in.flight.requests.per.connection", "1", err);
  producer_.reset(RdKafka::Producer::create(conf.get(), err));
  if (!producer_) throw std::runtime_error(err);
}

TestKafka::~TestKafka() {
  producer_->flush(5000);
  producer_.reset();
  cluster_.reset();
}

void TestKafka::Produce(const std::string& tenant, uint64_t hash, int64_t timestamp_ms, const std::string& zone,
                        std::optional<std::string> instance, uint64_t bytes, const std::string& policy) {
  std::string value = kafka::EncodeRecordValue(zone, tenant, hash, bytes, policy);
  RdKafka::Headers* headers = nullptr;
  if (instance) {
    headers = RdKafka::Headers::create();
    headers->add(kInstanceHeader, *instance);
  }
  const auto partition = static_cast<int32_t>(hash % static_cast<uint64_t>(partitions_));
  RdKafka::ErrorCode rc = producer_->produce(topic_, partition, RdKafka::Producer::RK_MSG_COPY, value.data(),
                                             value.size(), tenant.data(), tenant.size(), timestamp_ms, headers, nullptr);
  if (rc != RdKafka::ERR_NO_ERROR) {
    delete headers;
    throw std::runtime_error("produce: " + RdKafka::err2str(rc));
  }
  producer_->poll(0);
}

void TestKafka::ProduceRaw(int32_t partition, const std::string& value, int64_t timestamp_ms) {
  RdKafka::ErrorCode rc = producer_->produce(topic_, partition, RdKafka::Producer::RK_MSG_COPY,
                                             const_cast<char*>(value.data()), value.size(), nullptr, 0, timestamp_ms,
                                             nullptr, nullptr);
  if (rc != RdKafka::ERR_NO_ERROR) throw std::runtime_error("produce: " + RdKafka::err2str(rc));
}

void TestKafka::Flush() {
  if (producer_->flush(10000) != RdKafka::ERR_NO_ERROR) throw std::runtime_error("flush timed out");
}

int64_t TestKafka::EndOffset(int32_t partition) {
  int64_t lo = -1, hi = -1;
  producer_->query_watermark_offsets(topic_, partition, &lo, &hi, 5000);
  return hi;
}

config::Config TestKafka::NodeConfig(const std::string& dir, const std::string& zone,
                                     const std::string& instance) const {
  config::Config c = *config::ParseConfig("", "test");
  c.node.zone = zone;
  c.node.instance_id = instance;
  c.kafka.brokers = bootstrap();
  c.kafka.topic = topic_;
  c.kafka.num_partitions = partitions_;
  c.kafka.consumer_group = "limitsd-" + zone;
  // The mock's group coordinator waits session.timeout - 1 s per join round (MOCK-KAFKA.md).
  c.kafka.properties = {{"session.timeout.ms", "6000"},
                        {"heartbeat.interval.ms", "500"},
                        {"reconnect.backoff.max.ms", "500"},
                        {"topic.metadata.refresh.interval.ms", "1000"}};
  c.store.path = dir + "/db";
  c.store.block_cache_bytes = 16 << 20;
  c.store.write_buffer_bytes = 8 << 20;
  c.server.http_listen = "127.0.0.1:0";
  c.server.grpc_listen = "127.0.0.1:0";
  c.windows.wait_assign = std::chrono::seconds(2);
  return c;
}

}  // namespace limits::testing
