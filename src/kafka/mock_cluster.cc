#include "kafka/mock_cluster.h"

#include "kafka/kafka_log.h"

namespace limits::kafka {

Result<std::unique_ptr<MockCluster>> MockCluster::Start(const std::string& topic, int32_t partitions, int brokers) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The owning handle never talks to anyone; keep it quiet. The mock brokers log through it.
  rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
  RouteLogs(conf);
  rd_kafka_t* owner = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (owner == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::Internal(std::string("mock cluster handle: ") + err);
  }
  rd_kafka_mock_cluster_t* cluster = rd_kafka_mock_cluster_new(owner, brokers);
  if (cluster == nullptr) {
    rd_kafka_destroy(owner);
    return Status::Internal("rd_kafka_mock_cluster_new failed");
  }
  auto mc = std::unique_ptr<MockCluster>(new MockCluster(owner, cluster));
  if (rd_kafka_resp_err_t e = rd_kafka_mock_topic_create(cluster, topic.c_str(), partitions, 1); e != 0) {
    return Status::Internal("mock topic " + topic + ": " + rd_kafka_err2str(e));
  }
  return mc;
}

MockCluster::MockCluster(rd_kafka_t* owner, rd_kafka_mock_cluster_t* cluster)
    : owner_(owner), cluster_(cluster), bootstrap_(rd_kafka_mock_cluster_bootstraps(cluster)) {}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(cluster_);
  rd_kafka_destroy(owner_);
}

}  // namespace limits::kafka
