// Membership: the periodic work — probing (memberlist's probe/probeNode), gossip, push-pull,
// and the timers (suspicion timeouts, nacks of relayed pings).
#include <algorithm>
#include <cmath>
#include <optional>

#include "common/log.h"
#include "ring/memberlist/membership.h"
#include "ring/memberlist/net_address.h"

namespace limits::ring::memberlist {

namespace {

constexpr char kComponent[] = "memberlist";
constexpr auto kTimerTick = 100ms;
constexpr int kCompoundOverhead = 2;
constexpr int kUserMsgOverhead = 1;

bool DeadOrLeft(NodeStateType s) { return s == NodeStateType::kDead || s == NodeStateType::kLeft; }

}  // namespace

void Membership::ResetProbeOrderLocked() {
  const auto now = std::chrono::steady_clock::now();
  // Forget members dead or left for longer than we keep gossiping to them.
  for (auto it = nodes_.begin(); it != nodes_.end();) {
    if (it->first != options_.node_name && DeadOrLeft(it->second.state) &&
        now - it->second.state_change > options_.gossip_to_dead_time) {
      log::Debug(kComponent, "forgetting member").Kv("node", it->first).Kv("state", NodeStateName(it->second.state));
      it = nodes_.erase(it);
    } else {
      ++it;
    }
  }
  probe_order_.clear();
  for (const auto& [name, n] : nodes_) probe_order_.push_back(name);
  std::shuffle(probe_order_.begin(), probe_order_.end(), rng_);
  probe_index_ = 0;
}

void Membership::ProbeLoop() {
  std::uniform_int_distribution<int64_t> stagger(0, options_.probe_interval.count());
  int64_t first = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = stagger(rng_);
  }
  if (WaitStop(std::chrono::milliseconds(first))) return;
  while (true) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<Node> target;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (size_t checked = 0; checked <= probe_order_.size() + 1 && !target; ++checked) {
        if (probe_index_ >= probe_order_.size()) {
          ResetProbeOrderLocked();
          if (probe_order_.empty()) break;
        }
        const std::string& name = probe_order_[probe_index_++];
        auto it = nodes_.find(name);
        if (it == nodes_.end() || name == options_.node_name || DeadOrLeft(it->second.state)) continue;
        target = it->second;
      }
    }
    if (target) ProbeNode(*target);
    const auto next = start + options_.probe_interval;
    const auto now = std::chrono::steady_clock::now();
    if (WaitStop(next > now ? std::chrono::duration_cast<std::chrono::milliseconds>(next - now) : 0ms)) return;
  }
}

bool Membership::WaitAck(uint32_t seq, std::chrono::steady_clock::time_point until) {
  std::unique_lock<std::mutex> lock(ack_mu_);
  ack_cv_.wait_until(lock, until, [&] {
    auto it = acks_.find(seq);
    if (it != acks_.end() && it->second.acked) return true;
    std::lock_guard<std::mutex> stop(stop_mu_);
    return stop_;
  });
  auto it = acks_.find(seq);
  return it != acks_.end() && it->second.acked;
}

void Membership::ProbeNode(const Node& node) {
  const auto interval = ScaleTimeout(options_.probe_interval);
  const uint32_t seq = NextSeq();
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    acks_[seq] = AckWaiter{};
  }
  PingMsg ping;
  ping.seq_no = seq;
  ping.node = node.name;
  ping.source_addr = self_ip_;
  ping.source_port = options_.advertise_port;
  ping.source_node = options_.node_name;
  const auto sent = std::chrono::steady_clock::now();
  const std::string addr = node.address();
  if (node.state == NodeStateType::kAlive) {
    SendPacket(addr, node.name, EncodeMessage(MessageType::kPing, ping), "ping");
  } else {
    // A suspect member also hears the suspicion, so that it can refute it at once.
    SuspectMsg s{node.incarnation, node.name, options_.node_name};
    metrics_.Sent("ping");
    metrics_.Sent("suspect");
    SendRaw(addr, node.pmax(),
            EncodeCompound({EncodeMessage(MessageType::kPing, ping), EncodeMessage(MessageType::kSuspect, s)}));
  }
  auto finish = [&](const char* result, int awareness) {
    {
      std::lock_guard<std::mutex> lock(ack_mu_);
      acks_.erase(seq);
    }
    metrics_.Probe(result);
    ApplyAwareness(awareness);
  };
  if (WaitAck(seq, sent + options_.probe_timeout)) return finish("ack", -1);

  // Ask a few other members to ping it for us (same sequence number: their ack is ours).
  std::vector<Node> peers;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<const Node*> candidates;
    for (const auto& [name, n] : nodes_) {
      if (name != options_.node_name && name != node.name && n.state == NodeStateType::kAlive) candidates.push_back(&n);
    }
    std::shuffle(candidates.begin(), candidates.end(), rng_);
    for (size_t i = 0; i < candidates.size() && static_cast<int>(i) < options_.indirect_checks; ++i) {
      peers.push_back(*candidates[i]);
    }
  }
  int expected_nacks = 0;
  for (const auto& peer : peers) {
    IndirectPingMsg ind;
    ind.seq_no = seq;
    ind.target = node.addr;
    ind.port = node.port;
    ind.node = node.name;
    ind.nack = peer.pmax() >= 4;
    if (ind.nack) ++expected_nacks;
    ind.source_addr = self_ip_;
    ind.source_port = options_.advertise_port;
    ind.source_node = options_.node_name;
    SendPacket(peer.address(), peer.name, EncodeMessage(MessageType::kIndirectPing, ind), "indirect_ping");
  }
  if (!peers.empty() && WaitAck(seq, sent + interval)) return finish("indirect_ack", -1);

  int nacks = 0;
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    auto it = acks_.find(seq);
    if (it != acks_.end()) nacks = it->second.nacks;
  }
  // Missing nacks suggest that we, not the target, have the problem (memberlist's awareness).
  const int delta = expected_nacks > 0 ? std::max(0, expected_nacks - nacks) : 1;
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    if (stop_) return;
  }
  finish("failed", delta);
  log::Info(kComponent, "probe failed, suspecting member").Kv("node", node.name).Kv("addr", addr);
  std::lock_guard<std::mutex> lock(mu_);
  SuspectNodeLocked(SuspectMsg{node.incarnation, node.name, options_.node_name});
}

void Membership::GossipLoop() {
  auto next_gossip = std::chrono::steady_clock::now();
  auto next_metrics = next_gossip;
  while (!WaitStop(std::min<std::chrono::milliseconds>(kTimerTick, options_.gossip_interval))) {
    FireTimers();
    const auto now = std::chrono::steady_clock::now();
    if (now >= next_gossip) {
      Gossip();
      next_gossip = now + options_.gossip_interval;
    }
    if (now >= next_metrics) {
      int counts[4] = {0, 0, 0, 0};
      {
        std::lock_guard<std::mutex> lock(mu_);
        for (const auto& [name, n] : nodes_) ++counts[static_cast<int>(n.state) & 3];
      }
      for (int s = 0; s < 4; ++s) metrics_.SetMembers(NodeStateName(static_cast<NodeStateType>(s)), counts[s]);
      metrics_.SetQueue("membership", static_cast<double>(broadcasts_.size()));
      next_metrics = now + 1s;
    }
  }
}

void Membership::FireTimers() {
  const auto now = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, std::pair<std::string, uint32_t>>> nacks;  // addr, (node, seq)
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    for (auto it = acks_.begin(); it != acks_.end();) {
      if (it->second.relay && now >= it->second.deadline) {
        if (it->second.relay_nack) nacks.push_back({it->second.relay_addr, {it->second.relay_node, it->second.relay_seq}});
        it = acks_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (const auto& [addr, who] : nacks) {
    NackMsg n;
    n.seq_no = who.second;
    SendPacket(addr, who.first, EncodeMessage(MessageType::kNack, n), "nack");
  }
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> expired;
  for (const auto& [name, s] : suspicions_) {
    if (now >= s.deadline) expired.push_back(name);
  }
  for (const auto& name : expired) {
    const Suspicion s = suspicions_[name];
    suspicions_.erase(name);
    auto it = nodes_.find(name);
    if (it == nodes_.end() || it->second.state != NodeStateType::kSuspect || it->second.state_change != s.state_change) {
      continue;
    }
    log::Info(kComponent, "suspicion timed out, marking member dead").Kv("node", name).Kv("confirmations", s.n);
    DeadNodeLocked(DeadMsg{it->second.incarnation, name, options_.node_name});
  }
}

void Membership::Gossip() {
  std::vector<Node> targets;
  int num_nodes = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    std::vector<const Node*> candidates;
    for (const auto& [name, n] : nodes_) {
      if (name == options_.node_name) continue;
      const bool recently_dead = n.state == NodeStateType::kDead && now - n.state_change <= options_.gossip_to_dead_time;
      if (n.state == NodeStateType::kAlive || n.state == NodeStateType::kSuspect || recently_dead) {
        candidates.push_back(&n);
      }
    }
    std::shuffle(candidates.begin(), candidates.end(), rng_);
    for (size_t i = 0; i < candidates.size() && static_cast<int>(i) < options_.gossip_nodes; ++i) {
      targets.push_back(*candidates[i]);
    }
    num_nodes = EstNumNodesLocked();
  }
  const int64_t budget = options_.packet_budget - kCompoundOverhead -
                         static_cast<int64_t>(LabelHeader(options_.cluster_label).size());
  for (const auto& node : targets) {
    std::vector<std::string> msgs = broadcasts_.Take(kCompoundOverhead, budget, num_nodes);
    int64_t used = 0;
    for (const auto& m : msgs) used += kCompoundOverhead + static_cast<int64_t>(m.size());
    if (budget - used > kCompoundOverhead + kUserMsgOverhead) {
      for (auto& user : delegate_.GetBroadcasts(kCompoundOverhead + kUserMsgOverhead, budget - used, num_nodes)) {
        std::string m(1, static_cast<char>(MessageType::kUser));
        m += user;
        msgs.push_back(std::move(m));
      }
    }
    if (msgs.empty()) return;
    for (const auto& m : msgs) metrics_.Sent(MessageTypeName(static_cast<uint8_t>(m[0])));
    const std::string addr = node.address();
    if (msgs.size() == 1) {
      SendRaw(addr, node.pmax(), std::move(msgs[0]));
      continue;
    }
    // Compound messages hold at most 255 parts of at most 65535 bytes; longer ones go alone.
    std::vector<std::string> batch;
    for (auto& m : msgs) {
      if (m.size() > 65535) {
        SendRaw(addr, node.pmax(), std::move(m));
        continue;
      }
      batch.push_back(std::move(m));
      if (batch.size() == 255) {
        SendRaw(addr, node.pmax(), EncodeCompound(batch));
        batch.clear();
      }
    }
    if (batch.size() == 1) {
      SendRaw(addr, node.pmax(), std::move(batch[0]));
    } else if (!batch.empty()) {
      SendRaw(addr, node.pmax(), EncodeCompound(batch));
    }
  }
}

void Membership::PushPullLoop() {
  std::uniform_int_distribution<int64_t> stagger(0, options_.push_pull_interval.count());
  int64_t first = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    first = stagger(rng_);
  }
  if (WaitStop(std::chrono::milliseconds(first))) return;
  while (true) {
    std::string addr;
    int n = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      n = EstNumNodesLocked();
      std::vector<const Node*> alive;
      for (const auto& [name, node] : nodes_) {
        if (name != options_.node_name && node.state == NodeStateType::kAlive) alive.push_back(&node);
      }
      if (!alive.empty()) addr = alive[rng_() % alive.size()]->address();
    }
    if (!addr.empty()) {
      Status s = PushPull(addr, false);
      if (!s.ok()) log::Debug(kComponent, "push-pull failed").Kv("addr", addr).Kv("error", s.ToString());
    }
    // memberlist slows push-pull down for clusters above 32 members.
    auto interval = options_.push_pull_interval;
    if (n > 32) interval *= static_cast<int>(std::ceil(std::log2(static_cast<double>(n)) - std::log2(32.0)) + 1.0);
    if (WaitStop(interval)) return;
  }
}

}  // namespace limits::ring::memberlist
