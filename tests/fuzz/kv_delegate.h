// KvDelegate: MemberlistKv's membership delegate without its metrics, for the fuzz targets
// that drive a Membership over a real KvStore (packets and streams).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ring/memberlist/kv_store.h"
#include "ring/memberlist/membership.h"

namespace limits::fuzz {

class KvDelegate final : public ring::memberlist::MembershipDelegate {
 public:
  explicit KvDelegate(ring::memberlist::KvStore& kv) : kv_(kv) {}
  void NotifyMsg(std::string_view msg) override { (void)kv_.MergeMessage(msg); }
  std::vector<std::string> GetBroadcasts(int overhead, int64_t limit, int num_nodes) override {
    return kv_.TakeBroadcasts(overhead, limit, num_nodes);
  }
  std::string LocalState(bool) override { return kv_.LocalState(); }
  void MergeRemoteState(std::string_view state, bool) override { (void)kv_.MergeRemoteState(state); }

 private:
  ring::memberlist::KvStore& kv_;
};

}  // namespace limits::fuzz
