// NodeZone: a node's part in its zone's shared stream limits, put together (config [zone]):
// the ZoneAgent (limits/zone/zone_agent.h) over this node's store and limits, the Zone service
// it answers on the gRPC port, the peer client with the zone's TLS, a thread that runs a round
// of exchanges every exchange_interval (sooner when a request asks a bucket to turn hot), and
// one that reads the ring's members as often — apart, so that a ring store that hangs (a read
// waits out etcd's request timeout) does not hold back the exchanges that keep leases.
// Members are the ACTIVE, fresh instances of this node's zone in the ring; a ring that cannot
// be read keeps the last members, and once it can again, those whose heartbeats went stale
// with it, for a heartbeat_timeout (ring/ring_members.h).
// Thread-safe; Stop() before destroying what it references.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/periodic.h"
#include "config/config.h"
#include "limits/decision/zone_environment.h"
#include "limits/zone/zone_agent.h"
#include "ring/kv_client.h"
#include "ring/ring_members.h"
#include "rpc/zone_peers.h"
#include "rpc/zone_service.h"

namespace limits {

class NodeZone {
 public:
  // `instance_id` and `zone`: this node's in the ring. References must outlive it.
  NodeZone(const config::ZoneConfig& config, std::string instance_id, std::string zone, int32_t num_partitions,
           UsageStore& store, PartitionManager& partitions, LimitsProvider& limits, const Clock& clock,
           prometheus::Registry& registry);
  ~NodeZone() { Stop(); }

  zone::ZoneAgent& agent() { return *agent_; }
  grpc::Service& service() { return *service_; }

  // Starts the rounds, reading the members from `kv`'s `ring_key`.
  void Start(ring::KvClient& kv, std::string ring_key, std::chrono::milliseconds heartbeat_timeout);
  void Stop() {
    rounds_.Stop();
    ring_reads_.Stop();
  }

 private:
  std::vector<zone::ZonePeer> Members();
  void ReadRing();

  const config::ZoneConfig config_;
  const std::string instance_id_;
  const std::string zone_;
  const Clock& clock_;
  ring::KvClient* kv_ = nullptr;
  std::string ring_key_;
  std::optional<ring::ZoneMemberView> view_;  // ring_reads_' thread's

  std::mutex mu_;
  std::vector<zone::ZonePeer> members_;  // GUARDED_BY(mu_): the ring's, as last read

  prometheus::Gauge& members_gauge_;
  prometheus::Gauge& outsiders_gauge_;
  prometheus::Counter& ring_errors_;
  std::unique_ptr<rpc::ZonePeers> peers_;
  std::unique_ptr<StoreZoneEnvironment> env_;
  std::unique_ptr<zone::ZoneAgent> agent_;
  std::unique_ptr<rpc::ZoneService> service_;
  Periodic ring_reads_;  // last two: they stop before the rest goes
  Periodic rounds_;
};

}  // namespace limits
