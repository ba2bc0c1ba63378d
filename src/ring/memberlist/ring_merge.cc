#include "ring/memberlist/ring_merge.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace limits::ring::memberlist {

namespace {

using Ingesters = google::protobuf::Map<std::string, ::ring::InstanceDesc>;

bool TokensEqual(const ::ring::InstanceDesc& a, const ::ring::InstanceDesc& b) {
  return a.tokens_size() == b.tokens_size() && std::equal(a.tokens().begin(), a.tokens().end(), b.tokens().begin());
}

bool ConflictingTokensExist(const Ingesters& ingesters) {
  std::unordered_set<uint32_t> seen;
  for (const auto& [id, inst] : ingesters) {
    for (uint32_t t : inst.tokens()) {
      if (!seen.insert(t).second) return true;
    }
  }
  return false;
}

// dskit's resolveConflicts: a token held by several instances goes to the one not LEAVING,
// else to the smaller id; LEFT instances hold none.
void ResolveConflicts(Ingesters* ingesters) {
  std::unordered_map<uint32_t, std::string> owner;
  for (const auto& [id, inst] : *ingesters) {
    if (inst.state() == ::ring::LEFT) continue;
    for (uint32_t t : inst.tokens()) {
      auto [it, inserted] = owner.try_emplace(t, id);
      if (inserted) continue;
      const std::string& prev = it->second;
      const ::ring::InstanceDesc& prev_inst = ingesters->at(prev);
      std::string winner = id;
      if (inst.state() == ::ring::LEAVING && prev_inst.state() != ::ring::LEAVING) {
        winner = prev;
      } else if (prev_inst.state() == ::ring::LEAVING && inst.state() != ::ring::LEAVING) {
        winner = id;
      } else if (id < prev) {
        winner = id;
      } else if (prev < id) {
        winner = prev;
      }
      it->second = winner;
    }
  }
  std::unordered_map<std::string, std::vector<uint32_t>> lists;
  for (const auto& [t, id] : owner) lists[id].push_back(t);
  for (auto& [id, inst] : *ingesters) {
    auto it = lists.find(id);
    inst.clear_tokens();
    if (it == lists.end()) continue;
    std::sort(it->second.begin(), it->second.end());
    for (uint32_t t : it->second) inst.add_tokens(t);
  }
}

}  // namespace

void NormalizeRing(::ring::Desc* desc) {
  for (auto& [id, inst] : *desc->mutable_ingesters()) {
    if (inst.state() == ::ring::LEFT) inst.clear_tokens();
    if (inst.tokens_size() == 0) continue;
    auto* tokens = inst.mutable_tokens();
    if (!std::is_sorted(tokens->begin(), tokens->end())) std::sort(tokens->begin(), tokens->end());
    tokens->erase(std::unique(tokens->begin(), tokens->end()), tokens->end());
  }
}

::ring::Desc MergeRing(::ring::Desc* into, ::ring::Desc* other, bool local_cas, int64_t now_s) {
  NormalizeRing(other);
  Ingesters& ours = *into->mutable_ingesters();
  const Ingesters& theirs = other->ingesters();
  std::vector<std::string> updated;
  bool tokens_changed = false;

  for (const auto& [id, oing] : theirs) {
    auto it = ours.find(id);
    const int64_t our_ts = it == ours.end() ? 0 : it->second.timestamp();
    const ::ring::InstanceState our_state = it == ours.end() ? ::ring::ACTIVE : it->second.state();
    if (oing.timestamp() > our_ts) {
      if (!TokensEqual(it == ours.end() ? ::ring::InstanceDesc::default_instance() : it->second, oing)) {
        tokens_changed = true;
      }
      ours[id] = oing;
      updated.push_back(id);
    } else if (oing.timestamp() == our_ts && our_state != ::ring::LEFT && oing.state() == ::ring::LEFT) {
      // LEFT is accepted at an equal timestamp.
      ours[id] = oing;
      updated.push_back(id);
    }
  }

  if (local_cas) {
    // Breaks commutativity, so only for a local CAS: what the new value lacks has left.
    for (auto& [id, ting] : ours) {
      if (theirs.find(id) == theirs.end() && ting.state() != ::ring::LEFT) {
        ting.set_state(::ring::LEFT);
        ting.clear_tokens();
        ting.set_timestamp(now_s);
        updated.push_back(id);
      }
    }
  }

  ::ring::Desc change;
  if (updated.empty()) return change;
  if (tokens_changed && ConflictingTokensExist(ours)) ResolveConflicts(&ours);
  for (const auto& id : updated) (*change.mutable_ingesters())[id] = ours.at(id);
  return change;
}

std::pair<int, int> RemoveTombstones(::ring::Desc* desc, int64_t limit_ms) {
  int total = 0;
  int removed = 0;
  auto* ingesters = desc->mutable_ingesters();
  for (auto it = ingesters->begin(); it != ingesters->end();) {
    if (it->second.state() == ::ring::LEFT) {
      if (limit_ms == 0 || it->second.timestamp() * 1000 < limit_ms) {
        it = ingesters->erase(it);
        ++removed;
        continue;
      }
      ++total;
    }
    ++it;
  }
  return {total, removed};
}

std::vector<std::string> MergeContent(const ::ring::Desc& desc) {
  std::vector<std::string> ids;
  ids.reserve(desc.ingesters_size());
  for (const auto& [id, inst] : desc.ingesters()) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace limits::ring::memberlist
