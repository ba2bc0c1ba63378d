#include "kafka/topic_check.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "kafka/kafka_log.h"

namespace limits::kafka {
namespace {

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
struct NewTopicDeleter {
  void operator()(rd_kafka_NewTopic_t* t) const { rd_kafka_NewTopic_destroy(t); }
};
struct TopicDeleter {
  void operator()(rd_kafka_topic_t* t) const { rd_kafka_topic_destroy(t); }
};
struct MetadataDeleter {
  void operator()(const rd_kafka_metadata_t* m) const { rd_kafka_metadata_destroy(m); }
};

bool IsConnectionProperty(const std::string& k) {
  return k.rfind("security.", 0) == 0 || k.rfind("sasl.", 0) == 0 || k.rfind("ssl.", 0) == 0 ||
         k.rfind("socket.", 0) == 0 || k.rfind("reconnect.", 0) == 0 || k == "broker.address.family";
}

std::string Quoted(const std::string& s) { return "\"" + s + "\""; }

std::string Seconds(std::chrono::milliseconds d) {
  const int64_t ms = d.count();
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

Result<std::unique_ptr<TopicCheck>> TopicCheck::Create(TopicCheckOptions o) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  // The probe asks for the topic by name: a broker with auto.create.topics.enable would
  // otherwise create it with its own num.partitions (librdkafka's producers allow that by
  // default), which is kafka.create_topic's decision, made with kafka.num_partitions.
  Properties props = {{"bootstrap.servers", o.brokers},
                      {"client.id", o.client_id + "-topic-check"},
                      {"allow.auto.create.topics", "false"}};
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
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("topic check client: ") + err);
  }
  return std::unique_ptr<TopicCheck>(new TopicCheck(std::move(o), rk));
}

TopicCheck::TopicCheck(TopicCheckOptions options, rd_kafka_t* rk) : options_(std::move(options)), rk_(rk) {}

TopicCheck::~TopicCheck() { Stop(); }

Status TopicCheck::CheckAtStart() {
  TopicStatus s = Probe();
  const bool fatal = s.condition == TopicCondition::kCompacted || s.condition == TopicCondition::kWrongPartitions;
  if (fatal) {
    const std::string problem = s.problem;
    std::lock_guard lock(mu_);
    status_ = std::move(s);
    return Status::FailedPrecondition(problem);  // main logs it as the reason the start failed
  }
  Publish(std::move(s));
  return Status::OK();
}

void TopicCheck::Start(std::chrono::milliseconds retry_interval, std::chrono::milliseconds ok_interval) {
  ok_interval_ = ok_interval;
  last_probe_ = std::chrono::steady_clock::now();
  thread_ = std::thread([this, retry_interval] {
    while (Pause(retry_interval)) Poll();
  });
}

void TopicCheck::Stop() {
  {
    std::lock_guard lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool TopicCheck::Pause(std::chrono::milliseconds d) {
  std::unique_lock lock(stop_mu_);
  return !stop_cv_.wait_for(lock, d, [this] { return stopping_; });
}

void TopicCheck::Poll() {
  const auto now = std::chrono::steady_clock::now();
  if (status().condition == TopicCondition::kOk && now - last_probe_ < ok_interval_) return;
  last_probe_ = now;
  Publish(Probe());
}

std::optional<std::string> TopicCheck::Problem() const {
  std::lock_guard lock(mu_);
  if (status_.condition == TopicCondition::kOk || status_.condition == TopicCondition::kUnchecked) return std::nullopt;
  return status_.problem;
}

TopicStatus TopicCheck::status() const {
  std::lock_guard lock(mu_);
  return status_;
}

std::optional<int64_t> TopicCheck::usable_since_ms() const {
  std::lock_guard lock(mu_);
  return usable_since_ms_;
}

TopicCheck::Metadata TopicCheck::ReadMetadata() {
  Metadata m;
  // A topic handle names the one topic asked for (never the whole cluster's list); destroyed
  // at once, so the client keeps no topic of its own to refresh in between.
  std::unique_ptr<rd_kafka_topic_t, TopicDeleter> rkt(rd_kafka_topic_new(rk_.get(), options_.topic.c_str(), nullptr));
  const rd_kafka_metadata_t* raw = nullptr;
  // Requests of at most a second each until `timeout` has passed: rd_kafka_metadata cannot be
  // interrupted, and Stop() must not wait out a whole time-out while the brokers are away. A
  // request waits for a connection within its own time, so a slow first connection (TLS,
  // SASL) serves the next request.
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  for (;;) {
    const auto start = std::chrono::steady_clock::now();
    const auto slice = std::min<std::chrono::milliseconds>(
        std::chrono::milliseconds(1000),
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - start) + std::chrono::milliseconds(1));
    m.err = rd_kafka_metadata(rk_.get(), 0, rkt.get(), &raw, static_cast<int>(slice.count()));
    if (m.err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return m;
    const auto rest = std::chrono::duration_cast<std::chrono::milliseconds>(start + slice - now);
    if (!Pause(std::max(rest, std::chrono::milliseconds(0)))) return m;  // stopping
  }
  std::unique_ptr<const rd_kafka_metadata_t, MetadataDeleter> md(raw);
  if (md->broker_cnt > 0) m.broker = md->brokers[0].id;
  m.topic_err = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;  // unless the answer lists it
  for (int i = 0; i < md->topic_cnt; ++i) {
    if (options_.topic != md->topics[i].topic) continue;
    m.topic_err = md->topics[i].err;
    m.partitions = md->topics[i].partition_cnt;
  }
  return m;
}

TopicStatus TopicCheck::Probe() {
  const std::string brokers = "kafka.brokers " + Quoted(options_.brokers);
  const std::string topic = "kafka.topic " + Quoted(options_.topic);
  TopicStatus s;
  Metadata m = ReadMetadata();
  if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    s.condition = TopicCondition::kUnreachable;
    s.error = rd_kafka_err2str(m.err);
    s.problem = brokers + " cannot be reached: no broker answered a metadata request within " +
                Seconds(options_.timeout) + " (" + s.error +
                "); check the addresses, DNS and the kafka.properties security settings. The node keeps trying";
    return s;
  }
  const bool missing = m.topic_err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART && m.partitions <= 0;
  if (missing) {
    policy_read_ = false;  // a topic that appears (again) is checked again
    if (options_.create) {
      if (Status c = CreateTopic(); !c.ok()) {
        s.condition = TopicCondition::kMissing;
        s.error = c.message();
        s.problem = topic + " does not exist on " + brokers + ", and kafka.create_topic could not create it: " +
                    c.message() + ". The node keeps trying";
        return s;
      }
      // The controller answers before every broker's metadata lists the new topic.
      const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
      do {
        m = ReadMetadata();
        if (m.err == RD_KAFKA_RESP_ERR_NO_ERROR && m.partitions > 0) break;
      } while (std::chrono::steady_clock::now() < deadline && Pause(std::chrono::milliseconds(100)));
    }
    if (m.err != RD_KAFKA_RESP_ERR_NO_ERROR || m.partitions <= 0) {
      s.condition = TopicCondition::kMissing;
      s.error = rd_kafka_err2str(m.err != RD_KAFKA_RESP_ERR_NO_ERROR ? m.err : m.topic_err);
      s.problem = options_.create
                      ? topic + " was created on " + brokers + " but the brokers' metadata does not list it yet"
                      : topic + " does not exist on " + brokers + ": create it with " +
                            std::to_string(options_.num_partitions) +
                            " partitions (kafka.num_partitions) and cleanup.policy=delete, or set "
                            "kafka.create_topic = true. The node keeps checking";
      return s;
    }
  }
  if (m.partitions <= 0) {
    s.condition = TopicCondition::kTopicError;
    s.error = rd_kafka_err2str(m.topic_err);
    s.problem = topic + " on " + brokers + ": " + s.error + " (for a topic authorization error, check the "
                "principal's Describe and Read permissions on the topic)";
    return s;
  }
  s.partitions = m.partitions;
  if (m.partitions != options_.num_partitions) {
    s.condition = TopicCondition::kWrongPartitions;
    s.problem = topic + " has " + std::to_string(m.partitions) + " partitions on " + brokers +
                ", but kafka.num_partitions is " + std::to_string(options_.num_partitions) +
                ": a stream's partition is stream_hash % kafka.num_partitions on every side (Loki's "
                "-ingest-limits.num-partitions too), so the topic must have exactly that many";
    return s;
  }
  if (!policy_read_) {
    policy_read_ = true;
    policy_ = ReadCleanupPolicy(m.broker).value_or("");
  }
  if (policy_.find("compact") != std::string::npos) {
    s.condition = TopicCondition::kCompacted;
    s.problem = topic + " has cleanup.policy=" + policy_ +
                ": compaction keeps only the newest record per tenant, so a replay would lose streams; "
                "limitsd needs cleanup.policy=delete (kafka-configs --alter --entity-type topics --entity-name " +
                options_.topic + " --add-config cleanup.policy=delete)";
    return s;
  }
  s.condition = TopicCondition::kOk;
  return s;
}

Status TopicCheck::CreateTopic() {
  char err[512];
  std::unique_ptr<rd_kafka_NewTopic_t, NewTopicDeleter> nt(rd_kafka_NewTopic_new(
      options_.topic.c_str(), options_.num_partitions, options_.replication_factor, err, sizeof err));
  if (!nt) return Status::InvalidArgument(err);
  // Only what limitsd needs: deletion, not compaction. Everything else (retention unless
  // configured, segment sizes, min.insync.replicas) is the broker's default, as for a topic
  // Loki's clients let the broker auto-create.
  std::vector<std::pair<std::string, std::string>> configs = {{"cleanup.policy", "delete"}};
  if (options_.retention_ms > 0) configs.emplace_back("retention.ms", std::to_string(options_.retention_ms));
  for (const auto& [k, v] : configs) {
    if (rd_kafka_resp_err_t e = rd_kafka_NewTopic_set_config(nt.get(), k.c_str(), v.c_str()); e != 0) {
      return Status::InvalidArgument(k + ": " + rd_kafka_err2str(e));
    }
  }
  const int timeout_ms = static_cast<int>(options_.timeout.count());
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk_.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), timeout_ms, err, sizeof err);
  rd_kafka_AdminOptions_set_operation_timeout(opts.get(), timeout_ms, err, sizeof err);
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk_.get()));
  rd_kafka_NewTopic_t* topics[] = {nt.get()};
  rd_kafka_CreateTopics(rk_.get(), topics, 1, opts.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, EventDeleter> ev(AwaitAdminResult(queue.get()));
  if (!ev) return Status::Unavailable("CreateTopics: no answer within " + Seconds(options_.timeout));
  if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("CreateTopics: ") + rd_kafka_event_error_string(ev.get()));
  }
  size_t n = 0;
  const rd_kafka_topic_result_t** results =
      rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    const rd_kafka_resp_err_t e = rd_kafka_topic_result_error(results[i]);
    if (e == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
      log::Info("kafka", "kafka.topic already exists (created meanwhile, e.g. by another node)")
          .Kv("topic", options_.topic);
      return Status::OK();
    }
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) {
      const char* why = rd_kafka_topic_result_error_string(results[i]);
      return Status::Unavailable(std::string("CreateTopics: ") + rd_kafka_err2name(e) + ": " +
                                 (why != nullptr ? why : rd_kafka_err2str(e)));
    }
  }
  log::Info("kafka", "created kafka.topic (kafka.create_topic)")
      .Kv("topic", options_.topic)
      .Kv("partitions", options_.num_partitions)
      .Kv("replication_factor", options_.replication_factor)
      .Kv("retention_ms", options_.retention_ms)
      .Kv("cleanup_policy", "delete");
  return Status::OK();
}

std::optional<std::string> TopicCheck::ReadCleanupPolicy(int32_t broker) {
  auto unchecked = [&](const std::string& why) -> std::optional<std::string> {
    log::Warn("kafka", "topic configuration not checked").Kv("topic", options_.topic).Kv("reason", why);
    return std::nullopt;
  };
  // DescribeConfigs goes to a broker we name: librdkafka 2.0 would otherwise wait for the
  // controller, which some clusters (the mock) never report.
  if (broker < 0) return unchecked("metadata lists no broker");
  char err[512];
  const int timeout_ms = static_cast<int>(options_.timeout.count());
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> opts(
      rd_kafka_AdminOptions_new(rk_.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS));
  rd_kafka_AdminOptions_set_request_timeout(opts.get(), timeout_ms, err, sizeof err);
  rd_kafka_AdminOptions_set_broker(opts.get(), broker, err, sizeof err);
  std::unique_ptr<rd_kafka_ConfigResource_t, ResourceDeleter> resource(
      rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, options_.topic.c_str()));
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk_.get()));
  rd_kafka_ConfigResource_t* resources[] = {resource.get()};
  rd_kafka_DescribeConfigs(rk_.get(), resources, 1, opts.get(), queue.get());
  std::unique_ptr<rd_kafka_event_t, EventDeleter> ev(AwaitAdminResult(queue.get()));
  if (!ev) return unchecked("DescribeConfigs: no answer");
  if (rd_kafka_event_error(ev.get()) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return unchecked(std::string("DescribeConfigs: ") + rd_kafka_event_error_string(ev.get()));
  }
  size_t n = 0;
  const rd_kafka_ConfigResource_t** results =
      rd_kafka_DescribeConfigs_result_resources(rd_kafka_event_DescribeConfigs_result(ev.get()), &n);
  for (size_t i = 0; i < n; ++i) {
    if (rd_kafka_ConfigResource_error(results[i]) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return unchecked(std::string("DescribeConfigs: ") + rd_kafka_ConfigResource_error_string(results[i]));
    }
    size_t m = 0;
    const rd_kafka_ConfigEntry_t** entries = rd_kafka_ConfigResource_configs(results[i], &m);
    for (size_t j = 0; j < m; ++j) {
      if (std::string(rd_kafka_ConfigEntry_name(entries[j])) != "cleanup.policy") continue;
      const char* value = rd_kafka_ConfigEntry_value(entries[j]);
      return std::string(value ? value : "");
    }
  }
  return unchecked("DescribeConfigs returned no cleanup.policy");
}

rd_kafka_event_t* TopicCheck::AwaitAdminResult(rd_kafka_queue_t* queue) {
  // The request times out after `timeout`; its result (an error then) comes a little later.
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout + std::chrono::milliseconds(1000);
  while (std::chrono::steady_clock::now() < deadline) {
    if (rd_kafka_event_t* ev = rd_kafka_queue_poll(queue, 100)) return ev;
    if (!Pause(std::chrono::milliseconds(0))) return nullptr;  // stopping: the result is dropped with the queue
  }
  return nullptr;
}

void TopicCheck::Publish(TopicStatus next) {
  TopicStatus previous;
  {
    std::lock_guard lock(mu_);
    previous = std::move(status_);
    status_ = next;
    if (next.condition != TopicCondition::kOk) {
      usable_since_ms_.reset();
    } else if (previous.condition != TopicCondition::kOk) {
      usable_since_ms_ = options_.clock->NowMillis();
    }
  }
  // One line per change of condition: a node that cannot reach its brokers for an hour logs
  // it once (and once more when it can), while /ready keeps saying it. The brokers' words
  // for one condition vary (a time-out, a refused connection); a different reason the topic
  // could not be created is news.
  const bool changed = next.condition != previous.condition ||
                       (next.condition == TopicCondition::kMissing && next.problem != previous.problem);
  if (!changed) return;
  if (next.condition == TopicCondition::kOk) {
    log::Info("kafka", previous.condition == TopicCondition::kUnchecked ? "topic checked" : "kafka.topic is usable now")
        .Kv("brokers", options_.brokers)
        .Kv("topic", options_.topic)
        .Kv("partitions", next.partitions)
        .Kv("cleanup_policy", policy_.empty() ? "unknown" : policy_);
    return;
  }
  log::Line line = log::Error("kafka", next.problem);
  line.Kv("brokers", options_.brokers).Kv("topic", options_.topic);
  if (!next.error.empty()) line.Kv("error", next.error);
}

}  // namespace limits::kafka
