#include "node/node.h"

#include <iterator>

#include "common/allocator.h"
#include "common/log.h"
#include "config/load_config.h"
#include "kafka/kafka_conf.h"
#include "kafka/kafka_log.h"
#include "kafka/topic_check.h"
#include "limits/lifecycle/record_filter.h"
#include "node/http_api.h"
#include "node/node_zone.h"
#include "node/ring_backends.h"
#include "ring/memberlist/memberlist_kv.h"
#include "ring/instance_addr.h"
#include "ring/ring_members.h"
#include "tls/listener_tls.h"

namespace limits {
namespace {

// An HTTP listener's TLS context, or null while `tls` is off; a bad file is named by `key`.
Result<std::shared_ptr<tls::ListenerTls>> ListenerTlsOf(const tls::ServerTls& tls, const config::ServerConfig& server,
                                                        const std::string& key) {
  if (!tls.enabled()) return std::shared_ptr<tls::ListenerTls>();
  Result<std::shared_ptr<tls::ListenerTls>> created = tls::ListenerTls::Create(
      {.tls = tls,
       .min_version = server.tls_min_version,
       .cipher_suites = server.tls_cipher_suites,
       .reload_interval = std::chrono::duration_cast<std::chrono::seconds>(server.tls_reload_interval)});
  if (!created.ok()) return created.status().Prefixed(key);
  return created;
}

}  // namespace

Windows WindowsOf(const config::WindowsConfig& w) {
  // The loader bounds every duration to config::kMaxDuration (2^32 - 1 s), so none wraps here.
  auto secs = [](std::chrono::milliseconds d) {
    LIMITS_CHECK(d >= std::chrono::milliseconds(0) && d <= config::kMaxDuration, "window beyond 32-bit seconds");
    return static_cast<uint32_t>(d.count() / 1000);
  };
  return Windows{.active_s = secs(w.active),
                 .rate_s = secs(w.rate),
                 .bucket_s = secs(w.bucket),
                 .produce_interval_s = secs(w.produce_interval)};
}

Status CheckKafkaProperties(const config::KafkaConfig& kafka) {
  RETURN_IF_ERROR(kafka::ClientProperties(kafka::Client::kConsumer, kafka.properties, kafka.consumer_properties).status());
  return kafka::ClientProperties(kafka::Client::kProducer, kafka.properties, kafka.producer_properties).status();
}

Result<std::unique_ptr<Node>> Node::Start(const config::Config& config, const Clock& clock, NodeOptions options) {
  auto node = std::unique_ptr<Node>(new Node(config, clock, options));
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
      .Kv("store", c.store.path)
      .Kv("allocator", allocator::Name());
  brokers_ = c.kafka.brokers;
  if (brokers_.empty()) {
    ASSIGN_OR_RETURN(embedded_, kafka::MockCluster::Start(c.kafka.topic, c.kafka.num_partitions));
    brokers_ = embedded_->bootstrap();
    log::Info("node", "no brokers configured: started an embedded mock Kafka cluster (data lives as long as this process)")
        .Kv("bootstrap", brokers_)
        .Kv("topic", c.kafka.topic)
        .Kv("partitions", c.kafka.num_partitions);
  } else {
    // Before anything is opened or joined: a topic the node cannot use (compacted, another
    // partition count) is refused; brokers that do not answer or a missing topic are errors
    // naming kafka.brokers / kafka.topic, re-checked in the background, and /ready says so
    // until they are fixed (topic_check.h). With kafka.create_topic the node creates it.
    ASSIGN_OR_RETURN(topic_, kafka::TopicCheck::Create({.brokers = brokers_,
                                                        .topic = c.kafka.topic,
                                                        .client_id = c.node.instance_id,
                                                        .properties = c.kafka.properties,
                                                        .num_partitions = c.kafka.num_partitions,
                                                        .create = c.kafka.create_topic,
                                                        .replication_factor = c.kafka.create_topic_replication_factor,
                                                        .retention_ms = c.kafka.create_topic_retention.count(),
                                                        .timeout = options_.topic_check_timeout,
                                                        .clock = &clock_}));
    RETURN_IF_ERROR(topic_->CheckAtStart());
    topic_->Start(options_.topic_retry_interval, options_.topic_ok_interval);
  }

  const Windows windows = WindowsOf(c.windows);
  // Limits before the store: loading it asks which policies have a limit of their own.
  limits_ = std::make_unique<LimitsProvider>(c.limits.defaults, c.limits.tenants);
  if (!c.limits.overrides_file.empty()) {
    reloader_ = std::make_unique<OverridesReloader>(config::OverridesFiles(c.limits.overrides_file), *limits_, *registry_,
                                                    std::chrono::seconds(2), c.limits.overrides_format);
    RETURN_IF_ERROR(reloader_->LoadInitial().Prefixed("limits.overrides_file " + c.limits.overrides_file));
  }

  storage::DbOptions dbo;
  dbo.path = c.store.path;
  dbo.block_cache_bytes = c.store.block_cache_bytes;
  dbo.write_buffer_bytes = c.store.write_buffer_bytes;
  dbo.active_window_s = windows.active_s;
  dbo.clock = &clock_;
  Result<std::unique_ptr<storage::Db>> db = storage::Db::Open(dbo);
  if (!db.ok() && storage::Db::IsLockedError(db.status())) {
    // RocksDB's own words ("data/LOCK: Resource temporarily unavailable") name neither the
    // key nor the cause: two processes on one data directory.
    return Status::FailedPrecondition(
        "store.path \"" + c.store.path +
        "\" is in use: another process holds its lock (a limitsd already running on this data directory, or a "
        "limitsctl command that writes, such as compact). Stop that process first, or give this node a store.path "
        "of its own: each node needs its own data directory. RocksDB said: " + db.status().message());
  }
  if (!db.ok()) return db.status();
  db_ = std::move(*db);

  UsageStoreOptions so;
  so.num_partitions = c.kafka.num_partitions;
  so.windows = windows;
  so.max_policies_per_tenant = static_cast<uint32_t>(c.limits.max_policies_per_tenant);
  so.max_tenants = static_cast<uint32_t>(c.limits.max_tenants);
  so.max_rate_keys_per_tenant = static_cast<uint32_t>(c.limits.max_rate_keys_per_tenant);
  so.max_rate_keys = static_cast<uint64_t>(c.limits.max_rate_keys);
  // A policy's name must be kept when the overrides give it a limit of its own (read at the
  // moment the store needs it: the overrides may be reloaded).
  so.own_limit = [this](std::string_view tenant, std::string_view policy) {
    return limits_->Current()->For(tenant).PolicyMaxStreams(policy).has_value();
  };
  so.clock = &clock_;
  ASSIGN_OR_RETURN(store_, UsageStore::Open(*db_, so));
  RETURN_IF_ERROR(AdoptTopic());
  partitions_ = std::make_unique<PartitionManager>(clock_, c.windows.wait_assign, c.server.latch_readiness);
  rates_ = std::make_unique<RateLimiter>();
  run_tag_ = MakeRunTag(c.node.instance_id);

  ASSIGN_OR_RETURN(const kafka::Properties consumer_properties,
                   kafka::ClientProperties(kafka::Client::kConsumer, c.kafka.properties, c.kafka.consumer_properties));
  ASSIGN_OR_RETURN(const kafka::Properties producer_properties,
                   kafka::ClientProperties(kafka::Client::kProducer, c.kafka.properties, c.kafka.producer_properties));
  ASSIGN_OR_RETURN(offsets_, kafka::KafkaOffsetSource::Create({.brokers = brokers_,
                                                                .topic = c.kafka.topic,
                                                                .client_id = c.node.instance_id,
                                                                .properties = consumer_properties}));
  ASSIGN_OR_RETURN(producer_, kafka::StreamProducer::Create({.brokers = brokers_,
                                                             .topic = c.kafka.topic,
                                                             .zone = c.node.zone,
                                                             .instance_id = c.node.instance_id,
                                                             .run_tag = run_tag_,
                                                             .num_partitions = c.kafka.num_partitions,
                                                             .properties = producer_properties},
                                                            clock_, *registry_));
  PartitionLifecycler::Options lo;
  lo.windows = windows;
  lo.revoked_retention = c.windows.revoked_retention;
  lo.lookup.give_up = c.windows.lookup_give_up;
  lo.lookup.timeout = lo.lookup.probe_timeout = options_.lookup_timeout;
  lifecycler_ = std::make_unique<PartitionLifecycler>(*store_, *offsets_, *partitions_, clock_, lo);
  kafka::Consumer::Options co;
  co.brokers = brokers_;
  co.topic = c.kafka.topic;
  co.group = c.kafka.consumer_group;
  co.zone = c.node.zone;
  co.instance_id = c.node.instance_id;
  co.run_tag = run_tag_;
  co.num_partitions = c.kafka.num_partitions;
  co.static_membership = c.kafka.static_membership;
  co.properties = consumer_properties;
  co.apply_interval = options_.apply_interval;
  co.progress_interval = options_.progress_interval;
  co.stall_timeout = c.kafka.stall_timeout;
  co.stall_lookup_timeout = options_.lookup_timeout;
  co.max_restarts = c.kafka.max_consumer_restarts;
  co.restart_window = c.kafka.consumer_restart_window;
  consumer_ = std::make_unique<kafka::Consumer>(co, *store_, *partitions_, *lifecycler_, *offsets_, clock_, *registry_);
  RETURN_IF_ERROR(lifecycler_->Start([this](std::vector<AssignmentPlan> plans) { consumer_->DeliverPlans(std::move(plans)); }));
  RETURN_IF_ERROR(consumer_->Start());
  // The evictor's pass also forgets the token buckets of tenants idle long enough for them to
  // have refilled (rates_ outlives it: reset after the evictor in Stop()).
  std::vector<IdleSweep> sweeps;
  sweeps.push_back({.what = "idle_rate_buckets_forgotten",
                    .forget = [rates = rates_.get()](int64_t now_ms) { return rates->ForgetFull(now_ms); }});
  evictor_ = std::make_unique<Evictor>(*store_, std::move(sweeps), clock_, c.windows.eviction_interval);
  evictor_->Start();
  if (reloader_) reloader_->Start();

  if (c.zone.enabled) {
    zone_ = std::make_unique<NodeZone>(c.zone, c.node.instance_id, c.node.zone, c.kafka.num_partitions, *store_,
                                       *partitions_, *limits_, clock_, *registry_);
  }
  checker_ = std::make_unique<LimitsChecker>(*store_, *partitions_, *limits_, *rates_, *producer_, clock_, *registry_,
                                             LimitsChecker::Options{.num_partitions = c.kafka.num_partitions,
                                                                    .enforce_rate = c.limits.enforce_rate,
                                                                    .zone = zone_ ? &zone_->agent() : nullptr});
  service_ = std::make_unique<rpc::IngestLimitsService>(*checker_, *registry_);
  Result<std::unique_ptr<rpc::GrpcServer>> grpc = rpc::GrpcServer::Start(
      {.listen = c.server.grpc_listen,
       .in_flight = [this] { return service_->in_flight(); },
       .health_service_name = ::proto::IngestLimits::service_full_name(),
       .tls = c.server.grpc_tls,
       .cipher_suites = c.server.tls_cipher_suites,
       .tls_reload_interval = std::chrono::duration_cast<std::chrono::seconds>(c.server.tls_reload_interval)},
      *service_, zone_ ? std::vector<grpc::Service*>{&zone_->service()} : std::vector<grpc::Service*>{});
  if (!grpc.ok()) return grpc.status().Prefixed("server.grpc_listen " + c.server.grpc_listen);
  grpc_ = std::move(*grpc);
  RETURN_IF_ERROR(StartRing());

  collector_ = std::make_unique<NodeCollector>(*store_, *partitions_, *db_, consumer_->stats(), producer_->stats(),
                                               lifecycler_->stats(), clock_);
  tenant_series_ = std::make_unique<TenantSeries>(*store_, *partitions_, checker_->ingested_bytes(),
                                                  evictor_->evictions(),
                                                  static_cast<size_t>(c.metrics.max_tenant_series));
  std::vector<std::pair<std::string, http::Handler>> routes = {
      {"/ready", [this](const http::Request&) { return Ready(); }},
      {"/live", [this](const http::Request&) { return Live(); }},
      {"/metrics",
       [this](const http::Request&) {
         return http::Response{200, "text/plain; version=0.0.4; charset=utf-8",
                               RenderMetrics(*registry_, {collector_.get(), tenant_series_.get()})};
       }},
  };
  // The operator documents name tenants, their usage and the peers' addresses: on their own
  // listener when one is configured, so the port Prometheus scrapes need not reveal them.
  std::vector<std::pair<std::string, http::Handler>> operator_routes = {
      {"/ingest-limits/usage/",
       [this](const http::Request& r) {
         return UsageResponse(r, *store_, *partitions_, zone_ ? &zone_->agent() : nullptr, limits_.get());
       }},
      {"/partitions", [this](const http::Request& r) { return PartitionsResponse(r, *store_, *partitions_, *db_); }},
  };
  if (auto* gossip = dynamic_cast<ring::memberlist::MemberlistKv*>(ring_kv_.get())) {
    operator_routes.push_back({"/memberlist", [gossip](const http::Request&) {
                                 return http::Response{200, "application/json", gossip->StatusJson()};
                               }});
  }
  const bool separate_operator = !c.server.operator_http_listen.empty();
  if (!separate_operator) std::move(operator_routes.begin(), operator_routes.end(), std::back_inserter(routes));
  // Kubernetes' probes are answered on the server's event loop, apart from the worker pool
  // that serves /metrics and the documents: both handlers only read memory, under brief locks.
  http::HttpServerOptions http_options;
  ASSIGN_OR_RETURN(http_options.tls, ListenerTlsOf(c.server.http_tls, c.server, "server.http_tls_config"));
  http_options.probes = {"/ready", "/live"};
  Result<std::unique_ptr<http::HttpServer>> http =
      http::HttpServer::Start(c.server.http_listen, std::move(routes), std::move(http_options));
  if (!http.ok()) return http.status().Prefixed("server.http_listen " + c.server.http_listen);
  http_ = std::move(*http);
  if (separate_operator) {
    http::HttpServerOptions operator_options;
    ASSIGN_OR_RETURN(operator_options.tls,
                     ListenerTlsOf(c.server.operator_http_tls, c.server, "server.operator_http_tls_config"));
    operator_options.worker_threads = 2;
    operator_options.log_component = "operator_http";
    Result<std::unique_ptr<http::HttpServer>> op =
        http::HttpServer::Start(c.server.operator_http_listen, std::move(operator_routes), std::move(operator_options));
    if (!op.ok()) return op.status().Prefixed("server.operator_http_listen " + c.server.operator_http_listen);
    operator_http_ = std::move(*op);
  }
  log::Info("node", "started").Kv("grpc_port", grpc_->port()).Kv("http_port", http_->port());
  return Status::OK();
}

// The store's offsets are offsets in one topic: data kept for another (kafka.topic changed,
// the same volume) would resume this topic's partitions at the other's checkpoints and count
// the other's streams. It is dropped before anything is consumed; the topic's window is
// replayed. Dropped first, then the new topic written: a crash in between drops again.
Status Node::AdoptTopic() {
  const std::string& topic = config_.kafka.topic;
  ASSIGN_OR_RETURN(std::optional<std::string> recorded, db_->ReadTopic());
  if (recorded == topic) return Status::OK();
  if (recorded) {
    const std::vector<int32_t> held = store_->Partitions();
    log::Warn("node", "kafka.topic changed: dropping the data of the previous topic (its offsets mean nothing in this one)")
        .Kv("previous", *recorded)
        .Kv("topic", topic)
        .Kv("partitions", held.size());
    for (int32_t p : held) RETURN_IF_ERROR(store_->DropPartition(p).Prefixed("drop the previous topic's data"));
  }
  // A database from before the topic was recorded is taken as this topic's.
  return db_->PutTopic(topic);
}

// Joins the ring once gRPC serves, so the address it advertises answers. A KV store that is
// down is not an error here: the lifecycler retries in the background and /ready says so.
Status Node::StartRing() {
  const config::RingConfig& r = config_.ring;
  if (r.store.empty()) {
    log::Warn("node", "no ring configured ([ring] store = \"\"): Loki's limits frontend cannot find this node");
    // Exposed as 0, so an alert sees a node Loki cannot find (a ring metric that is merely
    // absent alerts nobody).
    prometheus::BuildGauge()
        .Name("limitsd_ring_registered")
        .Help("1 once this instance registered in the ring (latched), 0 before and after its removal; always 0 "
              "with no ring configured.")
        .Register(*registry_)
        .Add({})
        .Set(0);
    return Status::OK();
  }
  ASSIGN_OR_RETURN(ring_kv_, MakeRingKv(config_, *registry_));
  ASSIGN_OR_RETURN(std::string addr, ring::AdvertisedAddr(r.instance_addr, r.instance_port, grpc_->port()));
  ring::LifecyclerOptions o;
  o.ring_key = r.prefix + r.key;
  o.instance_id = config_.node.instance_id;
  o.addr = addr;
  o.zone = config_.node.zone;
  o.num_tokens = r.num_tokens;
  o.heartbeat_period = r.heartbeat_period;
  o.heartbeat_timeout = r.heartbeat_timeout;
  o.unregister_on_shutdown = r.unregister_on_shutdown;
  if (zone_) o.zone_protocol = ring::kZoneProtocol;
  ring_ = std::make_unique<ring::Lifecycler>(*ring_kv_, clock_, o, *registry_);
  ring_->Start();
  ring_->SetServing();  // the gRPC server is up: ACTIVE right after the JOINING registration
  if (zone_) zone_->Start(*ring_kv_, o.ring_key, r.heartbeat_timeout);
  return Status::OK();
}

Status Node::ReloadOverrides() {
  if (!reloader_) return Status::FailedPrecondition("no limits.overrides_file configured");
  return reloader_->Reload();
}

http::Response Node::Live() const {
  // A failed store is sticky: past the grace, report it so Kubernetes restarts the pod (the
  // node has left the consumer group already; a restart reloads and replays).
  const int64_t failed_since = store_->failed_since_ms();
  if (failed_since > 0 && clock_.NowMillis() - failed_since >= config_.store.failure_grace.count()) {
    return {503, "text/plain; charset=utf-8",
            "store failed " + std::to_string((clock_.NowMillis() - failed_since) / 1000) +
                " s ago: " + store_->health().message() + "\n"};
  }
  // A consumer that gave up recovering (or whose thread is wedged) consumes nothing: every
  // stream would answer reason 1 until a restart, which only Kubernetes can do now.
  if (std::optional<kafka::ConsumerFailure> f = consumer_->Failure()) {
    return {503, "text/plain; charset=utf-8",
            "consumer failed " + std::to_string((clock_.NowMillis() - f->since_ms) / 1000) + " s ago: " + f->reason +
                "\n"};
  }
  return {200, "text/plain; charset=utf-8", "live\n"};
}

http::Response Node::Ready() const {
  if (Status health = store_->health(); !health.ok()) {
    return {503, "text/plain; charset=utf-8", "store failed: " + health.message() + "\n"};
  }
  // Not latched: a node whose consumer gave up serves nothing (and with nothing ever
  // assigned, wait_assign would call it ready).
  if (std::optional<kafka::ConsumerFailure> f = consumer_->Failure()) {
    return {503, "text/plain; charset=utf-8", "consumer failed: " + f->reason + "\n"};
  }
  // Nothing is assigned while the brokers refuse us; wait_assign must not call that ready.
  if (std::optional<kafka::BrokerAuthFailure> f = kafka::RecentBrokerAuthFailure()) {
    return {503, "text/plain; charset=utf-8",
            "kafka refuses this node's credentials or certificate: " + f->reason + " (check " +
                kafka::kBrokerAuthKeys + ")\n"};
  }
  // Nor while the brokers cannot be reached or the topic is missing (or unusable): a
  // misconfigured kafka.brokers or kafka.topic must not look healthy after wait_assign.
  if (topic_) {
    if (std::optional<std::string> problem = topic_->Problem()) {
      return {503, "text/plain; charset=utf-8", *problem + "\n"};
    }
  }
  if (ring_) {
    const ring::LifecyclerStatus rs = ring_->status();
    if (!rs.registered) {
      return {503, "text/plain; charset=utf-8",
              "not registered in the ring" + (rs.last_error.empty() ? std::string(" yet") : ": " + rs.last_error) + "\n"};
    }
  }
  const Readiness r = partitions_->CheckReadiness();
  // "Ready with nothing assigned" waits wait_assign for a first assignment, which cannot come
  // before the topic can be consumed: counted from then, not from the start.
  if (r.ready && topic_ && partitions_->Snapshot().empty()) {
    const std::optional<int64_t> usable_since = topic_->usable_since_ms();
    const int64_t waited_ms = usable_since ? clock_.NowMillis() - *usable_since : 0;
    if (waited_ms < config_.windows.wait_assign.count()) {
      return {503, "text/plain; charset=utf-8",
              "no partitions assigned yet: kafka.topic became usable " + std::to_string(waited_ms / 1000) +
                  " s ago, and windows.wait_assign waits " +
                  std::to_string(config_.windows.wait_assign.count() / 1000) + " s for a first assignment\n"};
    }
  }
  return {r.ready ? 200 : 503, "text/plain; charset=utf-8", r.reason + "\n"};
}

Node::~Node() { Stop(); }

void Node::Stop() {
  if (stopped_) return;
  stopped_ = true;
  log::Info("node", "stopping");
  if (topic_) topic_->Stop();  // a request in flight ends within a second
  // No more exchanges of this node's own: its peers' leases from it run out, and its
  // buckets are homed elsewhere once it leaves the ring.
  if (zone_) zone_->Stop();
  // Leave the ring first, so frontends stop routing here while this node still answers.
  if (ring_) ring_->Stop();
  if (grpc_) grpc_->Stop();
  if (http_) http_->Stop();
  if (operator_http_) operator_http_->Stop();
  if (reloader_) reloader_->Stop();
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
  tenant_series_.reset();
  collector_.reset();
  ring_.reset();
  ring_kv_.reset();
  grpc_.reset();
  service_.reset();
  checker_.reset();
  zone_.reset();
  evictor_.reset();
  consumer_.reset();
  lifecycler_.reset();
  producer_.reset();
  offsets_.reset();
  store_.reset();
  reloader_.reset();
  rates_.reset();
  limits_.reset();
  if (db_) {
    if (Status s = db_->Close(); !s.ok()) log::Error("node", "closing the database failed").Kv("error", s.ToString());
    db_.reset();
  }
  topic_.reset();
  embedded_.reset();
  log::Info("node", "stopped");
}

}  // namespace limits
