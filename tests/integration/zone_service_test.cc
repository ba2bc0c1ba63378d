// The zone's wire (issue 27): limitsd.zone.v1.Zone served by GrpcServer and called by
// ZonePeers on loopback — a bucket turned hot at its home and a recall acknowledged over the
// wire; a request a peer got wrong refused with the field named before the handler sees it;
// an answer a peer forged refused by the client; a peer that is not there unavailable within
// the timeout; and the same over TLS and mTLS, where a peer without the zone's certificates
// is refused; a home's Directs to several members in flight at once.
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include "limits/zone/member_bucket.h"
#include "limits/zone/zone_home.h"
#include "rpc/grpc_server.h"
#include "rpc/zone_peers.h"
#include "rpc/zone_service.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"

namespace limits::rpc {
namespace {

using namespace std::chrono_literals;
constexpr int32_t kPartitions = 2;
const zone::BucketKey kKey{"tenant-1", ""};
const std::vector<std::string> kMembers = {"a", "b"};

// A home of every bucket (limit 10) and a member of one: what a node's zone agent does, with
// a lock, nothing more.
class TestZone final : public zone::ZoneHandler {
 public:
  Result<zone::ExchangeAnswer> Exchange(const zone::ExchangeRequest& request, Deadline deadline) override {
    ++exchanges;
    last_deadline = deadline;
    {
      std::unique_lock lock(hold_mu);
      held.wait_for(lock, 10s, [&] { return !hold; });
    }
    if (fail) return Status::Unavailable("the home is relearning");
    std::lock_guard lock(mu);
    zone::ExchangeAnswer answer = home.Answer(request, kMembers, ++now_ms);
    if (forge) answer.directives.push_back({kKey, {int64_t{1} << 41, 1, 1}});
    return answer;
  }
  Result<std::vector<zone::BucketReport>> Direct(const DirectRequest& request) override {
    {
      // With `gather` set, a Direct answers once that many are in (or 10 s have passed).
      std::unique_lock lock(gather_mu);
      most_at_once = std::max(most_at_once, ++arrived);
      gathered.notify_all();
      gathered.wait_for(lock, 10s, [&] { return arrived >= gather; });
    }
    std::lock_guard lock(mu);
    std::vector<zone::BucketReport> reports;
    for (const zone::BucketDirective& d : request.directives) {
      bucket.Apply(d.directive);
      reports.push_back({d.key, bucket.Report({}), 0, false});
    }
    return reports;
  }

  std::mutex mu;
  int64_t now_ms = 1'000;
  zone::ZoneHome home{kPartitions, 60'000, [](const zone::BucketKey&) { return uint64_t{10}; },
                      [](const zone::BucketKey&) { return true; }, 0};
  zone::MemberBucket bucket;  // this node as a member
  std::atomic<int> exchanges{0};
  std::atomic<bool> fail{false};
  std::atomic<bool> forge{false};
  std::atomic<Deadline> last_deadline{kNoDeadline};  // the handler's, for its own calls
  std::mutex gather_mu;
  std::condition_variable gathered;
  int gather = 0;        // GUARDED_BY(gather_mu)
  int arrived = 0;       // GUARDED_BY(gather_mu)
  int most_at_once = 0;  // GUARDED_BY(gather_mu): Directs in the handler at one time
  // While set, an exchange waits (up to 10 s) before it answers: a home busy with its calls.
  std::mutex hold_mu;
  std::condition_variable held;
  bool hold = false;  // GUARDED_BY(hold_mu)
  void Release() {
    {
      std::lock_guard lock(hold_mu);
      hold = false;
    }
    held.notify_all();
  }
};

zone::BucketReport Trigger(zone::MemberBucket& b) {
  return {kKey, b.Report({{0, 1, 5, 5, 1, 1, true}, {1, 0, 3, 3, 0, 1, true}}), 4, true};
}

// A loopback port nobody listens on.
int ClosedPort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t n = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

class ZoneServiceTest : public ::testing::Test {
 protected:
  void Start(tls::ServerTls t = {}) {
    Result<std::unique_ptr<GrpcServer>> s = GrpcServer::Start({.listen = "127.0.0.1:0", .tls = std::move(t)}, service_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  std::string address() const { return "localhost:" + std::to_string(server_->port()); }
  ZonePeers Peers(tls::ClientTls t = {}) {
    return ZonePeers({.num_partitions = kPartitions, .tls = std::move(t), .timeout = 5s});
  }
  std::string Metrics() { return prometheus::TextSerializer().Serialize(registry_.Collect()); }

  prometheus::Registry registry_;
  TestZone zone_;
  ZoneService service_{zone_, kPartitions, registry_};
  std::unique_ptr<GrpcServer> server_;
};

TEST_F(ZoneServiceTest, AMemberTurnsABucketHotAtItsHomeOverTheWire) {
  Start();
  ZonePeers peers = Peers();
  zone::MemberBucket a;
  ASSERT_TRUE(peers.Exchange(address(), {"b", {}}, kNoDeadline).ok());  // the home has heard from every ring member
  Result<zone::ExchangeAnswer> answer = peers.Exchange(address(), {"a", {Trigger(a)}}, kNoDeadline);
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  ASSERT_EQ(answer->roster, std::vector<zone::BucketKey>{kKey});
  ASSERT_EQ(answer->directives.size(), 1u);
  EXPECT_EQ(answer->directives[0].key, kKey);
  EXPECT_GT(answer->directives[0].directive.delta, 0);
  EXPECT_TRUE(a.Apply(answer->directives[0].directive));
  EXPECT_NE(Metrics().find(R"(limitsd_zone_requests_total{code="0",method="Exchange"} 2)"), std::string::npos)
      << Metrics();
}

TEST_F(ZoneServiceTest, ARecallGoesOutAndItsAcknowledgementComesBack) {
  Start();
  ZonePeers peers = Peers();
  ASSERT_TRUE(zone_.bucket.Apply({6, 1, 77}));
  Result<std::vector<zone::BucketReport>> reports = peers.Direct(address(), {"home-1", {{kKey, {-3, 2, 77}}}}, kNoDeadline);
  ASSERT_TRUE(reports.ok()) << reports.status().ToString();
  ASSERT_EQ(reports->size(), 1u);
  EXPECT_EQ((*reports)[0].key, kKey);
  EXPECT_EQ((*reports)[0].report.unused, 3u);
  EXPECT_EQ((*reports)[0].report.applied_home, 77u);
  EXPECT_EQ((*reports)[0].report.applied_directive, 2u);
}

// A home at the limit asks every member at once: the calls are in flight together, so the
// slowest bounds the wait (one after another, the handler would never see two at once, and
// each would wait out the gather's 10 s); each answer is its own call's, in the calls' order.
TEST_F(ZoneServiceTest, DirectsSentTogetherAreAllInFlightAtOnceAndAnsweredInTheirOrder) {
  Start();
  ZonePeers peers = Peers();
  ASSERT_TRUE(zone_.bucket.Apply({6, 1, 77}));
  {
    std::lock_guard lock(zone_.gather_mu);
    zone_.gather = 3;
  }
  const std::string nobody = "127.0.0.1:" + std::to_string(ClosedPort());
  const std::vector<zone::DirectCall> calls = {
      {address(), {"home-1", {}, {kKey}}},
      {nobody, {"home-1", {}, {kKey}}},
      {address(), {"home-1", {{kKey, {-2, 2, 77}}}}},
      {address(), {"home-1", {}, {kKey}}},
  };
  const auto started = std::chrono::steady_clock::now();
  std::vector<Result<std::vector<zone::BucketReport>>> answers = peers.DirectAll(calls, kNoDeadline);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
  {
    std::lock_guard lock(zone_.gather_mu);
    EXPECT_EQ(zone_.most_at_once, 3);
  }
  ASSERT_EQ(answers.size(), 4u);
  EXPECT_EQ(answers[1].status().code(), StatusCode::kUnavailable) << answers[1].status().ToString();
  EXPECT_NE(answers[1].status().message().find(nobody), std::string::npos) << answers[1].status().ToString();
  for (size_t i : {0u, 3u}) {
    ASSERT_TRUE(answers[i].ok()) << answers[i].status().ToString();
    EXPECT_TRUE(answers[i]->empty());  // TestZone reports only what it was directed
  }
  ASSERT_TRUE(answers[2].ok()) << answers[2].status().ToString();
  ASSERT_EQ(answers[2]->size(), 1u);
  EXPECT_EQ((*answers[2])[0].report.unused, 4u);
  EXPECT_EQ((*answers[2])[0].report.applied_directive, 2u);

  // A deadline already passed ends them all at once, each with its own error.
  const std::vector<Result<std::vector<zone::BucketReport>>> late =
      peers.DirectAll({calls[0], calls[1]}, std::chrono::steady_clock::now() - 1s);
  ASSERT_EQ(late.size(), 2u);
  for (const auto& r : late) EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_TRUE(peers.DirectAll({}, kNoDeadline).empty());
}

TEST_F(ZoneServiceTest, ARequestAPeerGotWrongIsRefusedNamingTheFieldBeforeTheHandlerSeesIt) {
  Start();
  auto channel = grpc::CreateChannel(address(), grpc::InsecureChannelCredentials());
  auto stub = wire::Zone::NewStub(channel);
  zone::MemberBucket a;
  wire::ExchangeRequest req;
  Encode(zone::ExchangeRequest{"a", {Trigger(a)}}, &req);
  req.mutable_reports(0)->mutable_report()->mutable_counts(1)->set_partition(kPartitions);
  wire::ExchangeAnswer resp;
  grpc::ClientContext ctx;
  const grpc::Status s = stub->Exchange(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("reports[0].report.counts[1].partition"), std::string::npos) << s.error_message();
  EXPECT_EQ(zone_.exchanges.load(), 0);
  EXPECT_NE(Metrics().find(R"(limitsd_zone_requests_total{code="3",method="Exchange"} 1)"), std::string::npos)
      << Metrics();

  // Through the client, the same refusal is the caller's kInvalidArgument.
  ZonePeers peers = Peers();
  Result<zone::ExchangeAnswer> r = peers.Exchange(address(), {"", {}}, kNoDeadline);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("member is required"), std::string::npos) << r.status().ToString();
}

TEST_F(ZoneServiceTest, TheHandlersErrorIsTheCallersAndAForgedAnswerIsRefused) {
  Start();
  ZonePeers peers = Peers();
  zone_.fail = true;
  Result<zone::ExchangeAnswer> r = peers.Exchange(address(), {"a", {}}, kNoDeadline);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_NE(r.status().message().find("the home is relearning"), std::string::npos);

  zone_.fail = false;
  zone_.forge = true;  // a grant of 2^41 places: no directive the member could apply safely
  r = peers.Exchange(address(), {"a", {}}, kNoDeadline);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("bad answer: directives[0].directive.delta"), std::string::npos)
      << r.status().ToString();
}

TEST_F(ZoneServiceTest, APeerThatIsNotThereIsUnavailableWithinTheTimeout) {
  ZonePeers peers({.num_partitions = kPartitions, .timeout = 500ms});
  const auto started = std::chrono::steady_clock::now();
  Result<zone::ExchangeAnswer> r = peers.Exchange("127.0.0.1:" + std::to_string(ClosedPort()), {"a", {}}, kNoDeadline);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

TEST_F(ZoneServiceTest, ACallEndsByItsCallersDeadlineAndTheHomesCallsEndBeforeIt) {
  Start();
  ZonePeers peers = Peers();  // a call timeout of 5 s
  {
    std::lock_guard lock(zone_.hold_mu);
    zone_.hold = true;
  }
  const auto started = std::chrono::steady_clock::now();
  Result<zone::ExchangeAnswer> r = peers.Exchange(address(), {"a", {}}, started + 300ms);
  const auto took = std::chrono::steady_clock::now() - started;
  zone_.Release();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << r.status().ToString();
  EXPECT_LT(took, 4s) << "the caller's deadline, not the 5 s timeout";

  // The handler's own calls (a home's recalls and report requests) get three quarters of
  // what the caller has left; with no deadline of the caller's, the call timeout is one.
  const auto sent = std::chrono::steady_clock::now();
  const Result<zone::ExchangeAnswer> answered = peers.Exchange(address(), {"a", {}}, sent + 4s);
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_GT(zone_.last_deadline.load(), sent);
  EXPECT_LE(zone_.last_deadline.load(), sent + 3100ms);  // gRPC rounds the timeout it sends up
  ASSERT_TRUE(peers.Exchange(address(), {"a", {}}, kNoDeadline).ok());
  EXPECT_LE(zone_.last_deadline.load(), std::chrono::steady_clock::now() + 4s);
}

class ZoneServiceTlsTest : public ZoneServiceTest {
 protected:
  testing::TempDir dir_;
  testing::TestCerts ca_{dir_.path()};
  testing::TestCerts other_{dir_.path(), "other-ca"};
  testing::CertPair server_cert_ = ca_.Server("node");
  testing::CertPair client_ = ca_.Client("peer");
  testing::CertPair stranger_ = other_.Client("stranger");

  bool Exchanges(tls::ClientTls t) { return Peers(std::move(t)).Exchange(address(), {"a", {}}, kNoDeadline).ok(); }
  // Two Directs at once (a home's report requests), both answered.
  bool DirectsAll(tls::ClientTls t) {
    const zone::DirectCall call{address(), {"home-1", {}, {kKey}}};
    const std::vector<zone::DirectCall> calls = {call, call};
    const auto answers = Peers(std::move(t)).DirectAll(calls, kNoDeadline);
    return answers.size() == 2 && answers[0].ok() && answers[1].ok();
  }
};

TEST_F(ZoneServiceTlsTest, OverMutualTlsOnlyAPeerWithTheZonesCertificatesIsServed) {
  Start({.cert_file = server_cert_.cert,
         .key_file = server_cert_.key,
         .client_ca_file = ca_.ca(),
         .client_auth_type = "RequireAndVerifyClientCert"});
  EXPECT_TRUE(Exchanges({.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = ca_.ca()}));
  EXPECT_TRUE(DirectsAll({.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = ca_.ca()}));
  EXPECT_FALSE(Exchanges({.enabled = true, .ca_path = ca_.ca()}));  // no client certificate
  EXPECT_FALSE(DirectsAll({.enabled = true, .ca_path = ca_.ca()}));
  EXPECT_FALSE(DirectsAll({}));  // plain text
  EXPECT_FALSE(
      Exchanges({.enabled = true, .cert_path = stranger_.cert, .key_path = stranger_.key, .ca_path = ca_.ca()}));
  EXPECT_FALSE(Exchanges({}));  // plain text
  // The client does not trust a server of another CA.
  EXPECT_FALSE(
      Exchanges({.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = other_.ca()}));
  // A server name the certificate does not carry is refused, and one it does is taken.
  EXPECT_FALSE(Exchanges({.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = ca_.ca(),
                          .server_name = "elsewhere.example"}));
  EXPECT_TRUE(Exchanges({.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = ca_.ca(),
                         .server_name = "localhost"}));
}

TEST_F(ZoneServiceTlsTest, ServerTlsWithoutClientCertificates) {
  Start({.cert_file = server_cert_.cert, .key_file = server_cert_.key});
  EXPECT_TRUE(Exchanges({.enabled = true, .ca_path = ca_.ca()}));
  EXPECT_TRUE(Exchanges({.enabled = true, .insecure_skip_verify = true}));
  EXPECT_FALSE(Exchanges({.enabled = true, .ca_path = other_.ca()}));
  EXPECT_FALSE(Exchanges({}));
}

}  // namespace
}  // namespace limits::rpc
