#include "node/node_zone.h"

#include <algorithm>

#include "common/log.h"

namespace limits {

NodeZone::NodeZone(const config::ZoneConfig& config, std::string instance_id, std::string zone,
                   int32_t num_partitions, UsageStore& store, PartitionManager& partitions, LimitsProvider& limits,
                   const Clock& clock, prometheus::Registry& registry)
    : config_(config),
      instance_id_(std::move(instance_id)),
      zone_(std::move(zone)),
      clock_(clock),
      members_gauge_(prometheus::BuildGauge()
                         .Name("limitsd_zone_members")
                         .Help("Nodes of this node's zone it shares stream limits with, itself included, as the ring "
                               "last listed them (ACTIVE, fresh heartbeat; after the ring could not be read, stale "
                               "ones for a heartbeat_timeout).")
                         .Register(registry)
                         .Add({})),
      outsiders_gauge_(prometheus::BuildGauge()
                           .Name("limitsd_zone_outsiders")
                           .Help("Live nodes of this node's zone in the ring that do not share its stream limits (no "
                                 "[zone], or another zone protocol: a rollout). While any, this node admits on static "
                                 "shares.")
                           .Register(registry)
                           .Add({})),
      ring_errors_(prometheus::BuildCounter()
                       .Name("limitsd_zone_ring_read_errors_total")
                       .Help("Reads of the ring's members that failed (the last members read stay in use).")
                       .Register(registry)
                       .Add({})) {
  tls::ClientTls t{.enabled = config.tls_enabled,
                   .cert_path = config.tls_cert_path,
                   .key_path = config.tls_key_path,
                   .ca_path = config.tls_ca_path,
                   .server_name = config.tls_server_name,
                   .insecure_skip_verify = config.tls_insecure_skip_verify};
  peers_ = std::make_unique<rpc::ZonePeers>(
      rpc::ZonePeersOptions{.num_partitions = num_partitions, .tls = std::move(t), .timeout = config.call_timeout});
  env_ = std::make_unique<StoreZoneEnvironment>(store, partitions, limits, [this] { return Members(); });
  agent_ = std::make_unique<zone::ZoneAgent>(
      zone::ZoneAgent::Options{
          .self = {instance_id_, ""},
          .num_partitions = num_partitions,
          .lease_ms = config.lease.count(),
          .silent_hold_ms = config.exchange_interval.count(),
          .request_budget_ms = config.call_timeout.count()},
      *env_, *peers_, clock);
  agent_->SetWake([this] { rounds_.Trigger(); });
  service_ = std::make_unique<rpc::ZoneService>(*agent_, num_partitions, registry);
}

std::vector<zone::ZonePeer> NodeZone::Members() {
  std::lock_guard lock(mu_);
  std::vector<zone::ZonePeer> out = members_;
  // This node is a member from the start: its own buckets need no ring entry to be homed here.
  if (std::none_of(out.begin(), out.end(), [&](const zone::ZonePeer& p) { return p.id == instance_id_; })) {
    out.push_back({instance_id_, ""});
  }
  return out;
}

void NodeZone::ReadRing() {
  Result<std::optional<::ring::Desc>> desc = kv_->Get(ring_key_);
  if (!desc.ok()) {
    ring_errors_.Increment();
    view_->ReadFailed();
    log::Warn("zone", "cannot read the ring's members; keeping the last ones").Kv("error", desc.status().ToString());
    return;
  }
  if (view_->failing()) {
    log::Info("zone", "the ring can be read again; members with stale heartbeats stay for heartbeat_timeout");
  }
  std::vector<zone::ZonePeer> members;
  for (const ring::RingMember& m : view_->Read(desc->value_or(::ring::Desc{}), clock_.NowMillis())) {
    members.push_back({m.id, m.addr});
  }
  std::vector<std::string> addresses;
  for (const zone::ZonePeer& p : members) addresses.push_back(p.address);
  peers_->Retain(addresses);
  const size_t outsiders = view_->outsiders();
  if ((outsiders == 0) != agent_->Shared()) {
    if (outsiders == 0) {
      log::Info("zone", "every live node of the zone shares its limits: admitting against the zone");
    } else {
      log::Warn("zone", "live nodes of the zone do not share its limits (no [zone], or another zone protocol): "
                        "admitting on static shares until they do")
          .Kv("outsiders", outsiders);
    }
    agent_->SetShared(outsiders == 0);
  }
  outsiders_gauge_.Set(static_cast<double>(outsiders));
  std::lock_guard lock(mu_);
  if (members.size() != members_.size()) {
    log::Info("zone", "members changed").Kv("members", members.size()).Kv("before", members_.size());
  }
  members_ = std::move(members);
  members_gauge_.Set(static_cast<double>(members_.size()));
}

void NodeZone::Start(ring::KvClient& kv, std::string ring_key, std::chrono::milliseconds heartbeat_timeout) {
  kv_ = &kv;
  ring_key_ = std::move(ring_key);
  view_.emplace(zone_, heartbeat_timeout);
  ReadRing();
  ring_reads_.Start(config_.exchange_interval, [this] { ReadRing(); });
  rounds_.Start(config_.exchange_interval, [this] { agent_->Round(); });
}

}  // namespace limits
