// MemberlistKv: the ring's KV store as a member of Loki's gossip cluster (dskit's memberlist
// KV over dskit's TCP transport). Get reads this node's merged copy; Cas merges the change
// into it and gossips it; the cluster's other keys are kept and handed on. Building it binds
// the gossip port and starts the threads; joining runs in the background (DNS names are
// resolved on each attempt; it retries with backoff, and again whenever this node finds
// itself alone). Destruction leaves gracefully: it lets our last changes go out (bounded),
// gossips our own death, then stops. Thread-safe.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/registry.h>

#include "common/clock.h"
#include "ring/kv_client.h"
#include "ring/memberlist/kv_store.h"
#include "ring/memberlist/membership.h"
#include "ring/memberlist/metrics.h"
#include "ring/memberlist/tcp_transport.h"

namespace limits::ring::memberlist {

using namespace std::chrono_literals;

// Defaults are dskit's (memberlist.* flags) unless said otherwise.
struct MemberlistOptions {
  std::vector<std::string> join;  // host[:port] (7946 when omitted); names resolved per attempt
  // TLS on every gossip connection (dskit's memberlist tls_*); unset: plain text.
  std::optional<tls::PeerTlsOptions> tls = std::nullopt;
  std::string bind_addr = "0.0.0.0";
  int bind_port = 7946;
  // What peers dial: "" = the bind address, or when that is 0.0.0.0 / ::, this machine's
  // first non-loopback IPv4 address. Port 0 = the bound port.
  std::string advertise_addr;
  int advertise_port = 0;
  std::string node_name;  // required (the node passes its instance id)
  bool randomize_node_name = false;  // append "-" and 8 random hex digits
  std::string cluster_label;
  bool cluster_label_verification_disabled = false;
  std::chrono::milliseconds gossip_interval = 200ms;
  int gossip_nodes = 3;
  std::chrono::milliseconds push_pull_interval = 30s;
  std::chrono::milliseconds gossip_to_dead_nodes_time = 30s;
  std::chrono::milliseconds dead_node_reclaim_time = 0ms;
  int retransmit_factor = 4;
  std::chrono::milliseconds stream_timeout = 2s;
  std::chrono::milliseconds probe_interval = 5s;
  std::chrono::milliseconds probe_timeout = 2s;
  std::chrono::milliseconds left_ingesters_timeout = 5min;
  std::chrono::milliseconds leave_timeout = 20s;
  std::chrono::milliseconds broadcast_timeout_on_shutdown = 10s;
  std::chrono::milliseconds min_join_backoff = 1s;
  std::chrono::milliseconds max_join_backoff = 1min;
  // 0 = no periodic rejoin (dskit's default); a node alone always retries.
  std::chrono::milliseconds rejoin_interval = 0ms;
  // Larger packets or stream messages are refused (not a config key; tests lower it).
  size_t max_message_bytes = 64u << 20;
};

class MemberlistKv : public KvClient, private MembershipDelegate {
 public:
  // kUnavailable when the gossip port cannot be bound; kInvalidArgument for bad options.
  static Result<std::unique_ptr<MemberlistKv>> Create(MemberlistOptions options, prometheus::Registry& registry,
                                                      const Clock& clock = Clock::System());
  ~MemberlistKv() override;

  Result<std::optional<::ring::Desc>> Get(const std::string& key) override;
  Status Cas(const std::string& key, const CasFn& fn) override;
  const char* name() const override { return "memberlist"; }

  // The /memberlist page: members and their state, the keys, and every ring as seen here.
  std::string StatusJson() const;
  std::vector<MemberView> Members() const { return membership_->Members(); }
  int port() const { return transport_->port(); }
  const std::string& advertise() const { return advertise_; }
  // Whether a join reached a member (or a member reached us).
  bool joined() const;

 private:
  MemberlistKv(MemberlistOptions options, prometheus::Registry& registry, const Clock& clock);
  Status Start();
  void JoinLoop();
  bool TryJoin(std::string* error);

  // MembershipDelegate
  void NotifyMsg(std::string_view msg) override;
  std::vector<std::string> GetBroadcasts(int overhead, int64_t limit, int num_nodes) override;
  std::string LocalState(bool join) override;
  void MergeRemoteState(std::string_view state, bool join) override;
  void Count(const MergeStats& stats, const char* how);

  const MemberlistOptions options_;
  const Clock& clock_;
  Metrics metrics_;
  KvStore kv_;
  std::unique_ptr<TcpTransport> transport_;
  std::unique_ptr<Membership> membership_;
  std::atomic<Membership*> live_{nullptr};  // what the transport's handlers use
  std::string advertise_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;     // GUARDED_BY(mu_)
  bool joined_ = false;   // GUARDED_BY(mu_)
  std::string join_error_;  // GUARDED_BY(mu_)
  std::thread join_thread_;
};

}  // namespace limits::ring::memberlist
