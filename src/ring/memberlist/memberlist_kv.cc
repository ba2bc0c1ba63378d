#include "ring/memberlist/memberlist_kv.h"

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/json.h"
#include "common/log.h"
#include "ring/instance_addr.h"
#include "ring/lifecycler.h"
#include "ring/memberlist/net_address.h"
#include "ring/ring_codec.h"

namespace limits::ring::memberlist {

namespace {

constexpr char kComponent[] = "memberlist";
constexpr uint16_t kDefaultPort = 7946;

}  // namespace

MemberlistKv::MemberlistKv(MemberlistOptions options, prometheus::Registry& registry, const Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      metrics_(registry),
      kv_(clock, KvStoreOptions{.left_timeout_ms = options_.left_ingesters_timeout.count(),
                                .obsolete_timeout_ms = options_.push_pull_interval.count(),
                                .retransmit_mult = options_.retransmit_factor}) {}

Result<std::unique_ptr<MemberlistKv>> MemberlistKv::Create(MemberlistOptions options, prometheus::Registry& registry,
                                                           const Clock& clock) {
  if (options.node_name.empty()) return Status::InvalidArgument("memberlist: the node name is empty");
  if (options.cluster_label.size() > kMaxLabelSize) {
    return Status::InvalidArgument("memberlist: the cluster label is longer than 255 bytes");
  }
  if (options.randomize_node_name) {
    char suffix[10];
    std::snprintf(suffix, sizeof suffix, "-%08x", static_cast<unsigned>(std::random_device{}()));
    options.node_name += suffix;
  }
  std::unique_ptr<MemberlistKv> kv(new MemberlistKv(std::move(options), registry, clock));
  RETURN_IF_ERROR(kv->Start());
  return kv;
}

Status MemberlistKv::Start() {
  TransportOptions t;
  t.bind_addr = options_.bind_addr;
  t.bind_port = options_.bind_port;
  t.max_message_bytes = options_.max_message_bytes;
  if (options_.tls) {
    Result<std::shared_ptr<tls::PeerTls>> peer_tls = tls::PeerTls::Create(*options_.tls);
    if (!peer_tls.ok()) return peer_tls.status().Prefixed("memberlist TLS");
    t.tls = std::move(*peer_tls);
  }
  transport_ = std::make_unique<TcpTransport>(t, metrics_);
  // The handlers need the membership, built below once the port (maybe the kernel's) is
  // known; until then what arrives is dropped.
  RETURN_IF_ERROR(transport_->Start({
      .on_packet = [this](std::string payload, const std::string& from) {
        if (Membership* m = live_.load()) m->HandlePacket(std::move(payload), from);
      },
      .on_stream = [this](Connection& conn) {
        if (Membership* m = live_.load()) m->HandleStream(conn);
      },
  }));

  std::string host = options_.advertise_addr;
  if (host.empty()) {
    host = options_.bind_addr;
    if (host == "0.0.0.0" || host == "::") {
      Result<std::string> ip = FirstNonLoopbackIPv4();
      if (!ip.ok()) return ip.status().Prefixed("memberlist advertise address");
      host = *ip;
    }
  }
  if (!IpFromString(host).ok()) {
    return Status::InvalidArgument("memberlist advertise address \"" + host + "\" is not an IP address");
  }
  const int port = options_.advertise_port > 0 ? options_.advertise_port : transport_->port();
  advertise_ = JoinHostPort(host, static_cast<uint16_t>(port));
  transport_->SetAdvertiseAddr(advertise_);

  MembershipOptions m;
  m.node_name = options_.node_name;
  m.advertise_host = host;
  m.advertise_port = static_cast<uint16_t>(port);
  m.cluster_label = options_.cluster_label;
  m.skip_label_check = options_.cluster_label_verification_disabled;
  m.probe_interval = options_.probe_interval;
  m.probe_timeout = options_.probe_timeout;
  m.retransmit_mult = options_.retransmit_factor;
  m.gossip_interval = options_.gossip_interval;
  m.gossip_nodes = options_.gossip_nodes;
  m.gossip_to_dead_time = options_.gossip_to_dead_nodes_time;
  m.push_pull_interval = options_.push_pull_interval;
  m.dead_node_reclaim_time = options_.dead_node_reclaim_time;
  m.stream_timeout = options_.stream_timeout;
  membership_ = std::make_unique<Membership>(m, *transport_, static_cast<MembershipDelegate&>(*this), metrics_);
  membership_->Start();
  live_.store(membership_.get());
  log::Info(kComponent, "gossiping")
      .Kv("node", options_.node_name)
      .Kv("advertise", advertise_)
      .Kv("bind", JoinHostPort(options_.bind_addr, static_cast<uint16_t>(transport_->port())))
      .Kv("cluster_label", options_.cluster_label);
  join_thread_ = std::thread([this] { JoinLoop(); });
  return Status::OK();
}

MemberlistKv::~MemberlistKv() {
  if (membership_) {
    // Let our own last changes (LEFT in the ring) reach the others, bounded, as dskit does.
    const auto deadline = std::chrono::steady_clock::now() + options_.broadcast_timeout_on_shutdown;
    while (kv_.LocalBroadcastsQueued() > 0 && membership_->NumAlive() > 1 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(50ms);
    }
    if (kv_.LocalBroadcastsQueued() > 0 && membership_->NumAlive() > 1) {
      log::Warn(kComponent, "stopping with local ring changes not yet gossiped")
          .Kv("queued", kv_.LocalBroadcastsQueued());
    }
  }
  kv_.Interrupt();
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (join_thread_.joinable()) join_thread_.join();
  if (membership_) {
    Status s = membership_->Leave(options_.leave_timeout);
    if (!s.ok()) log::Warn(kComponent, "leaving the gossip cluster").Kv("error", s.ToString());
    membership_->Stop();
  }
  // The transport's handlers must be done before the membership goes.
  live_.store(nullptr);
  if (transport_) transport_->Stop();
  if (membership_) log::Info(kComponent, "left the gossip cluster").Kv("node", options_.node_name);
}

bool MemberlistKv::TryJoin(std::string* error) {
  std::vector<std::string> addrs;
  for (const auto& entry : options_.join) {
    Result<HostPort> hp = SplitHostPort(entry, kDefaultPort);
    if (!hp.ok()) {
      *error = hp.status().message();
      continue;
    }
    Result<std::vector<std::string>> ips = ResolveHost(hp->host);
    if (!ips.ok()) {
      *error = ips.status().message();
      continue;
    }
    for (const auto& ip : *ips) {
      const std::string addr = JoinHostPort(ip, hp->port);
      if (addr != advertise_ && std::find(addrs.begin(), addrs.end(), addr) == addrs.end()) addrs.push_back(addr);
    }
  }
  if (addrs.empty()) {
    if (error->empty()) *error = "no address to join";
    return false;
  }
  const int reached = membership_->Join(addrs, error);
  if (reached > 0) {
    log::Info(kComponent, "joined the gossip cluster").Kv("reached", reached).Kv("tried", addrs.size());
  }
  return reached > 0;
}

void MemberlistKv::JoinLoop() {
  if (options_.join.empty()) return;
  auto backoff = options_.min_join_backoff;
  auto last_join = std::chrono::steady_clock::now();
  bool first = true;
  while (true) {
    const bool alone = membership_->NumAlive() <= 1;
    const bool rejoin_due = options_.rejoin_interval.count() > 0 &&
                            std::chrono::steady_clock::now() - last_join >= options_.rejoin_interval;
    std::chrono::milliseconds wait = 1s;
    if (first || alone || rejoin_due) {
      std::string error;
      const bool ok = TryJoin(&error);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (ok) joined_ = true;
        join_error_ = ok ? "" : error;
      }
      if (ok) {
        last_join = std::chrono::steady_clock::now();
        backoff = options_.min_join_backoff;
      } else {
        log::Warn(kComponent, "joining the gossip cluster failed, retrying")
            .Kv("error", error)
            .Kv("retry_in_ms", static_cast<int64_t>(backoff.count()));
        wait = backoff;
        backoff = std::min(backoff * 2, options_.max_join_backoff);
      }
      first = false;
    }
    kv_.CleanupObsolete();
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, wait, [&] { return stop_; })) return;
  }
}

bool MemberlistKv::joined() const {
  std::lock_guard<std::mutex> lock(mu_);
  return joined_ || membership_->NumAlive() > 1;
}

Result<std::optional<::ring::Desc>> MemberlistKv::Get(const std::string& key) { return kv_.Get(key); }

Status MemberlistKv::Cas(const std::string& key, const CasFn& fn) {
  Status s = kv_.Cas(key, fn);
  metrics_.Cas(s.ok());
  metrics_.SetQueue("kv_local", static_cast<double>(kv_.LocalBroadcastsQueued()));
  return s;
}

void MemberlistKv::Count(const MergeStats& stats, const char* how) {
  metrics_.KvReceived("changed", stats.changed);
  metrics_.KvReceived("invalid", stats.invalid);
  metrics_.KvReceived("unchanged", std::max(0, stats.pairs - stats.changed - stats.invalid));
  if (!stats.error.empty()) log::Warn(kComponent, "gossiped KV data refused").Kv("via", how).Kv("error", stats.error);
}

void MemberlistKv::NotifyMsg(std::string_view msg) { Count(kv_.MergeMessage(msg), "gossip"); }

std::vector<std::string> MemberlistKv::GetBroadcasts(int overhead, int64_t limit, int num_nodes) {
  std::vector<std::string> out = kv_.TakeBroadcasts(overhead, limit, num_nodes);
  metrics_.SetQueue("kv_local", static_cast<double>(kv_.LocalBroadcastsQueued()));
  metrics_.SetQueue("kv_forward", static_cast<double>(kv_.GossipBroadcastsQueued()));
  return out;
}

std::string MemberlistKv::LocalState(bool) { return kv_.LocalState(); }

void MemberlistKv::MergeRemoteState(std::string_view state, bool) { Count(kv_.MergeRemoteState(state), "push_pull"); }

std::string MemberlistKv::StatusJson() const {
  const int64_t now_ms = clock_.NowMillis();
  JsonWriter w;
  w.BeginObject();
  w.Field("node", options_.node_name);
  w.Field("advertise", advertise_);
  w.Field("cluster_label", options_.cluster_label);
  {
    std::lock_guard<std::mutex> lock(mu_);
    w.Field("joined", joined_ || membership_->NumAlive() > 1);
    w.Field("join_error", join_error_);
  }
  w.Field("health_score", membership_->HealthScore());
  w.Key("members").BeginArray();
  for (const auto& m : membership_->Members()) {
    w.BeginObject();
    w.Field("name", m.name);
    w.Field("addr", m.addr);
    w.Field("state", NodeStateName(m.state));
    w.Field("incarnation", m.incarnation);
    w.Field("self", m.self);
    w.Field("state_since_ms", m.state_change_ms);
    w.Key("protocol").BeginArray();  // pmin, pmax, pcur, dmin, dmax, dcur
    for (char c : m.vsn) w.Int(static_cast<uint8_t>(c));
    w.EndArray();
    w.EndObject();
  }
  w.EndArray();
  w.Key("keys").BeginArray();
  for (const auto& k : kv_.Keys()) {
    w.BeginObject();
    w.Field("key", k.key);
    w.Field("codec", k.codec);
    w.Field("version", k.version);
    w.Field("deleted", k.deleted);
    w.Field("value_bytes", k.value_bytes);
    if (k.codec == kRingCodecId) {
      Result<std::optional<::ring::Desc>> desc = kv_.GetWithTombstones(k.key);
      if (desc.ok() && desc->has_value()) {
        std::vector<std::pair<std::string, const ::ring::InstanceDesc*>> sorted;
        for (const auto& [id, inst] : (*desc)->ingesters()) sorted.emplace_back(id, &inst);
        std::sort(sorted.begin(), sorted.end());
        w.Key("ring").BeginArray();
        for (const auto& [id, inst] : sorted) {
          w.BeginObject();
          w.Field("id", id);
          w.Field("addr", inst->addr());
          w.Field("zone", inst->zone());
          w.Field("state", StateName(inst->state()));
          w.Field("timestamp", inst->timestamp());
          w.Field("heartbeat_age_s", now_ms / 1000 - inst->timestamp());
          w.Field("registered_timestamp", inst->registered_timestamp());
          w.Field("tokens", inst->tokens_size());
          w.EndObject();
        }
        w.EndArray();
      }
    }
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  return w.Take();
}

}  // namespace limits::ring::memberlist
