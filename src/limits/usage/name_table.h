// NameTable: small integer ids for names referenced over and over (tenants; a tenant's
// ingestion policies), so per-stream state stores 2-4 bytes instead of a string. Ids are
// counted by their users and reused once the last user releases them, so a node that sees
// ever new names never runs out of ids while the names in use stay under the capacity.
// Thread-safe; looking up a known name takes a shared lock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

namespace limits {

class NameTable {
 public:
  // `capacity` names in use at once; names acquired as `reserved` may go past it, up to
  // `reserved_capacity` (at least `capacity`).
  explicit NameTable(uint32_t capacity, uint32_t reserved_capacity = 0)
      : capacity_(capacity), reserved_capacity_(std::max(capacity, reserved_capacity)) {}

  // The id of `name` with one more reference, adding it when new; nullopt when `capacity`
  // names are in use (`reserved_capacity` for a reserved name: a name that must always have
  // an id, such as an ingestion policy the overrides give a limit of its own).
  std::optional<uint32_t> Acquire(std::string_view name, bool reserved = false) {
    std::unique_lock lock(mu_);
    if (auto it = ids_.find(name); it != ids_.end()) {
      ++entries_[it->second]->refs;
      return it->second;
    }
    if (ids_.size() >= (reserved ? reserved_capacity_ : capacity_)) return std::nullopt;
    uint32_t id;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<uint32_t>(entries_.size());
      entries_.push_back(std::make_unique<Entry>());
    }
    *entries_[id] = Entry{std::string(name), 1};
    ids_.emplace(entries_[id]->name, id);  // views the entry's string, which never moves
    return id;
  }

  // Drops one reference; the last one frees the id for reuse.
  void Release(uint32_t id) {
    std::unique_lock lock(mu_);
    Entry& e = *entries_.at(id);
    if (e.refs == 0 || --e.refs > 0) return;
    ids_.erase(e.name);
    e.name.clear();
    free_.push_back(id);
  }

  std::optional<uint32_t> Find(std::string_view name) const {
    std::shared_lock lock(mu_);
    auto it = ids_.find(name);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

  // The name of an id. REQUIRES: the caller (or what it works for) holds a reference, so
  // the view cannot be reused underneath it.
  std::string_view Name(uint32_t id) const {
    std::shared_lock lock(mu_);
    return entries_.at(id)->name;
  }

  // Names in use.
  size_t size() const {
    std::shared_lock lock(mu_);
    return ids_.size();
  }
  uint32_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::string name;
    uint32_t refs = 0;
  };
  const uint32_t capacity_;
  const uint32_t reserved_capacity_;
  mutable std::shared_mutex mu_;
  absl::flat_hash_map<std::string_view, uint32_t> ids_;  // GUARDED_BY(mu_)
  // One allocation each, not a deque: an empty deque is a 512-byte block, and every tenant has
  // a table of policies (most with one name).
  std::vector<std::unique_ptr<Entry>> entries_;  // GUARDED_BY(mu_)
  std::vector<uint32_t> free_;                           // GUARDED_BY(mu_)
};

}  // namespace limits
