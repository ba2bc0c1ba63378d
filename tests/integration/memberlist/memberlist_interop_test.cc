// limitsd in a gossip cluster of two stand-ins for Loki pods: Go programs running HashiCorp
// memberlist (Debian's package) over dskit's TCP transport framing with dskit's KV layer,
// built offline by the memberlist_go_peer_build test. They hold a ring with their own fake
// instances and a cluster label; limitsd joins them with the embedded mock Kafka.
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "peer_process.h"
#include "testing/http_client.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using testing::HttpGet;
using testing::LimitsdMembers;
using testing::LimitsdRing;
using testing::PeerMembers;
using testing::PeerRing;
using testing::RingEntry;
using testing::WaitFor;

constexpr char kKey[] = "collectors/ingest-limits";
constexpr char kLabel[] = "loki-test";
constexpr char kNode[] = "limitsd-0";

int64_t NowS() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

struct Peer {
  std::unique_ptr<ChildProcess> process;
  int gossip_port = 0;
  int http_port = 0;
};

class MemberlistInteropTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::ifstream(MEMBERLIST_PEER).good()) << "the Go peer was not built: run the memberlist_go_peer_build test";
    StartPeer(&a_, "loki-a", "loki-a-1,loki-a-2", "");
    StartPeer(&b_, "loki-b", "loki-b-1", "127.0.0.1:" + std::to_string(a_.gossip_port));
    // Both peers see each other before limitsd comes.
    ASSERT_TRUE(WaitFor([&] { return PeerMembers(a_.http_port).count("loki-b") == 1; }, 20s));
  }

  void StartPeer(Peer* p, const std::string& name, const std::string& instances, const std::string& join) {
    std::vector<std::string> argv = {MEMBERLIST_PEER, "-name", name, "-instances", instances, "-label", kLabel,
                                     "-probe-interval", "1s", "-probe-timeout", "500ms", "-heartbeat", "1s"};
    argv.insert(argv.end(), peer_args_.begin(), peer_args_.end());
    if (!join.empty()) {
      argv.push_back("-join");
      argv.push_back(join);
    }
    p->process = std::make_unique<ChildProcess>(argv, dir_.Sub(name + ".log"));
    const std::string ready = p->process->ReadLine(20s);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(ready, m, std::regex("gossip_port=([0-9]+) http_port=([0-9]+)")))
        << "peer " << name << " did not start: " << ready << "\n" << p->process->Log();
    p->gossip_port = std::stoi(m[1]);
    p->http_port = std::stoi(m[2]);
  }

  std::unique_ptr<ChildProcess> StartLimitsd(const std::string& run) {
    std::vector<std::string> argv = {
        LIMITSD,
        "--set", "node.instance_id=" + std::string(kNode),
        "--set", "store.path=" + dir_.Sub(run + "-db"),
        "--set", "kafka.num_partitions=4",
        "--set", "server.http_listen=127.0.0.1:0",
        "--set", "server.grpc_listen=127.0.0.1:0",
        "--set", "ring.store=memberlist",
        "--set", "ring.instance_addr=127.0.0.1",
        "--set", "ring.heartbeat_period=1s",
        "--set", "ring.memberlist_join=127.0.0.1:" + std::to_string(a_.gossip_port),
        "--set", "ring.memberlist_bind_addr=127.0.0.1",
        "--set", "ring.memberlist_bind_port=0",
        "--set", "ring.memberlist_cluster_label=" + std::string(kLabel),
        "--set", "ring.memberlist_probe_interval=1s",
        "--set", "ring.memberlist_probe_timeout=500ms",
        "--set", "ring.memberlist_pullpush_interval=5s",
    };
    for (const std::string& set : limitsd_sets_) argv.insert(argv.end(), {"--set", set});
    return std::make_unique<ChildProcess>(argv, dir_.Sub(run + ".log"));
  }

  static int HttpPortOf(const ChildProcess& p) {
    std::smatch m;
    const std::string log = p.Log();
    static const std::regex re("\"msg\":\"started\",\"grpc_port\":[0-9]+,\"http_port\":([0-9]+)");
    return std::regex_search(log, m, re) ? std::stoi(m[1]) : 0;
  }

  // limitsd's entry is ACTIVE with a heartbeat at most 3 s old in this view.
  static bool FreshActive(const std::map<std::string, RingEntry>& ring) {
    auto it = ring.find(kNode);
    return it != ring.end() && it->second.state == "ACTIVE" && NowS() - it->second.timestamp <= 3;
  }

  static std::string Describe(const std::map<std::string, RingEntry>& ring) {
    std::string out;
    for (const auto& [id, e] : ring) out += "  " + id + " " + testing::ToString(e) + "\n";
    return out;
  }

  // Joined, and all three see the whole ring with limitsd ACTIVE and fresh.
  void ExpectConverged(ChildProcess& node, int* http) {
    ASSERT_TRUE(WaitFor([&] { return (*http = HttpPortOf(node)) > 0; }, 30s)) << node.Log();
    ASSERT_TRUE(WaitFor(
        [&] {
          return PeerMembers(a_.http_port)[kNode].state == "alive" && PeerMembers(b_.http_port)[kNode].state == "alive";
        },
        30s))
        << node.Log();
    ASSERT_TRUE(WaitFor(
        [&] {
          const auto ra = PeerRing(a_.http_port);
          const auto rb = PeerRing(b_.http_port);
          const auto rl = LimitsdRing(*http, kKey);
          for (const char* id : {"loki-a-1", "loki-a-2", "loki-b-1"}) {
            if (rl.count(id) == 0 || rl.at(id).state != "ACTIVE") return false;
          }
          return FreshActive(ra) && FreshActive(rb) && FreshActive(rl) && ra.size() == 4 && rb.size() == 4;
        },
        40s))
        << "peer a:\n" << Describe(PeerRing(a_.http_port)) << "peer b:\n" << Describe(PeerRing(b_.http_port))
        << "limitsd:\n" << Describe(LimitsdRing(*http, kKey)) << node.Log();
  }

  testing::TempDir dir_;
  std::vector<std::string> peer_args_;     // extra flags of both Go peers
  std::vector<std::string> limitsd_sets_;  // extra --set of limitsd
  Peer a_;
  Peer b_;
};

// Issue 25 item 4: the Go peers gossip over TLS as dskit's TCP transport does
// (-memberlist.tls-enabled with a certificate, key and CA); limitsd with the same settings
// joins, and limitsd without TLS, or with a certificate of another CA, never does.
class MemberlistTlsInteropTest : public MemberlistInteropTest {
 protected:
  void SetUp() override {
    // One certificate for both peers, as a Helm chart's single memberlist Secret would be.
    const testing::CertPair loki = ca_.Server("loki");
    peer_args_ = {"-tls-cert-path", loki.cert, "-tls-key-path", loki.key, "-tls-ca-path", ca_.ca()};
    MemberlistInteropTest::SetUp();
  }
  void UseTls(const testing::TestCerts& ca, const std::string& name) {
    const testing::CertPair p = ca.Server(name);
    limitsd_sets_ = {"ring.memberlist_tls_enabled=true", "ring.memberlist_tls_cert_path=" + p.cert,
                     "ring.memberlist_tls_key_path=" + p.key, "ring.memberlist_tls_ca_path=" + ca.ca()};
  }
  // limitsd tried to join and failed at least twice; the peers never listed it.
  void ExpectNeverJoins(ChildProcess& node) {
    int http = 0;
    ASSERT_TRUE(WaitFor([&] { return (http = HttpPortOf(node)) > 0; }, 30s)) << node.Log();
    EXPECT_TRUE(WaitFor(
        [&] {
          const std::string m = HttpGet(http, "/metrics").body;
          std::smatch match;
          static const std::regex re("limitsd_memberlist_join_attempts_total\\{result=\"error\"\\} ([0-9]+)");
          return std::regex_search(m, match, re) && std::stoi(match[1]) >= 2;
        },
        30s))
        << node.Log();
    EXPECT_EQ(PeerMembers(a_.http_port).count(kNode), 0u);
    EXPECT_EQ(PeerMembers(b_.http_port).count(kNode), 0u);
    EXPECT_EQ(PeerRing(a_.http_port).count(kNode), 0u);
  }
  testing::TestCerts ca_{dir_.path()};
};

TEST_F(MemberlistTlsInteropTest, JoinsTheGoPeersOverTls) {
  UseTls(ca_, "limitsd");
  auto node = StartLimitsd("tls");
  int http = 0;
  ExpectConverged(*node, &http);
}

TEST_F(MemberlistTlsInteropTest, WithoutTlsOrWithAnotherCaItNeverJoins) {
  {
    auto plain = StartLimitsd("plain");
    ExpectNeverJoins(*plain);
  }
  testing::TestCerts other(dir_.path(), "other-ca");
  UseTls(other, "stranger");
  auto stranger = StartLimitsd("stranger");
  ExpectNeverJoins(*stranger);
}

TEST_F(MemberlistInteropTest, JoinsHeartbeatsMergesPeerChangesAndLeavesOnSigterm) {
  auto node = StartLimitsd("term");
  int http = 0;
  ExpectConverged(*node, &http);
  if (HasFatalFailure()) return;
  std::printf("ring as loki-b sees it, limitsd joined:\n%s", Describe(PeerRing(b_.http_port)).c_str());
  std::printf("members as loki-a sees them:\n%s", HttpGet(a_.http_port, "/members").body.c_str());

  // Our heartbeats keep advancing on the peers.
  const int64_t seen = PeerRing(b_.http_port)[kNode].timestamp;
  EXPECT_TRUE(WaitFor([&] { return PeerRing(b_.http_port)[kNode].timestamp >= seen + 2; }, 10s));
  EXPECT_TRUE(WaitFor([&] { return PeerRing(a_.http_port)[kNode].timestamp >= seen + 2; }, 10s));

  // A peer's change to its own entry reaches limitsd as the peer wrote it.
  const std::string upd = HttpGet(a_.http_port, "/update?id=loki-a-1&addr=10.1.2.3:9095&zone=zone-x&tokens=7").body;
  const RingEntry written = PeerRing(a_.http_port)["loki-a-1"];
  ASSERT_EQ(written.addr, "10.1.2.3:9095") << upd;
  EXPECT_TRUE(WaitFor(
      [&] {
        const RingEntry got = LimitsdRing(http, kKey)["loki-a-1"];
        // The peer's heartbeat may have moved it on since: compare all but a newer timestamp.
        return got.addr == written.addr && got.zone == "zone-x" && got.tokens == 7 && got.state == "ACTIVE" &&
               got.registered_timestamp == written.registered_timestamp && got.timestamp >= written.timestamp;
      },
      10s))
      << Describe(LimitsdRing(http, kKey));
  // The other peer's entries and ours are intact on every member.
  EXPECT_TRUE(WaitFor([&] { return PeerRing(b_.http_port)["loki-a-1"].addr == "10.1.2.3:9095"; }, 10s));
  EXPECT_EQ(LimitsdRing(http, kKey)["loki-b-1"].tokens, 16);

  const std::string metrics = HttpGet(http, "/metrics").body;
  EXPECT_THAT(metrics, ::testing::HasSubstr("limitsd_memberlist_members{state=\"alive\"} 3"));

  // SIGTERM: the peers see our entry LEFT (or gone) and us left the cluster.
  node->Signal(SIGTERM);
  EXPECT_TRUE(WaitFor(
      [&] {
        for (int port : {a_.http_port, b_.http_port}) {
          const auto ring = PeerRing(port);
          auto it = ring.find(kNode);
          if (it != ring.end() && it->second.state != "LEFT") return false;
          if (PeerMembers(port)[kNode].state != "left") return false;
        }
        return true;
      },
      20s))
      << "peer b:\n" << Describe(PeerRing(b_.http_port)) << HttpGet(b_.http_port, "/members").body << node->Log();
  std::printf("ring as loki-b sees it after SIGTERM:\n%s", Describe(PeerRing(b_.http_port)).c_str());
  EXPECT_EQ(node->Wait(30s), 0) << node->Log();
}

TEST_F(MemberlistInteropTest, SigkillMakesThePeersMarkItDeadAndItsHeartbeatStale) {
  auto node = StartLimitsd("kill");
  int http = 0;
  ExpectConverged(*node, &http);
  if (HasFatalFailure()) return;
  node->Signal(SIGKILL);
  EXPECT_EQ(node->Wait(10s), 128 + SIGKILL);
  const auto killed_at = std::chrono::steady_clock::now();
  EXPECT_TRUE(WaitFor(
      [&] {
        return PeerMembers(a_.http_port)[kNode].state == "dead" && PeerMembers(b_.http_port)[kNode].state == "dead";
      },
      45s))
      << HttpGet(a_.http_port, "/members").body << HttpGet(b_.http_port, "/members").body;
  std::printf("members as loki-a sees them %.1f s after SIGKILL:\n%s",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count(),
              HttpGet(a_.http_port, "/members").body.c_str());
  // Nobody refreshes our entry any more: it stays ACTIVE (dskit's readers skip it by age).
  const RingEntry last = PeerRing(b_.http_port)[kNode];
  EXPECT_EQ(last.state, "ACTIVE");
  EXPECT_GE(NowS() - last.timestamp, 3);
  EXPECT_EQ(PeerRing(a_.http_port)[kNode].timestamp, last.timestamp);
}

}  // namespace
}  // namespace limits
