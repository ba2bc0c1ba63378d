#include "ring/ring_members.h"

#include <algorithm>

namespace limits::ring {
namespace {

bool IsOfZone(const ::ring::InstanceDesc& instance, const std::string& zone) {
  return instance.state() == ::ring::ACTIVE && instance.zone() == zone && !instance.addr().empty();
}

bool SpeaksOurProtocol(const ::ring::InstanceDesc& instance) {
  auto protocol = instance.versions().find(kZoneProtocolKey);
  return protocol != instance.versions().end() && protocol->second == kZoneProtocol;
}

bool IsZoneMember(const ::ring::InstanceDesc& instance, const std::string& zone) {
  return IsOfZone(instance, zone) && SpeaksOurProtocol(instance);
}

int64_t OldestFresh(int64_t now_s, std::chrono::milliseconds heartbeat_timeout) {
  return now_s - std::chrono::duration_cast<std::chrono::seconds>(heartbeat_timeout).count();
}

void SortById(std::vector<RingMember>& members) {
  std::sort(members.begin(), members.end(), [](const RingMember& a, const RingMember& b) { return a.id < b.id; });
}

}  // namespace

std::vector<RingMember> ZoneMembers(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                                    std::chrono::milliseconds heartbeat_timeout) {
  const int64_t oldest = OldestFresh(now_s, heartbeat_timeout);
  std::vector<RingMember> out;
  for (const auto& [id, instance] : desc.ingesters()) {
    if (!IsZoneMember(instance, zone) || instance.timestamp() < oldest) continue;
    out.push_back({id, instance.addr()});
  }
  SortById(out);
  return out;
}

size_t ZoneOutsiders(const ::ring::Desc& desc, const std::string& zone, int64_t now_s,
                     std::chrono::milliseconds heartbeat_timeout) {
  const int64_t oldest = OldestFresh(now_s, heartbeat_timeout);
  return static_cast<size_t>(std::count_if(desc.ingesters().begin(), desc.ingesters().end(), [&](const auto& entry) {
    const ::ring::InstanceDesc& i = entry.second;
    return IsOfZone(i, zone) && !SpeaksOurProtocol(i) && i.timestamp() >= oldest;
  }));
}

const std::vector<RingMember>& ZoneMemberView::Read(const ::ring::Desc& desc, int64_t now_ms) {
  if (failing_) {
    failing_ = false;
    keep_stale_until_ms_ = now_ms + heartbeat_timeout_.count();
  }
  std::vector<RingMember> members = ZoneMembers(desc, zone_, now_ms / 1000, heartbeat_timeout_);
  if (now_ms < keep_stale_until_ms_) {
    for (const RingMember& last : members_) {
      const bool fresh =
          std::any_of(members.begin(), members.end(), [&](const RingMember& m) { return m.id == last.id; });
      if (fresh) continue;
      auto it = desc.ingesters().find(last.id);
      if (it != desc.ingesters().end() && IsZoneMember(it->second, zone_)) {
        members.push_back({last.id, it->second.addr()});
      }
    }
    SortById(members);
  }
  members_ = std::move(members);
  // Outsiders with stale heartbeats count for as long as stale members do: they too write
  // theirs again at their own pace, and admit on static shares meanwhile.
  const bool keep_stale = now_ms < keep_stale_until_ms_;
  outsiders_ =
      ZoneOutsiders(desc, zone_, now_ms / 1000, keep_stale ? std::chrono::milliseconds::max() : heartbeat_timeout_);
  return members_;
}

}  // namespace limits::ring
