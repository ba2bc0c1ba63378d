#include "ring/memberlist/kv_store.h"

#include <chrono>

#include <google/protobuf/util/message_differencer.h>

#include "ring/memberlist/kv.pb.h"
#include "ring/memberlist/ring_merge.h"
#include "ring/ring_codec.h"

namespace limits::ring::memberlist {

namespace {

void PutU32Be(std::string& out, uint32_t v) {
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

KvStore::KvStore(const Clock& clock, KvStoreOptions options)
    : clock_(clock), options_(options), local_(options.retransmit_mult), gossip_(options.retransmit_mult) {}

Result<KvStore::Change> KvStore::MergeRingLocked(const std::string& key, ::ring::Desc incoming, bool local_cas,
                                                 uint64_t cas_version, bool deleted, int64_t update_time_ms) {
  auto it = store_.find(key);
  const bool have = it != store_.end() && it->second.ring.has_value();
  if (it != store_.end() && !have) {
    return Status::InvalidArgument("key " + key + " holds a value of codec " + it->second.codec);
  }
  Change out;
  // A deletion of a value we do not have must not bring the key back.
  if (!have && deleted) return out;
  if (cas_version > 0 && (!have || it->second.version != cas_version)) {
    return Status::Unavailable("version mismatch");
  }
  const int64_t now_ms = clock_.NowMillis();
  ::ring::Desc change;
  if (!have) {
    NormalizeRing(&incoming);
    change = incoming;
    Value v;
    v.codec = kRingCodecId;
    v.ring = std::move(incoming);
    it = store_.emplace(key, std::move(v)).first;
  } else {
    change = MergeRing(&*it->second.ring, &incoming, local_cas, now_ms / 1000);
  }
  Value& cur = it->second;
  bool new_deleted = cur.deleted;
  int64_t new_updated = cur.update_time_ms;
  if (update_time_ms != 0 && update_time_ms > new_updated && deleted) {
    new_updated = update_time_ms;
    new_deleted = true;
  }
  const bool value_changed = change.ingesters_size() > 0;
  if (!value_changed && cur.deleted == new_deleted) {
    if (!have) store_.erase(it);  // an empty first value: nothing to keep
    return out;
  }
  if (options_.left_timeout_ms > 0) {
    const int64_t limit = now_ms - options_.left_timeout_ms;
    RemoveTombstones(&*cur.ring, limit);
    if (value_changed) {
      RemoveTombstones(&change, limit);
      if (change.ingesters_size() == 0 && cur.deleted == new_deleted) return out;
    }
  }
  if (!value_changed) change = *cur.ring;  // only the deletion changed: gossip the value
  cur.version += 1;
  cur.deleted = new_deleted;
  cur.update_time_ms = new_updated;
  out.desc = std::move(change);
  out.version = cur.version;
  out.deleted = new_deleted;
  out.update_time_ms = new_updated;
  return out;
}

void KvStore::Broadcast(const std::string& key, const Change& change, bool local) {
  ::memberlist::KeyValuePair pair;
  pair.set_key(key);
  pair.set_value(EncodeDesc(change.desc));
  pair.set_codec(kRingCodecId);
  pair.set_deleted(change.deleted);
  pair.set_update_time_millis(change.update_time_ms);
  std::string msg;
  pair.SerializeToString(&msg);
  (local ? local_ : gossip_).Queue(key, MergeContent(change.desc), change.version, std::move(msg));
}

Status KvStore::MergePair(const std::string& key, const std::string& codec, const std::string& value,
                          bool deleted, int64_t update_time_ms, bool* changed) {
  *changed = false;
  if (key.empty()) return Status::Corruption("key/value pair with an empty key");
  if (codec != kRingCodecId) {
    // Not ours to merge: keep what was last received and pass it on in push-pull. Any member
    // merges it by the value's own (commutative, idempotent) rules.
    std::lock_guard<std::mutex> lock(mu_);
    Value& v = store_[key];
    if (v.ring.has_value()) return Status::Corruption("key " + key + " arrived with codec " + codec);
    if (v.codec == codec && v.opaque == value && v.deleted == deleted) return Status::OK();
    v.codec = codec;
    v.opaque = value;
    v.deleted = deleted;
    v.update_time_ms = std::max(v.update_time_ms, update_time_ms);
    v.version += 1;
    *changed = true;
    return Status::OK();
  }
  ::ring::Desc incoming;
  if (!value.empty()) {
    ASSIGN_OR_RETURN(incoming, DecodeDesc(value));
  }
  Change change;
  {
    std::lock_guard<std::mutex> lock(mu_);
    ASSIGN_OR_RETURN(change, MergeRingLocked(key, std::move(incoming), false, 0, deleted, update_time_ms));
  }
  if (change.version == 0) return Status::OK();
  *changed = true;
  // Forward only what changed here, as dskit does.
  Broadcast(key, change, false);
  return Status::OK();
}

MergeStats KvStore::MergeMessage(std::string_view msg) {
  MergeStats stats;
  stats.pairs = 1;
  ::memberlist::KeyValuePair pair;
  if (!pair.ParseFromArray(msg.data(), static_cast<int>(msg.size()))) {
    stats.invalid = 1;
    stats.error = "user message is not a KeyValuePair";
    return stats;
  }
  bool changed = false;
  Status s = MergePair(pair.key(), pair.codec(), pair.value(), pair.deleted(), pair.update_time_millis(), &changed);
  if (!s.ok()) {
    stats.invalid = 1;
    stats.error = "key " + pair.key() + ": " + s.ToString();
  }
  stats.changed = changed ? 1 : 0;
  return stats;
}

MergeStats KvStore::MergeRemoteState(std::string_view data) {
  MergeStats stats;
  while (!data.empty()) {
    if (data.size() < 4) {
      stats.error = "remote state: " + std::to_string(data.size()) + " bytes left, not a length";
      ++stats.invalid;
      break;
    }
    const uint32_t len = static_cast<uint32_t>(static_cast<uint8_t>(data[0])) << 24 |
                         static_cast<uint32_t>(static_cast<uint8_t>(data[1])) << 16 |
                         static_cast<uint32_t>(static_cast<uint8_t>(data[2])) << 8 | static_cast<uint8_t>(data[3]);
    data.remove_prefix(4);
    if (data.size() < len) {
      stats.error = "remote state: pair of " + std::to_string(len) + " bytes, " + std::to_string(data.size()) + " left";
      ++stats.invalid;
      break;
    }
    ::memberlist::KeyValuePair pair;
    const bool parsed = pair.ParseFromArray(data.data(), static_cast<int>(len));
    data.remove_prefix(len);
    ++stats.pairs;
    if (!parsed) {
      // dskit stops at a pair that does not parse: what follows cannot be trusted either.
      stats.error = "remote state: a pair is not a KeyValuePair";
      ++stats.invalid;
      break;
    }
    bool changed = false;
    Status s = MergePair(pair.key(), pair.codec(), pair.value(), pair.deleted(), pair.update_time_millis(), &changed);
    if (!s.ok()) {
      ++stats.invalid;
      if (stats.error.empty()) stats.error = "key " + pair.key() + ": " + s.ToString();
    }
    if (changed) ++stats.changed;
  }
  return stats;
}

std::string KvStore::LocalState() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [key, v] : store_) {
    ::memberlist::KeyValuePair pair;
    pair.set_key(key);
    pair.set_codec(v.codec);
    pair.set_value(v.ring.has_value() ? EncodeDesc(*v.ring) : v.opaque);
    pair.set_deleted(v.deleted);
    pair.set_update_time_millis(v.update_time_ms);
    std::string bytes;
    pair.SerializeToString(&bytes);
    PutU32Be(out, static_cast<uint32_t>(bytes.size()));
    out += bytes;
  }
  return out;
}

Result<std::optional<::ring::Desc>> KvStore::GetWithTombstones(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = store_.find(key);
  if (it == store_.end()) return std::optional<::ring::Desc>();
  if (!it->second.ring.has_value()) {
    return Status::Corruption("key " + key + " holds a value of codec " + it->second.codec + ", not a ring");
  }
  return std::optional<::ring::Desc>(*it->second.ring);
}

Result<std::optional<::ring::Desc>> KvStore::Get(const std::string& key) const {
  ASSIGN_OR_RETURN(std::optional<::ring::Desc> desc, GetWithTombstones(key));
  if (desc) RemoveTombstones(&*desc, 0);  // clients never see tombstones (dskit's get)
  return desc;
}

// On a retry after "no change detected": an entry fn changed without advancing its timestamp
// (a function that took "now" once, before the first attempt) gets the current second, at
// least one more than before. A dskit client takes "now" inside its function, so its retry
// a second later carries a newer timestamp by itself; this gives the same outcome.
void KvStore::RestampUnseenChanges(const ::ring::Desc& before, ::ring::Desc* after, int64_t now_s) {
  for (auto& [id, inst] : *after->mutable_ingesters()) {
    auto it = before.ingesters().find(id);
    if (it == before.ingesters().end() || inst.timestamp() > it->second.timestamp()) continue;
    if (google::protobuf::util::MessageDifferencer::Equals(inst, it->second)) continue;
    inst.set_timestamp(std::max(now_s, it->second.timestamp() + 1));
  }
}

Status KvStore::Cas(const std::string& key, const KvClient::CasFn& fn) {
  Status last = Status::OK();
  bool wait_next_second = false;
  for (int attempt = 0; attempt < options_.max_cas_retries; ++attempt) {
    if (wait_next_second) {
      std::unique_lock<std::mutex> lock(mu_);
      interrupt_cv_.wait_for(lock, std::chrono::milliseconds(options_.no_change_retry_ms),
                             [&] { return interrupted_; });
      if (interrupted_) return Status::Shutdown("memberlist KV is stopping");
    }
    wait_next_second = false;
    ::ring::Desc desc;
    uint64_t version = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = store_.find(key);
      if (it != store_.end()) {
        if (!it->second.ring.has_value()) {
          return Status::Corruption("key " + key + " holds a value of codec " + it->second.codec + ", not a ring");
        }
        desc = *it->second.ring;
        version = it->second.version;
      }
    }
    RemoveTombstones(&desc, 0);
    const ::ring::Desc before = desc;
    ASSIGN_OR_RETURN(KvClient::CasAction action, fn(desc));
    if (action == KvClient::CasAction::kSkip) return Status::OK();
    if (attempt > 0) RestampUnseenChanges(before, &desc, clock_.NowMillis() / 1000);
    Result<Change> change = [&]() -> Result<Change> {
      std::lock_guard<std::mutex> lock(mu_);
      return MergeRingLocked(key, std::move(desc), version > 0, version, false, 0);
    }();
    if (!change.ok()) {
      last = change.status();
      if (last.code() == StatusCode::kUnavailable) continue;  // version mismatch: run fn again
      return last.Prefixed("CAS of " + key);
    }
    if (change->version == 0) {
      // fn changed something the merge cannot see yet (same-second timestamp): dskit waits.
      last = Status::Unavailable("no change detected");
      wait_next_second = true;
      continue;
    }
    Broadcast(key, *change, true);
    return Status::OK();
  }
  return last.Prefixed("CAS of " + key + ": too many retries");
}

void KvStore::Interrupt() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    interrupted_ = true;
  }
  interrupt_cv_.notify_all();
}

std::vector<std::string> KvStore::TakeBroadcasts(int overhead, int64_t limit, int num_nodes) {
  std::vector<std::string> out = local_.Take(overhead, limit, num_nodes);
  for (const auto& m : out) limit -= overhead + static_cast<int64_t>(m.size());
  if (limit > 0) {
    for (auto& m : gossip_.Take(overhead, limit, num_nodes)) out.push_back(std::move(m));
  }
  return out;
}

void KvStore::CleanupObsolete() {
  const int64_t now = clock_.NowMillis();
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = store_.begin(); it != store_.end();) {
    if (it->second.deleted && now - it->second.update_time_ms > options_.obsolete_timeout_ms) {
      it = store_.erase(it);
    } else {
      ++it;
    }
  }
}

std::vector<KeyInfo> KvStore::Keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<KeyInfo> out;
  for (const auto& [key, v] : store_) {
    KeyInfo k;
    k.key = key;
    k.codec = v.codec;
    k.version = v.version;
    k.deleted = v.deleted;
    k.update_time_ms = v.update_time_ms;
    k.value_bytes = v.ring.has_value() ? v.ring->ByteSizeLong() : v.opaque.size();
    out.push_back(std::move(k));
  }
  return out;
}

}  // namespace limits::ring::memberlist
