// KvStore: dskit's gossiped key-value store (kv/memberlist/memberlist_client.go) — every key a
// member knows, merged by the value's rules, so that this node holds and forwards the same
// state as Loki's members:
// - ring values (codec "ringDesc", any key) are decoded and merged by dskit's ring rules; what
//   a merge changed is queued for gossip, LEFT entries are dropped after left_timeout;
// - values of other codecs are kept as last received and handed on untouched in push-pull;
// - Cas applies a function to a copy of the merged value (tombstones hidden, as dskit shows
//   it to clients), merges the result as a local CAS and queues the change for gossip; a
//   change the merge cannot see (same-second timestamp) is retried a second later, as dskit
//   does, and an entry the function changed without a newer timestamp then gets one.
// Thread-safe: one mutex over the store, never held while a CAS function runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "common/result.h"
#include "proto/ring.pb.h"
#include "ring/kv_client.h"
#include "ring/memberlist/broadcast_queue.h"

namespace limits::ring::memberlist {

struct KvStoreOptions {
  // LEFT instances are removed from ring values this long after their last timestamp
  // (dskit's memberlist.left-ingesters-timeout).
  int64_t left_timeout_ms = 5 * 60 * 1000;
  // Deleted keys are forgotten this long after their deletion (obsolete-entries-timeout).
  int64_t obsolete_timeout_ms = 30 * 1000;
  // dskit's memberlist.retransmit-factor.
  int retransmit_mult = 4;
  // How long Cas waits before calling fn again when the merge saw no change although fn
  // asked to write (timestamps have one-second resolution: dskit waits one second).
  int64_t no_change_retry_ms = 1000;
  int max_cas_retries = 10;
};

// What merging remote data did, for metrics and logs.
struct MergeStats {
  int pairs = 0;         // key/value pairs read
  int changed = 0;       // pairs that changed our state
  int invalid = 0;       // undecodable pairs (skipped)
  std::string error;     // first problem, empty when none
};

// One key as the status page shows it.
struct KeyInfo {
  std::string key;
  std::string codec;
  uint64_t version = 0;
  bool deleted = false;
  int64_t update_time_ms = 0;
  size_t value_bytes = 0;
};

class KvStore {
 public:
  KvStore(const Clock& clock, KvStoreOptions options);

  // --- from the network ---
  // A user message: one KeyValuePair (gossip). Returns what it changed.
  MergeStats MergeMessage(std::string_view msg);
  // Push-pull user state: [u32 BE length][KeyValuePair]... (dskit's LocalState format).
  MergeStats MergeRemoteState(std::string_view data);
  // Our whole store in that format.
  std::string LocalState() const;

  // --- the KvClient semantics ---
  Result<std::optional<::ring::Desc>> Get(const std::string& key) const;
  // The value with its LEFT tombstones (for the status page).
  Result<std::optional<::ring::Desc>> GetWithTombstones(const std::string& key) const;
  Status Cas(const std::string& key, const KvClient::CasFn& fn);
  // Ends Cas waits at once (shutdown).
  void Interrupt();

  // Broadcasts to piggyback: our own changes first, then forwarded ones (dskit's order).
  std::vector<std::string> TakeBroadcasts(int overhead, int64_t limit, int num_nodes);
  size_t LocalBroadcastsQueued() const { return local_.size(); }
  size_t GossipBroadcastsQueued() const { return gossip_.size(); }
  size_t BroadcastBytesQueued() const { return local_.bytes() + gossip_.bytes(); }

  // Forgets deleted keys past obsolete_timeout_ms.
  void CleanupObsolete();

  std::vector<KeyInfo> Keys() const;

 private:
  struct Value {
    std::string codec;
    std::optional<::ring::Desc> ring;  // codec == kRingCodecId
    std::string opaque;                // any other codec: the value as last received
    uint64_t version = 0;
    bool deleted = false;
    int64_t update_time_ms = 0;
  };
  struct Change {
    ::ring::Desc desc;
    uint64_t version = 0;  // 0: nothing changed
    bool deleted = false;
    int64_t update_time_ms = 0;
  };

  // dskit's mergeValueForKey; REQUIRES: mu_ held. cas_version > 0 checks the stored version.
  Result<Change> MergeRingLocked(const std::string& key, ::ring::Desc incoming, bool local_cas,
                                 uint64_t cas_version, bool deleted, int64_t update_time_ms);
  // One incoming KeyValuePair; REQUIRES: mu_ not held.
  Status MergePair(const std::string& key, const std::string& codec, const std::string& value, bool deleted,
                   int64_t update_time_ms, bool* changed);
  void Broadcast(const std::string& key, const Change& change, bool local);
  static void RestampUnseenChanges(const ::ring::Desc& before, ::ring::Desc* after, int64_t now_s);

  const Clock& clock_;
  const KvStoreOptions options_;
  mutable std::mutex mu_;
  std::map<std::string, Value> store_;  // GUARDED_BY(mu_)
  bool interrupted_ = false;            // GUARDED_BY(mu_)
  std::condition_variable interrupt_cv_;
  BroadcastQueue local_;
  BroadcastQueue gossip_;
};

}  // namespace limits::ring::memberlist
