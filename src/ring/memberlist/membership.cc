// Membership: construction, lifecycle, and the state machine of memberlist's state.go
// (aliveNode, suspectNode, deadNode, refute, mergeState).
#include "ring/memberlist/membership.h"

#include <algorithm>
#include <cmath>

#include "common/clock.h"
#include "common/log.h"
#include "ring/memberlist/net_address.h"

namespace limits::ring::memberlist {

namespace {

constexpr char kComponent[] = "memberlist";

// memberlist's suspicionTimeout: mult * max(1, log10(n)) * probe interval.
std::chrono::milliseconds SuspicionTimeout(int mult, int n, std::chrono::milliseconds interval) {
  const double scale = std::max(1.0, std::log10(std::max(1.0, static_cast<double>(n))));
  return std::chrono::milliseconds(static_cast<int64_t>(mult * scale * static_cast<double>(interval.count())));
}

}  // namespace

std::string Membership::Node::address() const { return JoinHostPort(IpToString(addr), port); }

Membership::Membership(MembershipOptions options, TcpTransport& transport, MembershipDelegate& delegate,
                       Metrics& metrics)
    : options_(std::move(options)),
      transport_(transport),
      delegate_(delegate),
      metrics_(metrics),
      rng_(std::random_device{}()),
      broadcasts_(options_.retransmit_mult) {
  Result<std::string> ip = IpFromString(options_.advertise_host);
  LIMITS_CHECK(ip.ok(), "advertise address is not an IP: " + options_.advertise_host);
  self_ip_ = *ip;
}

Membership::~Membership() { Stop(); }

void Membership::Start() {
  if (started_.exchange(true)) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    AliveMsg a;
    a.incarnation = ++incarnation_;
    a.node = options_.node_name;
    a.addr = self_ip_;
    a.port = options_.advertise_port;
    a.vsn = OurVsn();
    AliveNodeLocked(a, true);
  }
  probe_thread_ = std::thread([this] { ProbeLoop(); });
  gossip_thread_ = std::thread([this] { GossipLoop(); });
  push_pull_thread_ = std::thread([this] { PushPullLoop(); });
}

void Membership::Stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (stop_) return;
    stop_ = true;
  }
  stop_cv_.notify_all();
  {
    // Taken so that a probe between its check and its wait cannot miss the wake-up.
    std::lock_guard<std::mutex> lock(ack_mu_);
  }
  ack_cv_.notify_all();
  if (probe_thread_.joinable()) probe_thread_.join();
  if (gossip_thread_.joinable()) gossip_thread_.join();
  if (push_pull_thread_.joinable()) push_pull_thread_.join();
}

bool Membership::WaitStop(std::chrono::milliseconds d) {
  std::unique_lock<std::mutex> lock(stop_mu_);
  return stop_cv_.wait_for(lock, d, [&] { return stop_; });
}

int Membership::Join(const std::vector<std::string>& addrs, std::string* last_error) {
  int ok = 0;
  for (const auto& addr : addrs) {
    Status s = PushPull(addr, true);
    metrics_.Join(s.ok());
    if (s.ok()) {
      ++ok;
    } else {
      if (last_error) *last_error = addr + ": " + s.ToString();
      log::Debug(kComponent, "join attempt failed").Kv("addr", addr).Kv("error", s.ToString());
    }
  }
  return ok;
}

Status Membership::Leave(std::chrono::milliseconds timeout) {
  uint64_t id = 0;
  bool others = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (left_) return Status::OK();
    left_ = true;
    auto it = nodes_.find(options_.node_name);
    if (it == nodes_.end()) return Status::OK();
    DeadMsg d;
    d.incarnation = it->second.incarnation;
    d.node = options_.node_name;
    d.from = options_.node_name;
    DeadNodeLocked(d);
    id = leave_broadcast_;
    for (const auto& [name, n] : nodes_) {
      if (name != options_.node_name && n.state != NodeStateType::kDead && n.state != NodeStateType::kLeft) {
        others = true;
      }
    }
  }
  if (!others || id == 0) return Status::OK();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (broadcasts_.Pending(id)) {
    if (std::chrono::steady_clock::now() >= deadline) return Status::Unavailable("timed out gossiping our leave");
    if (WaitStop(20ms)) return Status::Shutdown("stopped while leaving");
  }
  return Status::OK();
}

std::vector<MemberView> Membership::Members() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<MemberView> out;
  for (const auto& [name, n] : nodes_) {
    MemberView v;
    v.name = name;
    v.addr = n.address();
    v.state = n.state;
    v.incarnation = n.incarnation;
    v.vsn = n.vsn;
    v.state_change_ms = n.state_change_ms;
    v.self = name == options_.node_name;
    out.push_back(std::move(v));
  }
  return out;
}

int Membership::NumAlive() const {
  std::lock_guard<std::mutex> lock(mu_);
  int n = 0;
  for (const auto& [name, node] : nodes_) {
    if (node.state == NodeStateType::kAlive || node.state == NodeStateType::kSuspect) ++n;
  }
  return n;
}

int Membership::HealthScore() const {
  std::lock_guard<std::mutex> lock(mu_);
  return awareness_;
}

std::chrono::milliseconds Membership::ScaleTimeout(std::chrono::milliseconds t) const {
  std::lock_guard<std::mutex> lock(mu_);
  return t * (awareness_ + 1);
}

void Membership::ApplyAwareness(int delta) {
  std::lock_guard<std::mutex> lock(mu_);
  awareness_ = std::clamp(awareness_ + delta, 0, options_.awareness_max_multiplier - 1);
  metrics_.health_score.Set(awareness_);
}

void Membership::SetState(Node& n, NodeStateType state) {
  n.state = state;
  n.state_change = std::chrono::steady_clock::now();
  n.state_change_ms = Clock::System().NowMillis();
}

void Membership::QueueBroadcastLocked(const std::string& node, std::string msg) {
  const uint64_t id = broadcasts_.Queue("node", {node}, ++broadcast_version_, std::move(msg));
  if (node == options_.node_name && left_) leave_broadcast_ = id;
}

void Membership::RefuteLocked(Node& self, uint32_t accused) {
  uint32_t inc = ++incarnation_;
  if (accused >= inc) {
    incarnation_ = accused + 1;
    inc = incarnation_;
  }
  self.incarnation = inc;
  awareness_ = std::clamp(awareness_ + 1, 0, options_.awareness_max_multiplier - 1);
  metrics_.health_score.Set(awareness_);
  metrics_.refutes.Increment();
  AliveMsg a;
  a.incarnation = inc;
  a.node = self.name;
  a.addr = self.addr;
  a.port = self.port;
  a.meta = self.meta;
  a.vsn = self.vsn;
  QueueBroadcastLocked(self.name, EncodeMessage(MessageType::kAlive, a));
}

void Membership::AliveNodeLocked(const AliveMsg& a, bool bootstrap) {
  const bool is_local = a.node == options_.node_name;
  // A queued alive about us must not bring us back once we left.
  if (left_ && is_local) return;
  if (a.vsn.size() >= 3) {
    const auto pmin = static_cast<uint8_t>(a.vsn[0]);
    const auto pmax = static_cast<uint8_t>(a.vsn[1]);
    if (pmin == 0 || pmax == 0 || pmin > pmax) {
      log::Warn(kComponent, "ignoring an alive message with bad protocol versions").Kv("node", a.node);
      return;
    }
  }
  if (a.addr.size() != 4 && a.addr.size() != 16) {
    metrics_.Rejected("decode");
    return;
  }
  auto it = nodes_.find(a.node);
  bool updates_node = false;
  if (it == nodes_.end()) {
    Node n;
    n.name = a.node;
    n.addr = a.addr;
    n.port = a.port;
    n.meta = a.meta;
    n.state = NodeStateType::kDead;
    if (a.vsn.size() > 5) n.vsn = a.vsn.substr(0, 6);
    it = nodes_.emplace(a.node, std::move(n)).first;
    // A random place in the probe order keeps the detection bound low on average.
    const size_t pos = probe_order_.empty() ? 0 : rng_() % (probe_order_.size() + 1);
    probe_order_.insert(probe_order_.begin() + static_cast<std::ptrdiff_t>(pos), a.node);
  } else if (it->second.addr != a.addr || it->second.port != a.port) {
    Node& cur = it->second;
    const bool can_reclaim = options_.dead_node_reclaim_time.count() > 0 &&
                             std::chrono::steady_clock::now() - cur.state_change > options_.dead_node_reclaim_time;
    if (cur.state == NodeStateType::kLeft || (cur.state == NodeStateType::kDead && can_reclaim)) {
      log::Info(kComponent, "updating the address of a left or dead member")
          .Kv("node", a.node)
          .Kv("from", cur.address())
          .Kv("to", JoinHostPort(IpToString(a.addr), a.port));
      updates_node = true;
    } else {
      log::Warn(kComponent, "conflicting address for a member")
          .Kv("node", a.node)
          .Kv("ours", cur.address())
          .Kv("theirs", JoinHostPort(IpToString(a.addr), a.port))
          .Kv("state", NodeStateName(cur.state));
      return;
    }
  }
  Node& state = it->second;
  if (a.incarnation <= state.incarnation && !is_local && !updates_node) return;
  if (a.incarnation < state.incarnation && is_local) return;
  suspicions_.erase(a.node);

  if (!bootstrap && is_local) {
    // Someone says we are alive with an incarnation we may not have: refute unless it is
    // exactly what we announced.
    if (a.incarnation == state.incarnation && a.meta == state.meta && a.vsn == state.vsn) return;
    RefuteLocked(state, a.incarnation);
    log::Warn(kComponent, "refuting an alive message about this node").Kv("incarnation", a.incarnation);
    return;
  }
  QueueBroadcastLocked(a.node, EncodeMessage(MessageType::kAlive, a));
  if (a.vsn.size() > 5) state.vsn = a.vsn.substr(0, 6);
  state.incarnation = a.incarnation;
  state.meta = a.meta;
  state.addr = a.addr;
  state.port = a.port;
  if (state.state != NodeStateType::kAlive) {
    if (!is_local) log::Info(kComponent, "member alive").Kv("node", a.node).Kv("addr", state.address());
    SetState(state, NodeStateType::kAlive);
  }
}

void Membership::SuspectNodeLocked(const SuspectMsg& s) {
  auto it = nodes_.find(s.node);
  if (it == nodes_.end()) return;
  Node& state = it->second;
  if (s.incarnation < state.incarnation) return;
  auto sus = suspicions_.find(s.node);
  if (sus != suspicions_.end()) {
    // An independent confirmation shortens the timeout; pass it on once.
    Suspicion& t = sus->second;
    if (t.n >= t.k || !t.confirmations.insert(s.from).second) return;
    ++t.n;
    const double frac = std::log(t.n + 1.0) / std::log(t.k + 1.0);
    const double raw_s = static_cast<double>(t.max.count()) / 1000.0 -
                         frac * static_cast<double>(t.max.count() - t.min.count()) / 1000.0;
    auto timeout = std::chrono::milliseconds(static_cast<int64_t>(std::floor(1000.0 * raw_s)));
    if (timeout < t.min) timeout = t.min;
    t.deadline = t.start + timeout;
    QueueBroadcastLocked(s.node, EncodeMessage(MessageType::kSuspect, s));
    return;
  }
  if (state.state != NodeStateType::kAlive) return;
  if (state.name == options_.node_name) {
    RefuteLocked(state, s.incarnation);
    log::Warn(kComponent, "refuting a suspect message about this node").Kv("from", s.from);
    return;
  }
  QueueBroadcastLocked(s.node, EncodeMessage(MessageType::kSuspect, s));
  state.incarnation = s.incarnation;
  SetState(state, NodeStateType::kSuspect);
  log::Info(kComponent, "member suspect").Kv("node", s.node).Kv("from", s.from);

  int k = options_.suspicion_mult - 2;
  const int n = EstNumNodesLocked();
  if (n - 2 < k) k = 0;
  Suspicion t;
  t.start = std::chrono::steady_clock::now();
  t.state_change = state.state_change;
  t.min = SuspicionTimeout(options_.suspicion_mult, n, options_.probe_interval);
  t.max = t.min * options_.suspicion_max_timeout_mult;
  t.k = k;
  t.confirmations.insert(s.from);
  t.deadline = t.start + (k < 1 ? t.min : t.max);
  suspicions_[s.node] = std::move(t);
}

void Membership::DeadNodeLocked(const DeadMsg& d) {
  auto it = nodes_.find(d.node);
  if (it == nodes_.end()) return;
  Node& state = it->second;
  if (d.incarnation < state.incarnation) return;
  suspicions_.erase(d.node);
  if (state.state == NodeStateType::kDead || state.state == NodeStateType::kLeft) return;
  if (state.name == options_.node_name) {
    if (!left_) {
      RefuteLocked(state, d.incarnation);
      log::Warn(kComponent, "refuting a dead message about this node").Kv("from", d.from);
      return;
    }
  }
  QueueBroadcastLocked(d.node, EncodeMessage(MessageType::kDead, d));
  state.incarnation = d.incarnation;
  // A node declaring its own death has left.
  SetState(state, d.node == d.from ? NodeStateType::kLeft : NodeStateType::kDead);
  if (state.name != options_.node_name) {
    log::Info(kComponent, d.node == d.from ? "member left" : "member dead").Kv("node", d.node).Kv("from", d.from);
  }
}

void Membership::MergeStateLocked(const std::vector<PushNodeState>& remote) {
  for (const auto& r : remote) {
    switch (static_cast<NodeStateType>(r.state)) {
      case NodeStateType::kAlive: {
        AliveMsg a;
        a.incarnation = r.incarnation;
        a.node = r.name;
        a.addr = r.addr;
        a.port = r.port;
        a.meta = r.meta;
        a.vsn = r.vsn;
        AliveNodeLocked(a, false);
        break;
      }
      case NodeStateType::kLeft: {
        DeadMsg d{r.incarnation, r.name, r.name};
        DeadNodeLocked(d);
        break;
      }
      case NodeStateType::kDead:
        // A peer's dead is only our suspicion: we give the node a chance to refute.
      case NodeStateType::kSuspect: {
        SuspectMsg s{r.incarnation, r.name, options_.node_name};
        SuspectNodeLocked(s);
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace limits::ring::memberlist
