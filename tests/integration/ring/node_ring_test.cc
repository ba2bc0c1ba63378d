// The node in Loki's ring: registration in a real etcd after gRPC listens, ACTIVE, /ready,
// limitsd_ring_* metrics, an etcd that is down at start, leaving on Stop(); and the gRPC
// health service as Loki's client pool calls it.
#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include "node/node.h"
#include "proto/health.grpc.pb.h"
#include "proto/limits.grpc.pb.h"
#include "ring/etcd_kv.h"
#include "rpc/grpc_server.h"
#include "testing/http_client.h"
#include "testing/prometheus_parser.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_etcd.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using testing::HttpGet;
using testing::WaitFor;

constexpr char kKey[] = "collectors/ingest-limits";
using Health = grpc::health::v1::HealthCheckResponse;

Health::ServingStatus Check(int port, const std::string& service = "") {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::health::v1::HealthCheckRequest req;
  req.set_service(service);
  Health resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::Status s = stub->Check(&ctx, req, &resp);
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  return resp.status();
}

class NodeRingTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(etcd_.ok()) << etcd_.log(); }

  config::Config Config(const std::string& instance) {
    config::Config c = kafka_.NodeConfig(dir_.Sub(instance), "zone-a", instance);
    c.ring.store = "etcd";
    c.ring.etcd_endpoints = {etcd_.endpoint()};
    c.ring.etcd_dial_timeout = 1s;
    c.ring.instance_addr = "127.0.0.1";
    c.ring.heartbeat_period = 200ms;
    c.ring.heartbeat_timeout = 2s;
    return c;
  }

  std::optional<::ring::Desc> Ring() {
    Result<std::optional<::ring::Desc>> d = etcd_client_->Get(kKey);
    return d.ok() ? *d : std::nullopt;
  }

  std::optional<::ring::InstanceDesc> Entry(const std::string& id) {
    std::optional<::ring::Desc> d = Ring();
    if (!d || !d->ingesters().count(id)) return std::nullopt;
    return d->ingesters().at(id);
  }

  testing::TestEtcd etcd_;
  testing::TestKafka kafka_{4};
  testing::TempDir dir_;
  std::unique_ptr<ring::EtcdKv> etcd_client_ = EtcdClient(etcd_.endpoint());

  static std::unique_ptr<ring::EtcdKv> EtcdClient(const std::string& endpoint) {
    ring::EtcdKvOptions o;
    o.endpoints = {endpoint};
    return *ring::EtcdKv::Create(o);
  }
};

TEST_F(NodeRingTest, RegistersActiveAfterGrpcListensAndLeavesOnStop) {
  auto node = Node::Start(Config("limitsd-a-0"));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const std::string addr = "127.0.0.1:" + std::to_string((*node)->grpc_port());
  ASSERT_TRUE(WaitFor([&] { auto e = Entry("limitsd-a-0"); return e && e->state() == ::ring::ACTIVE; }, 10s));
  const ::ring::InstanceDesc e = *Entry("limitsd-a-0");
  EXPECT_EQ(e.addr(), addr) << "instance_port 0 advertises the gRPC listen port";
  EXPECT_EQ(e.zone(), "zone-a");
  EXPECT_EQ(e.id(), "limitsd-a-0");
  EXPECT_EQ(e.tokens_size(), 128);
  EXPECT_NEAR(static_cast<double>(e.timestamp()), static_cast<double>(std::time(nullptr)), 2);
  // The heartbeat moves.
  const int64_t first = e.timestamp();
  ASSERT_TRUE(WaitFor([&] { auto x = Entry("limitsd-a-0"); return x && x->timestamp() > first; }, 5s));

  EXPECT_EQ(Check((*node)->grpc_port()), Health::SERVING);
  EXPECT_EQ(Check((*node)->grpc_port(), "proto.IngestLimits"), Health::SERVING);
  EXPECT_THAT(HttpGet((*node)->http_port(), "/ready").body, ::testing::Not(HasSubstr("ring")));
  const testing::ParsedMetrics m = testing::ParsePrometheusText(HttpGet((*node)->http_port(), "/metrics").body);
  EXPECT_TRUE(m.problems.empty()) << m.problems.front();
  EXPECT_EQ(m.Value("limitsd_ring_registered"), 1);
  EXPECT_EQ(m.Value("limitsd_ring_state", {{"state", "ACTIVE"}}), 1);
  EXPECT_GT(m.Value("limitsd_ring_last_heartbeat_timestamp_seconds"), 1.7e9);
  EXPECT_EQ(m.Value("limitsd_ring_errors_total", {{"op", "heartbeat"}}), 0);

  (*node)->Stop();
  EXPECT_FALSE(Entry("limitsd-a-0").has_value()) << "removed before Stop() returns";
  ASSERT_TRUE(Ring().has_value()) << "the key stays, with the ring's other entries";
}

TEST_F(NodeRingTest, EtcdDownAtStartTheNodeServesAndRegistersOnceItIsBack) {
  etcd_.Kill();
  auto node = Node::Start(Config("limitsd-a-1"));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  const int http = (*node)->http_port();
  ASSERT_TRUE(WaitFor([&] { return HttpGet(http, "/ready").body.find("not registered in the ring: ") != std::string::npos; }, 10s))
      << HttpGet(http, "/ready").body;
  EXPECT_EQ(HttpGet(http, "/ready").status, 503);
  EXPECT_THAT(HttpGet(http, "/ready").body, HasSubstr(etcd_.endpoint()));
  // It serves meanwhile.
  auto stub = proto::IngestLimits::NewStub(
      grpc::CreateChannel("127.0.0.1:" + std::to_string((*node)->grpc_port()), grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  proto::GetAssignedPartitionsResponse resp;
  EXPECT_TRUE(stub->GetAssignedPartitions(&ctx, proto::GetAssignedPartitionsRequest(), &resp).ok());
  EXPECT_EQ(Check((*node)->grpc_port()), Health::SERVING);
  EXPECT_GE(testing::ParsePrometheusText(HttpGet(http, "/metrics").body)
                .Value("limitsd_ring_errors_total", {{"op", "register"}}),
            1);

  ASSERT_TRUE(etcd_.Restart()) << etcd_.log();
  ASSERT_TRUE(WaitFor([&] { auto e = Entry("limitsd-a-1"); return e && e->state() == ::ring::ACTIVE; }, 15s));
  EXPECT_THAT(HttpGet(http, "/ready").body, ::testing::Not(HasSubstr("ring")));
  EXPECT_EQ(testing::ParsePrometheusText(HttpGet(http, "/metrics").body).Value("limitsd_ring_registered"), 1);
}

TEST(GrpcHealthTest, ServingWhileRunningNotServingOnceStopping) {
  proto::IngestLimits::Service service;  // every method UNIMPLEMENTED: health needs none
  auto server = rpc::GrpcServer::Start({.listen = "127.0.0.1:0", .health_service_name = "proto.IngestLimits"}, service);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  const int port = (*server)->port();
  EXPECT_EQ(Check(port), Health::SERVING);
  EXPECT_EQ(Check(port, "proto.IngestLimits"), Health::SERVING);
  (*server)->SetNotServing();
  EXPECT_EQ(Check(port), Health::NOT_SERVING);
  EXPECT_EQ(Check(port, "proto.IngestLimits"), Health::NOT_SERVING);
  (*server)->Stop();
}

TEST(RingCheckConfigTest, NamesTheBadRingKeysAndExits2) {
  testing::RunResult r = testing::RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "ring.store=etcd",
                                              "--set", "ring.etcd_endpoints=etcd-0:2379,etcd-1",
                                              "--set", "ring.heartbeat_period=10s", "--set", "ring.heartbeat_timeout=10s"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("ring.etcd_endpoints: \"etcd-1\": expected host:port (from --set)"));
  EXPECT_THAT(r.err, HasSubstr("ring.heartbeat_timeout: must be longer than ring.heartbeat_period (10s), got 10s"));
  r = testing::RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "ring.store=consul"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("ring.store: expected"));
  r = testing::RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "ring.store=etcd", "--set", "ring.etcd_endpoints=etcd-0:2379"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace limits
