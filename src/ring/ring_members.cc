#include "ring/ring_members.h"

#include <algorithm>

namespace limits::ring {

std::vector<RingMember> ZoneMembers(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                                    std::chrono::milliseconds heartbeat_timeout) {
  const int64_t oldest = now_s - std::chrono::duration_cast<std::chrono::seconds>(heartbeat_timeout).count();
  std::vector<RingMember> out;
  for (const auto& [id, instance] : desc.ingesters()) {
    if (instance.state() != ::ring::ACTIVE || instance.zone() != zone || instance.addr().empty()) continue;
    if (instance.timestamp() < oldest) continue;
    out.push_back({id, instance.addr()});
  }
  std::sort(out.begin(), out.end(), [](const RingMember& a, const RingMember& b) { return a.id < b.id; });
  return out;
}

}  // namespace limits::ring
