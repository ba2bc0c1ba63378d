// dskit's merge rules for the ring value (ring/model.go, Desc.Merge), which every member of
// a gossip cluster applies so that all converge on the same ring whatever order updates
// arrive in: per instance the newer heartbeat timestamp wins; LEFT is accepted at an equal
// timestamp (a tombstone); a local CAS marks instances missing from the new value LEFT at
// `now`; tokens claimed twice go to the non-LEAVING instance, else the smaller id.
// Pure functions; thread-safe on distinct values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/ring.pb.h"

namespace limits::ring::memberlist {

// LEFT entries lose their tokens; each entry's tokens are sorted and deduplicated.
void NormalizeRing(::ring::Desc* desc);

// Merges `other` into `into` (which must be normalised; it stays so). `other` is normalised
// in place. Returns the change to gossip — the entries of `into` that the merge set — or an
// empty Desc when nothing changed. `now_s` (unix seconds) stamps the tombstones of a local CAS.
::ring::Desc MergeRing(::ring::Desc* into, ::ring::Desc* other, bool local_cas, int64_t now_s);

// Removes LEFT entries whose timestamp is before `limit_ms` (unix ms; 0 removes every LEFT
// entry, as dskit does before handing a value to its clients). Returns {left kept, removed}.
std::pair<int, int> RemoveTombstones(::ring::Desc* desc, int64_t limit_ms);

// The instance ids a value carries (dskit's MergeContent), sorted: what decides whether a
// newer broadcast supersedes a queued one.
std::vector<std::string> MergeContent(const ::ring::Desc& desc);

}  // namespace limits::ring::memberlist
