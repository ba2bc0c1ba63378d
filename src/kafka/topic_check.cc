#include "kafka/topic_check.h"

#include <librdkafka/rdkafka.h>

#include <memory>

#include "common/log.h"
#include "kafka/kafka_log.h"

namespace limits::kafka {
namespace {

struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
struct OptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
struct ResourceDeleter {
  void operator()(rd_kafka_ConfigResource_t* r) const { rd_kafka_ConfigResource_destroy(r); }
};

bool IsConnectionProperty(const std::string& k) {
  return k.rfind("security.", 0) == 0 || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
         k.rfind("socket.", 0) == 0 || k.rfind("reconnect.", 0) == 0 || k == "broker.address.family";
}

void Unchecked(const TopicCheckOptions& o, const std::string& why) {
  log::Warn("kafka", "topic configuration not checked").Kv("topic", o.topic).Kv("reason", why);
}

}  // namespace

Status CheckTopic(const TopicCheckOptions& o) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  Properties props = {{"bootstrap.servers", o.brokers}, {"client.id", o.client_id + "-topic-check"}};
  for (const auto& [k, v] : o.properties) {
    if (IsConnectionProperty(k)) props[k] = v;
  }
  for (const auto& [k, v] : props) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof err) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      return Status::InvalidArgument("kafka.properties." + k + ": " + err);
    }
  }
  RouteLogs(conf);
  std::unique_ptr<rd_kafka_t, RdKafkaDeleter> rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err));
  if (!rk) return Status::InvalidArgument(std::string("topic check client: ") + err);
  const int timeout_ms = static_cast<int>(o.timeout.count());

  // DescribeConfigs goes to a broker we name: librdkafka 2.0 would otherwise wait for the
  // controller, which some clusters (the mock) never report.
  const rd_kafka_metadata_t* md = nullptr;
  if (rd_kafka_resp_err_t e = rd_kafka_metadata(rk.get(), 0, nullptr, &md, timeout_ms); e != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Unchecked(o, std::string("metadata: ") + rd_kafka_err2str(e));
    return Status::OK();
  }
  const int32_t broker = md->broker_cnt > 0 ? md->brokers[0].id : -1;
  rd_kafka_metadata_destroy(md);
  if (broker < 0) {
    Unchecked(o, "metadata lists no broker");
    return Status::OK();
  }

  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), timeout_ms, err, sizeof err);
  rd_kafka_AdminOptions_set_broker(opts.get(), broker, err, sizeof err);
  std::unique_ptr<rd_kafka_ConfigResource_t, ResourceDeleter> resource(
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, o.topic.c_str()));
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk.get()));
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  rd_kafka_DescribeConfigs(rk.get(), resources, 1, opts.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, EventDeleter> ev(rd_kafka_queue_poll(queue.get(), timeout_ms + 1000));
  if (!ev) {
    Unchecked(o, "DescribeConfigs: no answer");
    return Status::OK();
  }
  if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    Unchecked(o, std::string("DescribeConfigs: ") + rd_kafka_event_error_string(ev.get()));
    return Status::OK();
  }
  size_t n = 0;
  const rd_kafka_ConfigResource_t** results =
      rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      Unchecked(o, std::string("DescribeConfigs: ") + rd_kafka_ConfigResource_error_string(results[i]));
      return Status::OK();
    }
    size_t m = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(results[i], &m);
    for (size_t j = 0; j < m; ++j) {
      if (std::string(rd_kafka_ConfigEntry_name(entries[j])) != "cleanup.policy") continue;
      const char* value = rd_kafka_ConfigEntry_value(entries[j]);
      const std::string policy = value ? value : "";
      if (policy.find("compact") != std::string::npos) {
        return Status::FailedPrecondition(
            "kafka.topic \"" + o.topic + "\" has cleanup.policy=" + policy +
            ": compaction keeps only the newest record per tenant, so a replay would lose streams; "
            "limitsd needs cleanup.policy=delete (kafka-configs --alter --entity-type topics --entity-name " +
            o.topic + " --add-config cleanup.policy=delete)");
      }
      log::Info("kafka", "topic checked").Kv("topic", o.topic).Kv("cleanup_policy", policy);
      return Status::OK();
    }
  }
  Unchecked(o, "DescribeConfigs returned no cleanup.policy");
  return Status::OK();
}

}  // namespace limits::kafka
