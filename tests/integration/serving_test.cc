// Serving end to end: a node on the mock cluster answering gRPC (our stub, and Python's
// grpcio) and HTTP on loopback — limits, reasons, assigned partitions, bad requests, the
// usage and partitions documents, a strictly parsed /metrics scrape, overrides reload.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "config/load_config.h"
#include "node/node.h"
#include "proto/limits.grpc.pb.h"
#include "testing/http_client.h"
#include "testing/prometheus_parser.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using testing::HttpGet;
using testing::WaitFor;

constexpr int32_t kPartitions = 4;

bool AllReady(Node& node) {
  auto snapshot = node.partitions().Snapshot();
  if (snapshot.size() != kPartitions) return false;
  for (const PartitionInfo& i : snapshot) {
    if (i.state != PartitionState::kReady) return false;
  }
  return true;
}

class ServingTest : public ::testing::Test {
 protected:
  void StartNode(const std::function<void(config::Config&)>& tweak = nullptr, NodeOptions options = {}) {
    config::Config c = kafka_.NodeConfig(dir_.Sub("node"), "zone-a", "node-a");
    c.limits.defaults.max_global_streams_per_user = 4;
    c.limits.defaults.policy_override_limits = {{"gold", {.max_global_streams_per_user = 2}}};
    c.limits.enforce_rate = true;
    c.limits.tenants["tiny-rate"].ingestion_burst_size_mb = 0.001;  // ~1 KiB
    c.limits.tenants["tiny-rate"].ingestion_rate_mb = 0.0001;
    if (tweak) tweak(c);
    auto node = Node::Start(c, Clock::System(), options);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    node_ = std::move(*node);
    channel_ = grpc::CreateChannel("127.0.0.1:" + std::to_string(node_->grpc_port()), grpc::InsecureChannelCredentials());
    stub_ = proto::IngestLimits::NewStub(channel_);
  }

  grpc::Status Exceeds(const std::string& tenant, const std::vector<uint64_t>& hashes, proto::ExceedsLimitsResponse* out,
                       uint64_t bytes = 100, const std::string& policy = "") {
    proto::ExceedsLimitsRequest req;
    req.set_tenant(tenant);
    for (uint64_t h : hashes) {
      proto::StreamMetadata* s = req.add_streams();
      s->set_streamhash(h);
      s->set_totalsize(bytes);
      s->set_ingestionpolicy(policy);
    }
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    return stub_->ExceedsLimits(&ctx, req, out);
  }

  std::map<uint64_t, uint32_t> Rejected(const std::string& tenant, const std::vector<uint64_t>& hashes,
                                        uint64_t bytes = 100, const std::string& policy = "") {
    proto::ExceedsLimitsResponse resp;
    grpc::Status s = Exceeds(tenant, hashes, &resp, bytes, policy);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::map<uint64_t, uint32_t> out;
    for (const auto& r : resp.results()) out[r.streamhash()] = r.reason();
    return out;
  }

  testing::TempDir dir_;
  testing::TestKafka kafka_{kPartitions};
  std::unique_ptr<Node> node_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<proto::IngestLimits::Stub> stub_;
};

TEST_F(ServingTest, LimitsReasonsAndAssignedPartitionsOverGrpc) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));

  // Accept up to the limit (4: one node serves every partition), reject beyond with reason 2.
  EXPECT_TRUE(Rejected("a", {1, 2, 3, 4}).empty());
  EXPECT_EQ(Rejected("a", {1, 5, 6}), (std::map<uint64_t, uint32_t>{{5, 2}, {6, 2}}));
  // Per-policy override: "gold" streams have their own limit of 2.
  const std::map<uint64_t, uint32_t> gold = Rejected("a", {10, 11, 12}, 100, "gold");
  ASSERT_EQ(gold.size(), 1u);
  EXPECT_EQ(gold.begin()->second, 2u);
  // Rate limit: a push larger than the tenant's burst gets the new reason 3.
  // Rate limited is 1001 on the wire (issue 26 item 1): 3 is Loki's "not owned".
  EXPECT_EQ(Rejected("tiny-rate", {1, 2}, 4096), (std::map<uint64_t, uint32_t>{{1, 1001}, {2, 1001}}));
  EXPECT_TRUE(Rejected("tiny-rate", {1, 2}, 100).empty());

  grpc::ClientContext ctx;
  proto::GetAssignedPartitionsResponse assigned;
  ASSERT_TRUE(stub_->GetAssignedPartitions(&ctx, {}, &assigned).ok());
  EXPECT_EQ(assigned.assignedpartitions_size(), kPartitions);
  for (const PartitionInfo& info : node_->partitions().Snapshot()) {
    EXPECT_EQ(assigned.assignedpartitions().at(info.partition), info.assigned_at_ms * 1'000'000);
  }

  // UpdateRates: 6000 bytes in one 60 s bucket = 100 B/s, for every hash as in Loki: 99 is no
  // stream (a segmentation key), gets a rate and stays no stream.
  proto::UpdateRatesRequest rates_req;
  rates_req.set_tenant("a");
  for (uint64_t h : {1, 2, 99}) {
    auto* s = rates_req.add_streams();
    s->set_streamhash(h);
    s->set_totalsize(6000);
  }
  grpc::ClientContext rctx;
  proto::UpdateRatesResponse rates;
  ASSERT_TRUE(stub_->UpdateRates(&rctx, rates_req, &rates).ok());
  ASSERT_EQ(rates.results_size(), 3);
  for (const auto& r : rates.results()) EXPECT_EQ(r.rate(), 100u) << r.streamhash();
  EXPECT_EQ(node_->store().UsageOf("a", *node_->partitions().Serving()).total_streams, 6u);  // 1-4, 10, 11

  // Accepted streams went back to the topic, and this node skipped its own records.
  ASSERT_TRUE(WaitFor([&] { return node_->producer().stats().produced.load() >= 8; }, 30s));
  ASSERT_TRUE(WaitFor([&] { return node_->consumer().stats().discarded.load() >= 8; }, 30s));
}

// Issue 24, item 1: only a tenant Loki never sends fails a call. More than 100 000 streams
// (one large push) and a policy over 255 bytes (a client's X-Loki-Ingestion-Policy header)
// were whole-call INVALID_ARGUMENTs, which Loki's distributor answers by accepting every
// stream: the tenant's limit was off. Both are answered stream by stream now.
TEST_F(ServingTest, BadRequestsAreInvalidArgument) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  proto::ExceedsLimitsResponse resp;
  grpc::Status s = Exceeds("", {1}, &resp);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("tenant is required"));
  std::vector<uint64_t> many;
  for (uint64_t h = 0; h < 150'000; ++h) many.push_back(h * 7919);
  s = Exceeds("a", many, &resp, 1);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.results_size(), 150'000 - 4);  // the tenant's limit is 4
  s = Exceeds("b", {1, 2}, &resp, 1, std::string(300, 'p'));
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.results_size(), 0);
  EXPECT_EQ(node_->store().UsageOf("b", *node_->partitions().Serving()).active_by_policy,
            (std::map<std::string, uint64_t>{{"", 2}}));
  // Unknown fields are fine: a request carrying field 99 still parses and is served.
  proto::ExceedsLimitsRequest req;
  req.set_tenant("a");
  req.add_streams()->set_streamhash(1);
  std::string bytes = req.SerializeAsString() + std::string("\xa0\x06\x01", 3);  // field 99, varint 1
  ASSERT_TRUE(req.ParseFromString(bytes));
  grpc::ClientContext ctx;
  EXPECT_TRUE(stub_->ExceedsLimits(&ctx, req, &resp).ok());
}

// A partition still replaying answers reason 1 (failed) rather than accepting blindly.
TEST_F(ServingTest, StreamsOfAReplayingPartitionGetReasonOne) {
  const int64_t now = Clock::System().NowMillis();
  for (uint64_t i = 0; i < 20; ++i) kafka_.Produce("r", i * kPartitions, now - 1000);  // partition 0
  kafka_.Flush();
  // Consumed records wait 3 s before they are applied: the partition is observably replaying.
  StartNode(nullptr, NodeOptions{.apply_interval = 3s});
  // Look-ups run per partition: wait for the others to be ready too.
  ASSERT_TRUE(WaitFor(
      [&] {
        auto info = node_->partitions().Get(0);
        return info && info->state == PartitionState::kReplaying &&
               node_->partitions().Serving()->Count() == kPartitions - 1;
      },
      120s));
  EXPECT_EQ(Rejected("r", {0, 400}), (std::map<uint64_t, uint32_t>{{0, 1}, {400, 1}}));
  {
    grpc::ClientContext ctx;
    proto::GetAssignedPartitionsResponse assigned;
    ASSERT_TRUE(stub_->GetAssignedPartitions(&ctx, {}, &assigned).ok());
    EXPECT_EQ(assigned.assignedpartitions().count(0), 0u);  // replaying: not listed
    EXPECT_EQ(assigned.assignedpartitions_size(), kPartitions - 1);
  }
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  EXPECT_EQ(Rejected("r", {0, 400}), (std::map<uint64_t, uint32_t>{{400, 2}}));  // 20 replayed: over 4
  const auto m = testing::ParsePrometheusText(HttpGet(node_->http_port(), "/metrics").body);
  EXPECT_EQ(m.Value("loki_ingest_limits_streams_discarded_total", {{"partition", "0"}}), 2);
}

TEST_F(ServingTest, HttpUsagePartitionsAndAStrictlyValidScrape) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  Rejected("tenant-a", {1, 2, 3}, 100);
  Rejected("tenant-a", {20}, 100, "gold");
  proto::UpdateRatesRequest rates_req;
  rates_req.set_tenant("tenant-a");
  auto* s = rates_req.add_streams();
  s->set_streamhash(1);
  s->set_totalsize(30'000);
  grpc::ClientContext ctx;
  proto::UpdateRatesResponse rates;
  ASSERT_TRUE(stub_->UpdateRates(&ctx, rates_req, &rates).ok());

  testing::HttpResult usage = HttpGet(node_->http_port(), "/ingest-limits/usage/tenant-a");
  EXPECT_EQ(usage.status, 200);
  EXPECT_THAT(usage.body, HasSubstr("\"tenant\": \"tenant-a\""));
  EXPECT_THAT(usage.body, HasSubstr("\"streams_total\": 4"));
  EXPECT_THAT(usage.body, HasSubstr("\"streams_by_policy\": {\n    \"\": 3,\n    \"gold\": 1\n  }"));
  EXPECT_THAT(usage.body, HasSubstr("\"rate\": 100"));  // 30000 bytes over the 300 s rate window
  EXPECT_EQ(HttpGet(node_->http_port(), "/ingest-limits/usage/").status, 400);
  EXPECT_EQ(HttpGet(node_->http_port(), "/nope").status, 404);

  testing::HttpResult parts = HttpGet(node_->http_port(), "/partitions");
  EXPECT_EQ(parts.status, 200);
  for (int32_t p = 0; p < kPartitions; ++p) EXPECT_THAT(parts.body, HasSubstr("\"partition\": " + std::to_string(p)));
  EXPECT_THAT(parts.body, HasSubstr("\"state\": \"ready\""));
  EXPECT_THAT(parts.body, HasSubstr("\"end_offset_at_assignment\": "));
  EXPECT_THAT(parts.body, HasSubstr("\"disk_bytes\": "));

  EXPECT_EQ(HttpGet(node_->http_port(), "/ready").status, 200);
  EXPECT_EQ(HttpGet(node_->http_port(), "/live").status, 200);

  testing::HttpResult scrape = HttpGet(node_->http_port(), "/metrics");
  ASSERT_EQ(scrape.status, 200);
  const testing::ParsedMetrics m = testing::ParsePrometheusText(scrape.body);
  for (const auto& p : m.problems) ADD_FAILURE() << p;
  // Loki's names, types and labels, so existing dashboards work.
  const std::map<std::string, std::string> loki = {
      {"loki_ingest_limits_streams", "gauge"},
      {"loki_ingest_limits_active_streams", "gauge"},
      {"loki_ingest_limits_partitions", "gauge"},
      {"loki_ingest_limits_lag_seconds", "histogram"},
      {"loki_ingest_limits_records_fetched_total", "counter"},
      {"loki_ingest_limits_records_discarded_total", "counter"},
      {"loki_ingest_limits_records_invalid_total", "counter"},
      {"loki_ingest_limits_records_produced_total", "counter"},
      {"loki_ingest_limits_records_produced_failed_total", "counter"},
      {"loki_ingest_limits_streams_discarded_total", "counter"},
      {"loki_ingest_limits_tenant_ingested_bytes_total", "counter"},
      {"limitsd_replay_duration_seconds", "histogram"},
      {"limitsd_grpc_request_duration_seconds", "histogram"},
      {"limitsd_grpc_requests_total", "counter"},
      {"limitsd_produce_latency_seconds", "histogram"},
      {"limitsd_rocksdb_sst_bytes", "gauge"},
      {"limitsd_rocksdb_block_cache_usage_bytes", "gauge"},
      {"limitsd_checkpoint_age_seconds", "gauge"},
  };
  for (const auto& [name, type] : loki) {
    EXPECT_EQ(m.types.count(name) ? m.types.at(name) : "missing", type) << name;
  }
  EXPECT_EQ(m.Value("loki_ingest_limits_active_streams", {{"tenant", "tenant-a"}}), 4);
  EXPECT_EQ(m.Value("loki_ingest_limits_partitions", {{"partition", "3"}}), 3);  // ready, as Loki numbers it
  EXPECT_EQ(m.Value("loki_ingest_limits_tenant_ingested_bytes_total", {{"tenant", "tenant-a"}}), 400);
  EXPECT_EQ(m.Value("limitsd_grpc_requests_total", {{"method", "ExceedsLimits"}, {"code", "OK"}}), 2);
  EXPECT_EQ(m.Value("limitsd_rocksdb_estimated_keys", {{"cf", "meta"}}) >= 0, true);
  EXPECT_EQ(m.Value("limitsd_store_write_failed"), 0);
  // Loki's lag buckets, prometheus.ExponentialBuckets(0.125, 2, 18): 0.125 s to 16384 s, +Inf.
  std::vector<std::string> lag_buckets;
  for (const testing::Sample& sample : m.samples) {
    if (sample.name == "loki_ingest_limits_lag_seconds_bucket") lag_buckets.push_back(sample.labels.at("le"));
  }
  ASSERT_EQ(lag_buckets.size(), 19u);
  EXPECT_EQ(lag_buckets.front(), "0.125");
  EXPECT_EQ(lag_buckets[17], "16384");
  EXPECT_EQ(lag_buckets.back(), "+Inf");
  for (const testing::Sample& sample : m.samples) {
    EXPECT_EQ(sample.labels.count("stream"), 0u) << sample.name;  // never a label per stream
  }
}

// Issue 25 item 2: with server.operator_http_listen set, the documents that name tenants and
// peers move to it (here over mTLS) and the scraped port keeps only /metrics and the probes.
TEST_F(ServingTest, Issue25_OperatorDocumentsMoveToTheirOwnListener) {
  testing::TestCerts ca(dir_.path());
  const testing::CertPair server = ca.Server("server");
  const testing::CertPair client = ca.Client("client");
  StartNode([&](config::Config& c) {
    c.server.operator_http_listen = "127.0.0.1:0";
    c.server.operator_http_tls = {.cert_file = server.cert,
                                  .key_file = server.key,
                                  .client_ca_file = ca.ca(),
                                  .client_auth_type = "RequireAndVerifyClientCert"};
  });
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  Rejected("tenant-a", {1, 2});
  const int http = node_->http_port();
  const int op = node_->operator_http_port();
  ASSERT_GT(op, 0);
  ASSERT_NE(op, http);
  EXPECT_EQ(HttpGet(http, "/ingest-limits/usage/tenant-a").status, 404);
  EXPECT_EQ(HttpGet(http, "/partitions").status, 404);
  EXPECT_EQ(HttpGet(http, "/metrics").status, 200);
  EXPECT_EQ(HttpGet(http, "/ready").status, 200);
  EXPECT_EQ(HttpGet(http, "/live").status, 200);

  auto https = [&](const std::string& path, bool with_cert) {
    std::vector<std::string> argv = {"/usr/bin/python3", HTTPS_GET, "https://localhost:" + std::to_string(op) + path,
                                     ca.ca()};
    if (with_cert) argv.insert(argv.end(), {"--cert", client.cert, "--key", client.key});
    testing::RunResult r = testing::RunProgram(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  };
  EXPECT_THAT(https("/ingest-limits/usage/tenant-a", true), HasSubstr("\"streams_total\": 2"));
  EXPECT_THAT(https("/partitions", true), HasSubstr("\"state\": \"ready\""));
  EXPECT_THAT(https("/metrics", true), ::testing::StartsWith("404"));
  EXPECT_THAT(https("/partitions", false), ::testing::StartsWith("ERROR"));  // no client certificate
  EXPECT_NE(HttpGet(op, "/partitions").status, 200);                        // plain text is refused
}

TEST_F(ServingTest, PythonGrpcioClientInteroperates) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  testing::RunResult r = testing::RunProgram({"/usr/bin/python3", PYTHON_CLIENT,
                                              "127.0.0.1:" + std::to_string(node_->grpc_port()), PROTO_PYTHON_DIR});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("rejected reasons: [2, 2]"));
}

// Issue 25 item 1: Loki's limits client with tls-enabled (and a client certificate: mTLS),
// played by grpcio, calls the node over TLS; without a client certificate it is refused.
TEST_F(ServingTest, PythonGrpcioClientInteroperatesOverMutualTls) {
  testing::TestCerts ca(dir_.path());
  const testing::CertPair server = ca.Server("server");
  const testing::CertPair client = ca.Client("client");
  StartNode([&](config::Config& c) {
    c.server.grpc_tls = {.cert_file = server.cert,
                         .key_file = server.key,
                         .client_ca_file = ca.ca(),
                         .client_auth_type = "RequireAndVerifyClientCert"};
  });
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  const std::string target = "localhost:" + std::to_string(node_->grpc_port());
  testing::RunResult r =
      testing::RunProgram({"/usr/bin/python3", PYTHON_CLIENT, target, PROTO_PYTHON_DIR, ca.ca(), client.cert, client.key});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("health: 0801"));
  EXPECT_THAT(r.out, HasSubstr("rejected reasons: [2, 2]"));
  r = testing::RunProgram({"/usr/bin/python3", PYTHON_CLIENT, target, PROTO_PYTHON_DIR, ca.ca()});
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
}

TEST_F(ServingTest, OverridesFileReloadsWithoutRestartAndABrokenFileKeepsTheOldLimits) {
  const std::string overrides = dir_.Sub("overrides.toml");
  std::ofstream(overrides) << "[tenants.t]\nmax_global_streams_per_user = 2\n";
  StartNode([&](config::Config& c) { c.limits.overrides_file = overrides; });
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  auto last_ok = [&] {
    return testing::ParsePrometheusText(HttpGet(node_->http_port(), "/metrics").body)
        .Value("limitsd_overrides_last_reload_successful");
  };
  EXPECT_EQ(last_ok(), 1);
  EXPECT_EQ(Rejected("t", {1, 2, 3}).size(), 1u);
  // Change the file: the node picks it up on its own.
  std::ofstream(overrides) << "[tenants.t]\nmax_global_streams_per_user = 5\n# changed\n";
  ASSERT_TRUE(WaitFor([&] { return Rejected("t", {3}).empty(); }, 30s));
  EXPECT_EQ(Rejected("t", {4, 5, 6}).size(), 1u);  // 5 now
  // A broken file: the reload fails and the limits stay as they were.
  std::ofstream(overrides) << "[tenants.t]\nmax_global_streams_per_user = \"lots\"\n";
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto m = testing::ParsePrometheusText(HttpGet(node_->http_port(), "/metrics").body);
        return m.Value("limitsd_overrides_reload_failures_total") >= 1;
      },
      30s));
  Status reload = node_->ReloadOverrides();  // what SIGHUP does
  EXPECT_FALSE(reload.ok());
  EXPECT_THAT(reload.message(), HasSubstr("tenants.t.max_global_streams_per_user"));
  EXPECT_EQ(Rejected("t", {7}).size(), 1u);   // still 5 active: 7 is over
  EXPECT_TRUE(Rejected("t", {1, 2}).empty());  // known streams still accepted
  EXPECT_EQ(last_ok(), 0);  // what the alert LimitsdOverridesReloadFailing watches
  std::ofstream(overrides) << "[tenants.t]\nmax_global_streams_per_user = 6\n";
  ASSERT_TRUE(WaitFor([&] { return last_ok() == 1; }, 30s));
}

// Issue 8 item 13 on the node: a UTF-8 tenant's usage document names it as written (it came
// back as "t\u00c3\u00a9..."), and "dupt%00xyz" is refused instead of answered for "dupt".
// Item 24: the probes and the scrape refuse other methods.
TEST_F(ServingTest, Item13_UsageOfAUtf8TenantAndAnEncodedNulItem24_Methods) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  EXPECT_TRUE(Rejected("t\xC3\xA9n\xC3\xA4nt", {1, 2}).empty());
  EXPECT_TRUE(Rejected("dupt", {1}).empty());
  const int port = node_->http_port();
  testing::HttpResult usage = HttpGet(port, "/ingest-limits/usage/t%C3%A9n%C3%A4nt");
  EXPECT_EQ(usage.status, 200);
  EXPECT_THAT(usage.body, HasSubstr("\"tenant\": \"t\xC3\xA9n\xC3\xA4nt\""));
  EXPECT_THAT(usage.body, HasSubstr("\"streams_total\": 2"));
  testing::HttpResult nul = HttpGet(port, "/ingest-limits/usage/dupt%00xyz");
  EXPECT_EQ(nul.status, 400) << nul.body;
  EXPECT_THAT(nul.body, ::testing::Not(HasSubstr("\"streams_total\"")));
  EXPECT_EQ(HttpGet(port, "/ingest-limits/usage/%FF").status, 400);
  EXPECT_EQ(HttpGet(port, "/ingest-limits/usage/dupt").status, 200);
  for (const char* path : {"/ready", "/metrics", "/live"}) {
    for (const char* method : {"POST", "PUT", "DELETE"}) {
      EXPECT_EQ(testing::HttpRequest(port, method, path).status, 405) << method << " " << path;
    }
    EXPECT_EQ(testing::HttpRequest(port, "HEAD", path).status, 200) << path;
  }
}

// Issue 10 item 3: Loki's runtime-config YAML as the overrides file, under the same reload
// rules: picked up on change, a broken file keeps the limits in force.
TEST_F(ServingTest, LokiRuntimeConfigYamlReloadsLikeTheTomlOverrides) {
  const std::string overrides = dir_.Sub("runtime-config.yaml");
  std::ofstream(overrides) << "overrides:\n  t:\n    max_global_streams_per_user: 2\n    retention_period: 744h\n";
  StartNode([&](config::Config& c) { c.limits.overrides_file = overrides; });
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  EXPECT_EQ(Rejected("t", {1, 2, 3}).size(), 1u);
  std::ofstream(overrides) << "overrides:\n  t:\n    max_global_streams_per_user: 5\n"
                              "    policy_override_limits:\n      gold:\n        max_global_streams_per_user: 1\n";
  ASSERT_TRUE(WaitFor([&] { return Rejected("t", {3}).empty(); }, 30s));
  EXPECT_EQ(Rejected("t", {10, 11}, 100, "gold").size(), 1u);  // the policy's own limit
  std::ofstream(overrides) << "overrides:\n  t:\n    max_global_streams_per_user: lots\n";
  ASSERT_TRUE(WaitFor(
      [&] {
        const auto m = testing::ParsePrometheusText(HttpGet(node_->http_port(), "/metrics").body);
        return m.Value("limitsd_overrides_reload_failures_total") >= 1;
      },
      30s));
  Status reload = node_->ReloadOverrides();
  EXPECT_FALSE(reload.ok());
  EXPECT_THAT(reload.message(), HasSubstr("overrides.t.max_global_streams_per_user: expected an integer, got \"lots\""));
  EXPECT_THAT(reload.message(), HasSubstr("runtime-config.yaml:3)"));
  EXPECT_EQ(Rejected("t", {4, 5, 6}), (std::map<uint64_t, uint32_t>{{6, 2}}));  // still 5: 1-3 active, 4 and 5 fit
}

// Issue 26 item 3: the node on Loki's own configuration — limits_config for the defaults and
// runtime_config.file's two files merged — reloading when the second file changes.
TEST_F(ServingTest, Issue26_LokisConfigFileAndMergedRuntimeConfigFiles) {
  const std::string a = dir_.Sub("runtime-a.yaml"), b = dir_.Sub("runtime-b.yaml"), loki = dir_.Sub("loki.yaml");
  std::ofstream(a) << "overrides:\n  t:\n    max_global_streams_per_user: 2\n";
  std::ofstream(b) << "overrides:\n  t:\n    policy_override_limits:\n      gold: {inherit_limits: true}\n";
  std::ofstream(loki) << "limits_config:\n  max_global_streams_per_user: 3\nruntime_config:\n  file: " << a << "," << b
                      << "\n";
  StartNode([&](config::Config& c) {
    c.limits.defaults_set = {};
    c.limits.defaults = {};
    c.limits.loki_config_file = loki;
    ASSERT_TRUE(config::ApplyLokiMainConfig(&c).ok());
  });
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  EXPECT_EQ(Rejected("other", {1, 2, 3, 4}).size(), 1u);        // limits_config: 3
  EXPECT_EQ(Rejected("t", {1, 2, 3}).size(), 1u);               // runtime-a: 2
  EXPECT_EQ(Rejected("t", {11, 12, 13}, 100, "gold").size(), 1u);  // runtime-b: gold inherits 2, a bucket of its own
  std::ofstream(b) << "overrides:\n  t:\n    max_global_streams_per_user: 6\n";
  ASSERT_TRUE(WaitFor([&] { return Rejected("t", {3}).empty(); }, 30s));  // b now overrides a's 2
  // gold is back in the tenant's bucket: 1, 2, 3, 11 and 12 hold 5 of its 6 places.
  EXPECT_EQ(Rejected("t", {21, 22}, 100, "gold").size(), 1u);
}

// Issue 26 item 4: CheckLimitsAndShard's wire format is not established from Loki's public
// material (ARCHITECTURE.md, "CheckLimitsAndShard"), so it is UNIMPLEMENTED, which Loki's
// frontend turns into one shard per stream and its distributor's shadow mode counts as failed.
TEST_F(ServingTest, Issue26_CheckLimitsAndShardIsUnimplemented) {
  StartNode();
  const std::string target = "127.0.0.1:" + std::to_string(node_->grpc_port());
  testing::RunResult r = testing::RunProgram(
      {"/usr/bin/python3", "-c",
       "import grpc, sys\n"
       "ch = grpc.insecure_channel(sys.argv[1])\n"
       "try:\n"
       "    ch.unary_unary('/proto.IngestLimits/CheckLimitsAndShard')(b'', timeout=10)\n"
       "    print('answered')\n"
       "except grpc.RpcError as e:\n"
       "    print(e.code().name)\n",
       target});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("UNIMPLEMENTED"));
}

// A call the client cancels before its request arrives reaches the handler with an empty body;
// it is counted as cancelled, not as a client error ("tenant is required"), which loadgen's
// last call of every run added to limitsd_grpc_requests_total (issue 26 item 7: 501 of 500).
TEST_F(ServingTest, Issue26_CallsCancelledBeforeTheirRequestArrivedAreNotInvalidArguments) {
  StartNode();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node_); }, 60s));
  testing::RunResult r = testing::RunProgram(
      {"/usr/bin/python3", "-c",
       "import grpc, sys\n"
       "ch = grpc.insecure_channel(sys.argv[1])\n"
       "grpc.channel_ready_future(ch).result(timeout=10)\n"
       "call = ch.unary_unary('/proto.IngestLimits/ExceedsLimits')\n"
       "req = b'\\x0a\\x01t' + b'\\x12\\x02\\x08\\x01' * 20000\n"
       "for i in range(300):\n"
       "    call.future(req).cancel()\n"
       "print('done')\n",
       "127.0.0.1:" + std::to_string(node_->grpc_port())});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string scrape;
  ASSERT_TRUE(WaitFor(
      [&] {
        scrape = HttpGet(node_->http_port(), "/metrics").body;
        const auto m = testing::ParsePrometheusText(scrape);
        return m.Value("limitsd_grpc_requests_total", {{"method", "ExceedsLimits"}, {"code", "Canceled"}}) +
                       m.Value("limitsd_grpc_requests_total", {{"method", "ExceedsLimits"}, {"code", "OK"}}) >=
                   1 &&
               m.Value("loki_inflight_requests", {{"method", "gRPC"}, {"route", "/proto.IngestLimits/ExceedsLimits"}}) == 0;
      },
      30s))
      << scrape;
  EXPECT_THAT(scrape, ::testing::Not(HasSubstr("code=\"InvalidArgument\",method=\"ExceedsLimits\"")));
}

}  // namespace
}  // namespace limits
