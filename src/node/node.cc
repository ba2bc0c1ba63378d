#include "node/node.h"

#include "common/log.h"

namespace limits {

Windows WindowsOf(const config::WindowsConfig& w) {
  auto secs = [](std::chrono::milliseconds d) { return static_cast<uint32_t>(d.count() / 1000); };
  return Windows{.active_s = secs(w.active),
                 .rate_s = secs(w.rate),
                 .bucket_s = secs(w.bucket),
                 .produce_interval_s = secs(w.produce_interval)};
}

Result<std::unique_ptr<Node>> Node::Start(const config::Config& config, const Clock& clock) {
  auto node = std::unique_ptr<Node>(new Node(config, clock));
  Status s = node->StartParts();
  if (!s.ok()) {
    node->Stop();
    return s;
  }
  return node;
}

Status Node::StartParts() {
  const config::Config& c = config_;
  log::Info("node", "starting")
      .Kv("zone", c.node.zone)
      .Kv("instance", c.node.instance_id)
      .Kv("topic", c.kafka.topic)
      .Kv("partitions", c.kafka.num_partitions)
      .Kv("store", c.store.path);
  brokers_ = c.kafka.brokers;
  if (brokers_.empty()) {
    ASSIGN_OR_RETURN(embedded_, kafka::MockCluster::Start(c.kafka.topic, c.kafka.num_partitions));
    brokers_ = embedded_->bootstrap();
    log::Info("node", "no brokers configured: started an embedded mock Kafka cluster (data lives as long as this process)")
        .Kv("bootstrap", brokers_)
        .Kv("topic", c.kafka.topic)
        .Kv("partitions", c.kafka.num_partitions);
  }

  const Windows windows = WindowsOf(c.windows);
  storage::DbOptions dbo;
  dbo.path = c.store.path;
  dbo.block_cache_bytes = c.store.block_cache_bytes;
  dbo.write_buffer_bytes = c.store.write_buffer_bytes;
  dbo.active_window_s = windows.active_s;
  dbo.clock = &clock_;
  ASSIGN_OR_RETURN(db_, storage::Db::Open(dbo));

  UsageStoreOptions so;
  so.num_partitions = c.kafka.num_partitions;
  so.windows = windows;
  so.clock = &clock_;
  ASSIGN_OR_RETURN(store_, UsageStore::Open(*db_, so));
  partitions_ = std::make_unique<PartitionManager>(clock_, c.windows.wait_assign);

  ASSIGN_OR_RETURN(offsets_, kafka::KafkaOffsetSource::Create({.brokers = brokers_,
                                                                .topic = c.kafka.topic,
                                                                .client_id = c.node.instance_id,
                                                                .properties = c.kafka.properties}));
  ASSIGN_OR_RETURN(producer_, kafka::StreamProducer::Create({.brokers = brokers_,
                                                             .topic = c.kafka.topic,
                                                             .zone = c.node.zone,
                                                             .instance_id = c.node.instance_id,
                                                             .num_partitions = c.kafka.num_partitions,
                                                             .properties = c.kafka.properties},
                                                            clock_));
  lifecycler_ = std::make_unique<PartitionLifecycler>(
      *store_, *offsets_, *partitions_, clock_,
      PartitionLifecycler::Options{.windows = windows, .revoked_retention = c.windows.revoked_retention});
  kafka::Consumer::Options co;
  co.brokers = brokers_;
  co.topic = c.kafka.topic;
  co.group = c.kafka.consumer_group;
  co.zone = c.node.zone;
  co.instance_id = c.node.instance_id;
  co.properties = c.kafka.properties;
  consumer_ = std::make_unique<kafka::Consumer>(co, *store_, *partitions_, *lifecycler_, clock_);
  RETURN_IF_ERROR(lifecycler_->Start([this](std::vector<AssignmentPlan> plans) { consumer_->DeliverPlans(std::move(plans)); }));
  RETURN_IF_ERROR(consumer_->Start());
  evictor_ = std::make_unique<Evictor>(*store_, c.windows.eviction_interval);
  evictor_->Start();

  std::vector<std::pair<std::string, http::Handler>> routes = {
      {"/ready", [this](const http::Request&) { return Ready(); }},
      {"/live", [](const http::Request&) { return http::Response{200, "text/plain; charset=utf-8", "live\n"}; }},
  };
  ASSIGN_OR_RETURN(http_, http::HttpServer::Start(c.server.http_listen, std::move(routes)));
  log::Info("node", "started").Kv("http_port", http_->port());
  return Status::OK();
}

http::Response Node::Ready() const {
  const Readiness r = partitions_->CheckReadiness();
  return {r.ready ? 200 : 503, "text/plain; charset=utf-8", r.reason + "\n"};
}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (stopped_) return;
  stopped_ = true;
  log::Info("node", "stopping");
  if (http_) http_->Stop();
  if (evictor_) evictor_->Stop();
  if (consumer_) consumer_->Stop();
  if (lifecycler_) lifecycler_->Stop();
  if (producer_) {
    if (Status s = producer_->Flush(std::chrono::seconds(5)); !s.ok()) {
      log::Warn("node", "producer flush incomplete").Kv("error", s.ToString());
    }
  }
  if (store_) {
    if (Status s = store_->Flush(); !s.ok()) log::Error("node", "final flush failed").Kv("error", s.ToString());
  }
  // Destroy in reverse order of construction: the consumer before what it references.
  http_.reset();
  evictor_.reset();
  consumer_.reset();
  lifecycler_.reset();
  producer_.reset();
  offsets_.reset();
  store_.reset();
  if (db_) {
    if (Status s = db_->Close(); !s.ok()) log::Error("node", "closing the database failed").Kv("error", s.ToString());
    db_.reset();
  }
  embedded_.reset();
  log::Info("node", "stopped");
}

}  // namespace limits
