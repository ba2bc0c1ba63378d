// The members of a ring that the nodes of one zone exchange with (the zone's shared limits,
// limits/zone/zone_agent.h): ACTIVE instances of that zone whose heartbeat is fresh and that
// speak this node's zone protocol, by their map key (dskit's instance id), with the gRPC
// address they advertise. A LEAVING, JOINING or silent instance is no bucket's home; nor is
// one without `[zone]` (or of another protocol), which would never answer as a home: it is an
// outsider, and while the zone has one (a rollout turning `[zone]` on), its nodes admit on
// static shares.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/ring.pb.h"

namespace limits::ring {

// The zone protocol a node speaks, advertised in its ring entry's `versions` (dskit's map of
// component versions) under this key ("limitsd" in ASCII): a node with `[zone]` writes it.
inline constexpr uint64_t kZoneProtocolKey = 0x6c696d69747364;
inline constexpr uint64_t kZoneProtocol = 2;  // 2: BucketReport.waiting

struct RingMember {
  std::string id;
  std::string addr;
};

// Sorted by id. `now_s`: unix seconds, as the heartbeat timestamps are. Pure.
std::vector<RingMember> ZoneMembers(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                                    std::chrono::milliseconds heartbeat_timeout);
// The zone's live instances (ACTIVE, fresh, with an address) that do not speak this node's zone
// protocol. Pure.
size_t ZoneOutsiders(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                     std::chrono::milliseconds heartbeat_timeout);

// A zone's members as one node takes them from successive reads of the ring. A read that
// fails keeps the last members. After reads fail, a member whose heartbeat went stale is kept
// (while the ring still lists it ACTIVE) until reads have succeeded for a heartbeat_timeout:
// every heartbeat went stale with the store, and the members write theirs again at their own
// pace — dropping the late ones would give this node a smaller zone than the others see, and
// two nodes would home the same buckets. Not thread-safe.
class ZoneMemberView {
 public:
  ZoneMemberView(std::string zone, std::chrono::milliseconds heartbeat_timeout)
      : zone_(std::move(zone)), heartbeat_timeout_(heartbeat_timeout) {}

  // A read of the ring at `now_ms` (unix milliseconds). Returns the members it leaves.
  const std::vector<RingMember>& Read(const ::ring::Desc& desc, int64_t now_ms);
  // A read that failed.
  void ReadFailed() { failing_ = true; }

  const std::vector<RingMember>& members() const { return members_; }
  // ZoneOutsiders at the last read that succeeded (stale ones too while stale members stay).
  size_t outsiders() const { return outsiders_; }
  // Whether the last read failed.
  bool failing() const { return failing_; }

 private:
  const std::string zone_;
  const std::chrono::milliseconds heartbeat_timeout_;
  std::vector<RingMember> members_;
  size_t outsiders_ = 0;
  bool failing_ = false;
  int64_t keep_stale_until_ms_ = 0;
};

}  // namespace limits::ring
