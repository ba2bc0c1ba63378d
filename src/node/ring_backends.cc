#include "node/ring_backends.h"

#include <map>
#include <string_view>

#include "ring/etcd_kv.h"
#include "ring/memberlist/memberlist_kv.h"

namespace limits {
namespace {

Result<std::unique_ptr<ring::KvClient>> MakeEtcd(const config::Config& c, prometheus::Registry&) {
  ring::EtcdKvOptions o;
  o.endpoints = c.ring.etcd_endpoints;
  o.dial_timeout = c.ring.etcd_dial_timeout;
  o.tls.enabled = c.ring.etcd_tls_enabled;
  o.tls.cert_path = c.ring.etcd_tls_cert_path;
  o.tls.key_path = c.ring.etcd_tls_key_path;
  o.tls.ca_path = c.ring.etcd_tls_ca_path;
  o.tls.server_name = c.ring.etcd_tls_server_name;
  o.tls.insecure_skip_verify = c.ring.etcd_tls_insecure_skip_verify;
  o.tls.reload_interval = std::chrono::duration_cast<std::chrono::seconds>(c.server.tls_reload_interval);
  o.username = c.ring.etcd_username;
  o.password = c.ring.etcd_password;
  ASSIGN_OR_RETURN(std::unique_ptr<ring::EtcdKv> kv, ring::EtcdKv::Create(o));
  return std::unique_ptr<ring::KvClient>(std::move(kv));
}

Result<std::unique_ptr<ring::KvClient>> MakeMemberlist(const config::Config& c, prometheus::Registry& registry) {
  const config::RingConfig& r = c.ring;
  ring::memberlist::MemberlistOptions o;
  o.join = r.memberlist_join;
  o.bind_addr = r.memberlist_bind_addr;
  o.bind_port = r.memberlist_bind_port;
  o.advertise_addr = r.memberlist_advertise_addr;
  o.advertise_port = r.memberlist_advertise_port;
  o.node_name = r.memberlist_node_name.empty() ? c.node.instance_id : r.memberlist_node_name;
  o.randomize_node_name = r.memberlist_randomize_node_name;
  o.cluster_label = r.memberlist_cluster_label;
  o.cluster_label_verification_disabled = r.memberlist_cluster_label_verification_disabled;
  o.gossip_interval = r.memberlist_gossip_interval;
  o.gossip_nodes = r.memberlist_gossip_nodes;
  o.push_pull_interval = r.memberlist_pullpush_interval;
  o.gossip_to_dead_nodes_time = r.memberlist_gossip_to_dead_nodes_time;
  o.dead_node_reclaim_time = r.memberlist_dead_node_reclaim_time;
  o.retransmit_factor = r.memberlist_retransmit_factor;
  o.stream_timeout = r.memberlist_stream_timeout;
  o.probe_interval = r.memberlist_probe_interval;
  o.probe_timeout = r.memberlist_probe_timeout;
  o.left_ingesters_timeout = r.memberlist_left_ingesters_timeout;
  o.leave_timeout = r.memberlist_leave_timeout;
  o.min_join_backoff = r.memberlist_min_join_backoff;
  o.max_join_backoff = r.memberlist_max_join_backoff;
  o.rejoin_interval = r.memberlist_rejoin_interval;
  if (r.memberlist_tls_enabled) {
    tls::PeerTlsOptions t;
    t.cert_file = r.memberlist_tls_cert_path;
    t.key_file = r.memberlist_tls_key_path;
    t.ca_file = r.memberlist_tls_ca_path;
    t.server_name = r.memberlist_tls_server_name;
    t.insecure_skip_verify = r.memberlist_tls_insecure_skip_verify;
    t.reload_interval = std::chrono::duration_cast<std::chrono::seconds>(c.server.tls_reload_interval);
    o.tls = std::move(t);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<ring::memberlist::MemberlistKv> kv,
                   ring::memberlist::MemberlistKv::Create(std::move(o), registry));
  return std::unique_ptr<ring::KvClient>(std::move(kv));
}

const std::map<std::string_view, RingKvFactory>& Backends() {
  static const std::map<std::string_view, RingKvFactory> backends = {
      {"etcd", MakeEtcd},
      {"memberlist", MakeMemberlist},
  };
  return backends;
}

}  // namespace

Result<std::unique_ptr<ring::KvClient>> MakeRingKv(const config::Config& config, prometheus::Registry& registry) {
  auto it = Backends().find(config.ring.store);
  if (it == Backends().end()) {
    return Status::InvalidArgument("ring.store: this build of limitsd has no \"" + config.ring.store + "\" backend");
  }
  Result<std::unique_ptr<ring::KvClient>> kv = it->second(config, registry);
  if (!kv.ok()) return kv.status().Prefixed("ring (store " + config.ring.store + ")");
  return kv;
}

}  // namespace limits
