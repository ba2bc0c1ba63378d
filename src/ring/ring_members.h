// The members of a ring that the nodes of one zone exchange with (the zone's shared limits,
// limits/zone/zone_agent.h): ACTIVE instances of that zone whose heartbeat is fresh, by their
// map key (dskit's instance id), with the gRPC address they advertise. A LEAVING, JOINING or
// silent instance is no bucket's home. Pure.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "proto/ring.pb.h"

namespace limits::ring {

struct RingMember {
  std::string id;
  std::string addr;
};

// Sorted by id. `now_s`: unix seconds, as the heartbeat timestamps are.
std::vector<RingMember> ZoneMembers(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                                    std::chrono::milliseconds heartbeat_timeout);

}  // namespace limits::ring
