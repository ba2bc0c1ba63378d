// Membership: HashiCorp memberlist's SWIM protocol as dskit runs it (state.go, net.go) — the
// member table (alive / suspect / dead / left, incarnation numbers), failure detection (a probe
// every probe_interval: ping, indirect pings through other members, then suspicion with a
// timeout shortened by independent confirmations), refutation of suspicion about ourselves,
// gossip of membership changes and the delegate's user messages every gossip_interval, and the
// push-pull full-state exchange (join, anti-entropy) carrying the delegate's state.
// Threads: probe, gossip (also fires suspicion and nack timers), push-pull; packets and
// streams arrive on the transport's handler threads. Thread-safe; Start() once, Stop() once.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common/result.h"
#include "ring/memberlist/broadcast_queue.h"
#include "ring/memberlist/messages.h"
#include "ring/memberlist/metrics.h"
#include "ring/memberlist/tcp_transport.h"

namespace limits::ring::memberlist {

using namespace std::chrono_literals;

struct MembershipOptions {
  std::string node_name;
  std::string advertise_host;  // numeric IP
  uint16_t advertise_port = 0;
  std::string cluster_label;
  bool skip_label_check = false;
  // dskit's choices over memberlist's LAN defaults: TCP makes probes costlier, so fewer.
  std::chrono::milliseconds probe_interval = 5s;
  std::chrono::milliseconds probe_timeout = 2s;
  int indirect_checks = 3;
  int retransmit_mult = 4;
  int suspicion_mult = 4;
  int suspicion_max_timeout_mult = 6;
  std::chrono::milliseconds gossip_interval = 200ms;
  int gossip_nodes = 3;
  std::chrono::milliseconds gossip_to_dead_time = 30s;
  std::chrono::milliseconds push_pull_interval = 30s;
  std::chrono::milliseconds dead_node_reclaim_time = 0ms;  // 0: a dead name's address is never reclaimed
  std::chrono::milliseconds stream_timeout = 2s;
  int awareness_max_multiplier = 8;
  // How much gossip one packet may carry (dskit: 10 MiB, as packets are TCP connections).
  int64_t packet_budget = 10 << 20;
};

// The user layer memberlist carries (dskit's KV): memberlist's Delegate.
class MembershipDelegate {
 public:
  virtual ~MembershipDelegate() = default;
  virtual void NotifyMsg(std::string_view msg) = 0;
  virtual std::vector<std::string> GetBroadcasts(int overhead, int64_t limit, int num_nodes) = 0;
  virtual std::string LocalState(bool join) = 0;
  virtual void MergeRemoteState(std::string_view state, bool join) = 0;
};

struct MemberView {
  std::string name;
  std::string addr;  // host:port
  NodeStateType state = NodeStateType::kAlive;
  uint32_t incarnation = 0;
  std::string vsn;   // six protocol version bytes
  int64_t state_change_ms = 0;  // wall clock (unix ms) of the last state change
  bool self = false;
};

class Membership {
 public:
  Membership(MembershipOptions options, TcpTransport& transport, MembershipDelegate& delegate, Metrics& metrics);
  ~Membership();
  Membership(const Membership&) = delete;
  Membership& operator=(const Membership&) = delete;

  // Declares ourselves alive and starts probing, gossip and periodic push-pull.
  void Start();
  // Push-pull (join) with each address (numeric host:port); returns how many answered.
  int Join(const std::vector<std::string>& addrs, std::string* last_error);
  // Gossips our own death (graceful leave) and waits until it was sent out, up to `timeout`,
  // when any other member is alive. Afterwards we refuse to come back to life.
  Status Leave(std::chrono::milliseconds timeout);
  void Stop();

  // The transport's handlers.
  void HandlePacket(std::string payload, const std::string& from);
  void HandleStream(Connection& conn);

  std::vector<MemberView> Members() const;
  int NumAlive() const;  // ourselves included
  int HealthScore() const;
  const std::string& name() const { return options_.node_name; }

 private:
  struct Node {
    std::string name;
    std::string addr;  // raw IP, as received
    uint16_t port = 0;
    std::string meta;
    std::string vsn;
    uint32_t incarnation = 0;
    NodeStateType state = NodeStateType::kDead;
    std::chrono::steady_clock::time_point state_change;
    int64_t state_change_ms = 0;
    uint8_t pmax() const { return vsn.size() >= 2 ? static_cast<uint8_t>(vsn[1]) : 0; }
    std::string address() const;
  };
  struct Suspicion {
    std::chrono::steady_clock::time_point start;
    std::chrono::steady_clock::time_point deadline;
    std::chrono::steady_clock::time_point state_change;  // of the suspicion it belongs to
    std::chrono::milliseconds min{0};
    std::chrono::milliseconds max{0};
    int k = 0;
    int n = 0;
    std::set<std::string> confirmations;
  };
  // A pending ack: a probe of ours waiting, or an indirect ping we relay.
  struct AckWaiter {
    bool acked = false;
    int nacks = 0;
    bool relay = false;             // an indirect ping: forward the ack
    uint32_t relay_seq = 0;
    std::string relay_addr;         // who asked
    std::string relay_node;
    bool relay_nack = false;        // they want a nack on timeout
    std::chrono::steady_clock::time_point deadline;
  };

  // --- state changes (membership.cc); REQUIRES: mu_ held ---
  void AliveNodeLocked(const AliveMsg& a, bool bootstrap);
  void SuspectNodeLocked(const SuspectMsg& s);
  void DeadNodeLocked(const DeadMsg& d);
  void RefuteLocked(Node& self, uint32_t accused);
  void MergeStateLocked(const std::vector<PushNodeState>& remote);
  void QueueBroadcastLocked(const std::string& node, std::string msg);
  int EstNumNodesLocked() const { return static_cast<int>(nodes_.size()); }
  void SetState(Node& n, NodeStateType state);
  std::chrono::milliseconds ScaleTimeout(std::chrono::milliseconds t) const;
  void ApplyAwareness(int delta);

  // --- the network (membership_net.cc) ---
  void HandleCommand(std::string_view buf, const std::string& from, int depth);
  void HandlePing(std::string_view body, const std::string& from);
  void HandleIndirectPing(std::string_view body, const std::string& from);
  void HandleAck(uint32_t seq);
  void HandleNack(uint32_t seq);
  // Sends one message as a packet: label header, CRC when the recipient speaks protocol 5.
  void SendPacket(const std::string& addr, const std::string& node_name, std::string msg, const char* type);
  void SendRaw(const std::string& addr, uint8_t pmax, std::string msg);
  std::string EncodeLocalState(bool join);
  // Reads a stream message: optional compression, then [type][body...] from the source.
  Status PushPull(const std::string& addr, bool join);
  Status ReadRemoteState(MsgpackReader& r, ByteSource& src, bool* join, std::vector<PushNodeState>* nodes,
                         std::string* user);
  void MergeRemote(bool join, const std::vector<PushNodeState>& nodes, const std::string& user);

  // --- periodic work (membership_probe.cc) ---
  void ProbeLoop();
  void GossipLoop();
  void PushPullLoop();
  void ProbeNode(const Node& node);
  void Gossip();
  void FireTimers();
  void ResetProbeOrderLocked();
  // Waits until the ack for seq arrives or `until`; true when acked.
  bool WaitAck(uint32_t seq, std::chrono::steady_clock::time_point until);
  uint32_t NextSeq() { return seq_.fetch_add(1) + 1; }
  bool WaitStop(std::chrono::milliseconds d);

  const MembershipOptions options_;
  TcpTransport& transport_;
  MembershipDelegate& delegate_;
  Metrics& metrics_;
  std::string self_ip_;  // raw

  mutable std::mutex mu_;
  std::map<std::string, Node> nodes_;            // GUARDED_BY(mu_)
  std::vector<std::string> probe_order_;         // GUARDED_BY(mu_)
  size_t probe_index_ = 0;                       // GUARDED_BY(mu_)
  std::map<std::string, Suspicion> suspicions_;  // GUARDED_BY(mu_)
  uint32_t incarnation_ = 0;                     // GUARDED_BY(mu_)
  bool left_ = false;                            // GUARDED_BY(mu_)
  int awareness_ = 0;                            // GUARDED_BY(mu_)
  std::mt19937_64 rng_;                          // GUARDED_BY(mu_)
  uint64_t leave_broadcast_ = 0;                 // GUARDED_BY(mu_): id of our dead message

  BroadcastQueue broadcasts_;
  uint64_t broadcast_version_ = 0;  // GUARDED_BY(mu_)

  std::mutex ack_mu_;
  std::condition_variable ack_cv_;
  std::map<uint32_t, AckWaiter> acks_;  // GUARDED_BY(ack_mu_)
  std::atomic<uint32_t> seq_{0};

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;  // GUARDED_BY(stop_mu_)
  std::atomic<bool> started_{false};
  std::thread probe_thread_;
  std::thread gossip_thread_;
  std::thread push_pull_thread_;
};

}  // namespace limits::ring::memberlist
