// Admissions survive a SIGKILL (issue 24, items 5 and 8): a tenant's streams accepted over
// gRPC are still known after limitsd is killed 0–500 ms after the answer and restarted on the
// same data directory, so the tenant never ends with more streams than its limit.
// limitsd runs as a child process (LimitsdProcess) against librdkafka's mock cluster in a
// process of its own (mock_broker): the broker, its records and the consumer group outlive
// every kill, as a real broker would. LIMITSD_UNDER_TEST=PATH runs another limitsd binary
// (e.g. a branch's build) under the same test.
#include <signal.h>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <regex>
#include <set>
#include <thread>

#include "loadgen/universe.h"
#include "proto/limits.grpc.pb.h"
#include "testing/http_client.h"
#include "testing/limitsd_process.h"
#include "testing/mock_broker_process.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::WaitFor;

constexpr int32_t kPartitions = 64;
constexpr uint64_t kLimit = 100;
constexpr int kRounds = 5;
constexpr int kCallsPerAdmission = 4;  // the limit's streams over several calls; the kill follows the last
constexpr uint64_t kProbes = 10;       // new streams sent after each restart: all must be rejected

// Stream i of round r's tenant; every (r, i) distinct (Mix64 is a bijection).
uint64_t StreamHash(int round, uint64_t i) { return loadgen::Mix64((static_cast<uint64_t>(round) << 32) | i); }

struct Answer {
  grpc::Status status;
  std::map<uint64_t, uint32_t> rejected;  // hash -> reason
};

class AdmissionDurabilityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto broker = testing::MockBrokerProcess::Start(MOCK_BROKER, testing::kTopic, kPartitions);
    ASSERT_TRUE(broker.ok()) << broker.status().ToString();
    broker_ = std::move(*broker);
    config_ = testing::TestKafka(broker_->bootstrap(), testing::kTopic, kPartitions)
                  .NodeConfig(dir_.Sub("node"), "zone-a", "durable-0");
    // The mock's join rounds last session.timeout - 1 s (MOCK-KAFKA.md); 3 s is its lowest
    // working value, and the restarted member replaces the killed one after it.
    config_.kafka.properties["session.timeout.ms"] = "3000";
  }

  static std::string Binary() {
    const char* other = std::getenv("LIMITSD_UNDER_TEST");
    return other && *other ? other : LIMITSD;
  }

  // Starts limitsd on the same data directory, broker and group; waits until it serves.
  void StartNode(int run) {
    node_ = std::make_unique<testing::LimitsdProcess>(
        Binary(), config_, dir_.Sub("limitsd." + std::to_string(run) + ".log"),
        std::vector<std::string>{"limits.defaults.max_global_streams_per_user=" + std::to_string(kLimit)});
    ASSERT_TRUE(WaitFor([&] { return node_->ReadyWith(kPartitions) || node_->Exited(); }, 60s)) << node_->Log();
    ASSERT_FALSE(node_->Exited()) << node_->Log();
    stub_ = proto::IngestLimits::NewStub(grpc::CreateChannel("127.0.0.1:" + std::to_string(node_->GrpcPort()),
                                                             grpc::InsecureChannelCredentials()));
  }

  Answer Exceeds(const std::string& tenant, const std::vector<uint64_t>& hashes) {
    proto::ExceedsLimitsRequest req;
    req.set_tenant(tenant);
    for (uint64_t h : hashes) {
      proto::StreamMetadata* s = req.add_streams();
      s->set_streamhash(h);
      s->set_totalsize(100);
    }
    proto::ExceedsLimitsResponse resp;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 10s);
    Answer a;
    a.status = stub_->ExceedsLimits(&ctx, req, &resp);
    for (const auto& r : resp.results()) a.rejected[r.streamhash()] = r.reason();
    return a;
  }

  // The tenant's active streams as the node counts them (GET /ingest-limits/usage/{tenant}).
  int64_t StreamsTotal(const std::string& tenant) {
    const testing::HttpResult r = testing::HttpGet(node_->HttpPort(), "/ingest-limits/usage/" + tenant);
    std::smatch m;
    static const std::regex re("\"streams_total\":\\s*([0-9]+)");
    return r.status == 200 && std::regex_search(r.body, m, re) ? std::stoll(m[1]) : -1;
  }

  testing::TempDir dir_;
  std::unique_ptr<testing::MockBrokerProcess> broker_;
  config::Config config_;
  std::unique_ptr<testing::LimitsdProcess> node_;
  std::unique_ptr<proto::IngestLimits::Stub> stub_;
};

// Each round admits a fresh tenant's limit of streams, kills the node 0–500 ms after the last
// OK answer, restarts it, and checks every tenant admitted so far, in an order where a lost
// stream cannot hide by being admitted again: the node's count first (it must hold all L),
// then new streams (all rejected: no room), then the admitted ones (all accepted: known).
TEST_F(AdmissionDurabilityTest, AdmittedStreamsSurviveASigkillSoonAfterTheAnswer) {
  std::mt19937_64 rng(20261224);
  std::map<std::string, std::vector<uint64_t>> admitted;   // tenant -> streams answered accepted at admission
  std::map<std::string, std::set<uint64_t>> ever_accepted;  // tenant -> every stream ever answered accepted
  uint64_t probe = 1'000'000;                                // stream indexes of the probes: never admitted
  int run = 0;
  ASSERT_NO_FATAL_FAILURE(StartNode(run++));
  for (int round = 0; round < kRounds; ++round) {
    const std::string tenant = "tenant-" + std::to_string(round);
    std::vector<uint64_t>& streams = admitted[tenant];
    for (uint64_t i = 0; i < kLimit; ++i) streams.push_back(StreamHash(round, i));
    constexpr uint64_t kPerCall = kLimit / kCallsPerAdmission;
    for (int c = 0; c < kCallsPerAdmission; ++c) {
      const std::vector<uint64_t> part(streams.begin() + c * kPerCall, streams.begin() + (c + 1) * kPerCall);
      const Answer a = Exceeds(tenant, part);
      ASSERT_TRUE(a.status.ok()) << a.status.error_message();
      ASSERT_TRUE(a.rejected.empty()) << "round " << round << ": a new tenant's stream was rejected";
    }
    ever_accepted[tenant].insert(streams.begin(), streams.end());
    // The fault injected: a random moment after the answer (not a synchronisation).
    const auto delay = std::chrono::milliseconds(rng() % 501);
    std::this_thread::sleep_for(delay);
    node_->Kill(SIGKILL);
    ASSERT_NO_FATAL_FAILURE(StartNode(run++));

    for (const auto& [t, known] : admitted) {
      const int64_t counted = StreamsTotal(t);
      std::vector<uint64_t> probes;
      for (uint64_t i = 0; i < kProbes; ++i) probes.push_back(StreamHash(round, probe++));
      const Answer beyond = Exceeds(t, probes);
      ASSERT_TRUE(beyond.status.ok()) << beyond.status.error_message();
      uint64_t beyond_accepted = 0, other_reasons = 0;
      for (uint64_t h : probes) {
        const auto it = beyond.rejected.find(h);
        if (it == beyond.rejected.end()) {
          ++beyond_accepted;
          ever_accepted[t].insert(h);
        } else if (it->second != 2) {
          ++other_reasons;
        }
      }
      const Answer again = Exceeds(t, known);
      ASSERT_TRUE(again.status.ok()) << again.status.error_message();
      for (uint64_t h : known) {
        if (!again.rejected.count(h)) ever_accepted[t].insert(h);
      }
      if (counted != int64_t{kLimit} || beyond_accepted != 0 || other_reasons != 0 || !again.rejected.empty() ||
          ever_accepted[t].size() > kLimit) {
        ADD_FAILURE() << "round " << round << " (killed " << delay.count() << " ms after the answer), " << t
                      << ": the node counts " << counted << " of the " << kLimit << " admitted streams; "
                      << beyond_accepted << " of " << kProbes << " new streams beyond the limit accepted ("
                      << other_reasons << " rejected for another reason than 2); " << again.rejected.size()
                      << " of the " << kLimit << " admitted streams rejected when sent again; "
                      << ever_accepted[t].size() << " distinct streams answered accepted in all (limit " << kLimit
                      << ")";
      }
    }
    std::printf("round %d: killed %lld ms after the answer; %zu tenants checked\n", round,
                static_cast<long long>(delay.count()), admitted.size());
  }
  node_->Kill(SIGTERM);
}

}  // namespace
}  // namespace limits
