// The memberlist backend on real loopback sockets, in process: bad input from a raw socket
// (garbage, short, oversized, wrong label, cut digests) is refused and counted and the node
// keeps answering; it refutes a suspicion about itself; two backends form a cluster, share a
// ring through Cas and see each other leave.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include "ring/memberlist/memberlist_kv.h"
#include "ring/memberlist/messages.h"
#include "ring/memberlist/net_address.h"
#include "ring/memberlist/tcp_framing.h"
#include "testing/prometheus_parser.h"
#include "testing/wait_for.h"

namespace limits::ring::memberlist {
namespace {

using namespace std::chrono_literals;
using limits::testing::WaitFor;

MemberlistOptions Options(const std::string& name) {
  MemberlistOptions o;
  o.node_name = name;
  o.bind_addr = "127.0.0.1";
  o.bind_port = 0;
  o.probe_interval = 500ms;
  o.probe_timeout = 200ms;
  o.push_pull_interval = 2s;
  o.max_message_bytes = 1 << 20;
  o.broadcast_timeout_on_shutdown = 2s;
  o.leave_timeout = 2s;
  return o;
}

double Metric(prometheus::Registry& r, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  return limits::testing::ParsePrometheusText(prometheus::TextSerializer().Serialize(r.Collect())).Value(name, labels);
}

// Writes `bytes` on a fresh connection to 127.0.0.1:port and closes it.
void SendRaw(int port, const std::string& bytes, bool half_close_only = false) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n <= 0) break;  // the node may close an oversized frame early
    off += static_cast<size_t>(n);
  }
  if (half_close_only) shutdown(fd, SHUT_WR);
  close(fd);
}

// A raw listener standing in for a peer: collects the packets sent to it.
class RawPeer {
 public:
  RawPeer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &sin.sin_addr);
    bind(fd_, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
    listen(fd_, 16);
    socklen_t len = sizeof sin;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&sin), &len);
    port_ = ntohs(sin.sin_port);
    thread_ = std::thread([this] { Loop(); });
  }
  ~RawPeer() {
    stop_ = true;
    thread_.join();
    close(fd_);
  }
  int port() const { return port_; }
  // Whether a message of this type (ack, nack or ping) with this sequence number arrived.
  bool Got(MessageType type, uint32_t seq) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& p : packets_) {
      if (p.empty() || static_cast<uint8_t>(p[0]) != static_cast<uint8_t>(type)) continue;
      const std::string_view body = std::string_view(p).substr(1);
      uint32_t got = 0;
      if (type == MessageType::kAck) {
        Result<AckMsg> m = DecodeBody<AckMsg>(body);
        got = m.ok() ? m->seq_no : 0;
      } else if (type == MessageType::kNack) {
        Result<NackMsg> m = DecodeBody<NackMsg>(body);
        got = m.ok() ? m->seq_no : 0;
      } else {
        Result<PingMsg> m = DecodeBody<PingMsg>(body);
        got = m.ok() ? m->seq_no : 0;
      }
      if (got == seq) return true;
    }
    return false;
  }
  bool GotAck(uint32_t seq) { return Got(MessageType::kAck, seq); }
  // The sequence number of the first ping for `node`, 0 when none.
  uint32_t PingFor(const std::string& node) {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& p : packets_) {
      if (p.empty() || static_cast<uint8_t>(p[0]) != static_cast<uint8_t>(MessageType::kPing)) continue;
      Result<PingMsg> m = DecodeBody<PingMsg>(std::string_view(p).substr(1));
      if (m.ok() && m->node == node) return m->seq_no;
    }
    return 0;
  }

 private:
  void Loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      const int c = accept(fd_, nullptr, nullptr);
      std::string all;
      char buf[4096];
      ssize_t n;
      while ((n = read(c, buf, sizeof buf)) > 0) all.append(buf, static_cast<size_t>(n));
      close(c);
      if (all.empty() || all[0] != kFramePacket) continue;
      Result<PacketFrame> f = DecodePacketFrame(std::string_view(all).substr(1));
      if (!f.ok()) continue;
      std::string_view payload = f->payload;
      // Strip a label and a CRC header, if any.
      Result<std::pair<std::string, std::string_view>> l = StripPacketLabel(payload);
      if (!l.ok()) continue;
      payload = l->second;
      if (!payload.empty() && static_cast<uint8_t>(payload[0]) == static_cast<uint8_t>(MessageType::kHasCrc)) {
        payload.remove_prefix(5);
      }
      std::lock_guard<std::mutex> lock(mu_);
      packets_.emplace_back(payload);
    }
  }

  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> packets_;
};

std::string PingPacket(uint32_t seq, const std::string& node, int reply_port, const std::string& label = "") {
  PingMsg p;
  p.seq_no = seq;
  p.node = node;
  p.source_addr = *IpFromString("127.0.0.1");
  p.source_port = static_cast<uint16_t>(reply_port);
  p.source_node = "raw";
  return EncodePacketFrame("127.0.0.1:" + std::to_string(reply_port),
                           LabelHeader(label) + EncodeMessage(MessageType::kPing, p));
}

TEST(MemberlistWireTest, GarbageShortAndOversizedFramesAreRefusedCountedAndHarmless) {
  prometheus::Registry registry;
  auto kv = MemberlistKv::Create(Options("node-a"), registry);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  const int port = (*kv)->port();
  auto rejected = [&](const char* reason) {
    return Metric(registry, "limitsd_memberlist_rejected_total", {{"reason", reason}});
  };

  SendRaw(port, "\x07garbage");                                   // unknown connection type
  SendRaw(port, std::string("\x01\x05" "ab", 4));                  // address cut short
  std::string cut = EncodePacketFrame("127.0.0.1:1", "\x04\x80");  // digest of other bytes
  cut[cut.size() - 1] ^= 0x5a;
  SendRaw(port, cut);
  SendRaw(port, EncodePacketFrame("127.0.0.1:1", "\x04\xc1\xc1"));          // alive, invalid msgpack
  SendRaw(port, EncodePacketFrame("127.0.0.1:1", "\xf4\x09" "ab"));         // label header cut short
  SendRaw(port, EncodePacketFrame("127.0.0.1:1", "\x63zzz"));               // no such message type
  SendRaw(port, EncodePacketFrame("127.0.0.1:1", std::string(2 << 20, 'x')));  // over 1 MiB
  // Streams: a push-pull whose header is garbage, one announcing a huge state, one cut.
  SendRaw(port, std::string("\x02\x06\xc1", 3));
  {
    MsgpackWriter w;
    Write(w, PushPullHeader{0, int64_t{1} << 40, false});
    SendRaw(port, std::string("\x02\x06", 2) + w.bytes());
  }
  SendRaw(port, std::string("\x02\x06\x83", 3), true);

  EXPECT_TRUE(WaitFor([&] { return rejected("bad_frame_type") >= 1; }, 5s));
  EXPECT_TRUE(WaitFor([&] { return rejected("short") >= 1; }, 5s));
  EXPECT_TRUE(WaitFor([&] { return rejected("digest") >= 1; }, 5s));
  EXPECT_TRUE(WaitFor([&] { return rejected("decode") >= 4; }, 5s)) << rejected("decode");
  EXPECT_TRUE(WaitFor([&] { return rejected("unsupported") >= 1; }, 5s));
  EXPECT_TRUE(WaitFor([&] { return rejected("oversized") >= 1; }, 5s));
  EXPECT_TRUE(WaitFor([&] { return Metric(registry, "limitsd_memberlist_members", {{"state", "alive"}}) == 1; }, 5s));

  // Still answering: a well-formed ping gets its ack.
  RawPeer peer;
  SendRaw(port, PingPacket(42, "node-a", peer.port()));
  EXPECT_TRUE(WaitFor([&] { return peer.GotAck(42); }, 5s));
  // A ping for another node is ignored.
  SendRaw(port, PingPacket(43, "someone-else", peer.port()));
  SendRaw(port, PingPacket(44, "node-a", peer.port()));
  ASSERT_TRUE(WaitFor([&] { return peer.GotAck(44); }, 5s));
  EXPECT_FALSE(peer.GotAck(43));
}

// Random bytes behind every message type, as packets and as streams (fixed seed): all refused
// or harmless, and the node still answers.
TEST(MemberlistWireTest, RandomInputBehindEveryMessageTypeIsSurvived) {
  prometheus::Registry registry;
  auto kv = MemberlistKv::Create(Options("node-a"), registry);
  ASSERT_TRUE(kv.ok());
  const int port = (*kv)->port();
  std::mt19937 rng(20261203);
  auto random_bytes = [&](size_t n) {
    std::string s(n, '\0');
    for (char& c : s) c = static_cast<char>(rng() & 0xff);
    return s;
  };
  for (int i = 0; i < 300; ++i) {
    std::string body = random_bytes(1 + rng() % 64);
    const uint8_t type = static_cast<uint8_t>(i % 14);
    // Half of them start like a msgpack map, to get past the first byte.
    if (i % 2 == 0) body[0] = static_cast<char>(0x80 | (rng() % 8));
    const std::string msg = std::string(1, static_cast<char>(type)) + body;
    if (i % 3 == 0) {
      SendRaw(port, std::string(1, static_cast<char>(kFrameStream)) + msg, true);  // a stream
    } else {
      SendRaw(port, EncodePacketFrame("127.0.0.1:1", msg));
    }
  }
  RawPeer peer;
  SendRaw(port, PingPacket(9, "node-a", peer.port()));
  EXPECT_TRUE(WaitFor([&] { return peer.GotAck(9); }, 10s));
  EXPECT_EQ((*kv)->Members().size(), 1u);
}

TEST(MemberlistWireTest, RelaysIndirectPingsAndNacksWhenTheTargetIsSilent) {
  prometheus::Registry registry;
  auto kv = MemberlistKv::Create(Options("node-a"), registry);
  ASSERT_TRUE(kv.ok());
  RawPeer requester;
  RawPeer target;  // takes the ping, never answers
  IndirectPingMsg ind;
  ind.seq_no = 77;
  ind.target = *IpFromString("127.0.0.1");
  ind.port = static_cast<uint16_t>(target.port());
  ind.node = "target";
  ind.nack = true;
  ind.source_addr = *IpFromString("127.0.0.1");
  ind.source_port = static_cast<uint16_t>(requester.port());
  ind.source_node = "requester";
  SendRaw((*kv)->port(), EncodePacketFrame("127.0.0.1:1", EncodeMessage(MessageType::kIndirectPing, ind)));
  ASSERT_TRUE(WaitFor([&] { return target.PingFor("target") != 0; }, 5s));
  // No ack from the target within the probe timeout: the requester gets a nack.
  EXPECT_TRUE(WaitFor([&] { return requester.Got(MessageType::kNack, 77); }, 5s));
  EXPECT_FALSE(requester.GotAck(77));

  // When the target answers, its ack is relayed with the requester's sequence number.
  ind.seq_no = 78;
  ind.node = "target-2";
  SendRaw((*kv)->port(), EncodePacketFrame("127.0.0.1:1", EncodeMessage(MessageType::kIndirectPing, ind)));
  ASSERT_TRUE(WaitFor([&] { return target.PingFor("target-2") != 0; }, 5s));
  AckMsg ack;
  ack.seq_no = target.PingFor("target-2");
  SendRaw((*kv)->port(), EncodePacketFrame("127.0.0.1:1", EncodeMessage(MessageType::kAck, ack)));
  EXPECT_TRUE(WaitFor([&] { return requester.GotAck(78); }, 5s));
}

TEST(MemberlistWireTest, OnlyTheClusterLabelIsAccepted) {
  prometheus::Registry registry;
  MemberlistOptions o = Options("node-a");
  o.cluster_label = "loki-prod";
  auto kv = MemberlistKv::Create(o, registry);
  ASSERT_TRUE(kv.ok()) << kv.status().ToString();
  RawPeer peer;
  SendRaw((*kv)->port(), PingPacket(1, "node-a", peer.port(), "loki-dev"));
  SendRaw((*kv)->port(), PingPacket(2, "node-a", peer.port()));  // no label at all
  SendRaw((*kv)->port(), PingPacket(3, "node-a", peer.port(), "loki-prod"));
  ASSERT_TRUE(WaitFor([&] { return peer.GotAck(3); }, 5s));
  EXPECT_TRUE(WaitFor([&] { return Metric(registry, "limitsd_memberlist_rejected_total", {{"reason", "label"}}) == 2; }, 5s));
  EXPECT_FALSE(peer.GotAck(1));
  EXPECT_FALSE(peer.GotAck(2));
}

TEST(MemberlistWireTest, RefutesASuspicionAboutItself) {
  prometheus::Registry registry;
  auto kv = MemberlistKv::Create(Options("node-a"), registry);
  ASSERT_TRUE(kv.ok());
  SuspectMsg s{1, "node-a", "someone"};
  SendRaw((*kv)->port(), EncodePacketFrame("127.0.0.1:1", EncodeMessage(MessageType::kSuspect, s)));
  EXPECT_TRUE(WaitFor([&] { return Metric(registry, "limitsd_memberlist_refutes_total") == 1; }, 5s));
  const auto members = (*kv)->Members();
  ASSERT_EQ(members.size(), 1u);
  EXPECT_EQ(members[0].state, NodeStateType::kAlive);
  EXPECT_GE(members[0].incarnation, 2u);
  // A dead message about us is refuted too, with a higher incarnation still.
  DeadMsg d{members[0].incarnation, "node-a", "someone"};
  SendRaw((*kv)->port(), EncodePacketFrame("127.0.0.1:1", EncodeMessage(MessageType::kDead, d)));
  EXPECT_TRUE(WaitFor([&] { return Metric(registry, "limitsd_memberlist_refutes_total") == 2; }, 5s));
  EXPECT_GT((*kv)->Members()[0].incarnation, d.incarnation);
  EXPECT_EQ((*kv)->Members()[0].state, NodeStateType::kAlive);
}

::ring::InstanceDesc Instance(const std::string& addr, int64_t ts, ::ring::InstanceState state) {
  ::ring::InstanceDesc i;
  i.set_addr(addr);
  i.set_timestamp(ts);
  i.set_state(state);
  return i;
}

TEST(MemberlistWireTest, TwoNodesShareTheRingAndSeeEachOtherLeave) {
  prometheus::Registry ra;
  prometheus::Registry rb;
  auto a = MemberlistKv::Create(Options("node-a"), ra);
  ASSERT_TRUE(a.ok());
  MemberlistOptions ob = Options("node-b");
  ob.join = {"localhost:" + std::to_string((*a)->port())};  // a name: resolved on each attempt
  auto b = MemberlistKv::Create(ob, rb);
  ASSERT_TRUE(b.ok());
  const int64_t now = Clock::System().NowMillis() / 1000;
  ASSERT_TRUE((*a)->Cas("ring", [&](::ring::Desc& d) -> Result<KvClient::CasAction> {
                    (*d.mutable_ingesters())["a"] = Instance("a:1", now, ::ring::ACTIVE);
                    return KvClient::CasAction::kWrite;
                  }).ok());
  ASSERT_TRUE(WaitFor([&] { return (*b)->joined() && (*a)->Members().size() == 2; }, 10s));
  ASSERT_TRUE((*b)->Cas("ring", [&](::ring::Desc& d) -> Result<KvClient::CasAction> {
                    (*d.mutable_ingesters())["b"] = Instance("b:1", now, ::ring::ACTIVE);
                    return KvClient::CasAction::kWrite;
                  }).ok());
  auto has_both = [](MemberlistKv& kv) {
    Result<std::optional<::ring::Desc>> d = kv.Get("ring");
    return d.ok() && d->has_value() && (*d)->ingesters().count("a") && (*d)->ingesters().count("b");
  };
  EXPECT_TRUE(WaitFor([&] { return has_both(**a) && has_both(**b); }, 10s));

  // b removes its entry (a local CAS: LEFT for everyone) and leaves the cluster.
  ASSERT_TRUE((*b)->Cas("ring", [&](::ring::Desc& d) -> Result<KvClient::CasAction> {
                    d.mutable_ingesters()->erase("b");
                    return KvClient::CasAction::kWrite;
                  }).ok());
  b->reset();
  EXPECT_TRUE(WaitFor(
      [&] {
        Result<std::optional<::ring::Desc>> d = (*a)->Get("ring");  // tombstones hidden, as in dskit
        return d.ok() && d->has_value() && (*d)->ingesters().count("b") == 0 && (*d)->ingesters().count("a") == 1;
      },
      10s));
  bool left = false;
  for (const auto& m : (*a)->Members()) left = left || (m.name == "node-b" && m.state == NodeStateType::kLeft);
  EXPECT_TRUE(left);
  EXPECT_THAT((*a)->StatusJson(), ::testing::HasSubstr("\"state\": \"LEFT\""));
}

TEST(MemberlistWireTest, ARandomizedNodeNameKeepsItsPrefix) {
  prometheus::Registry registry;
  MemberlistOptions o = Options("node-a");
  o.randomize_node_name = true;
  auto kv = MemberlistKv::Create(o, registry);
  ASSERT_TRUE(kv.ok());
  const std::string name = (*kv)->Members().at(0).name;
  EXPECT_EQ(name.rfind("node-a-", 0), 0u) << name;
  EXPECT_EQ(name.size(), std::string("node-a-").size() + 8);
}

TEST(MemberlistWireTest, ABusyPortIsAClearError) {
  prometheus::Registry r1;
  prometheus::Registry r2;
  auto a = MemberlistKv::Create(Options("node-a"), r1);
  ASSERT_TRUE(a.ok());
  MemberlistOptions o = Options("node-b");
  o.bind_port = (*a)->port();
  auto b = MemberlistKv::Create(o, r2);
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.status().message(), ::testing::HasSubstr("listen on 127.0.0.1:" + std::to_string((*a)->port())));
}

}  // namespace
}  // namespace limits::ring::memberlist
