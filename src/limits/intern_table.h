// InternTable: small integer ids for strings seen over and over (tenants, policies), so
// per-stream state stores 2-4 bytes instead of a string. Ids are never reused or removed.
// Thread-safe; lookups of known names take a shared lock.
#pragma once

#include <absl/container/flat_hash_map.h>

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>

namespace limits {

class InternTable {
 public:
  explicit InternTable(uint32_t capacity) : capacity_(capacity) {}

  // The id of `name`, adding it when new; nullopt once `capacity` names are known.
  std::optional<uint32_t> Intern(std::string_view name) {
    {
      std::shared_lock lock(mu_);
      if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    }
    std::unique_lock lock(mu_);
    if (auto it = ids_.find(name); it != ids_.end()) return it->second;
    if (names_.size() >= capacity_) return std::nullopt;
    const auto id = static_cast<uint32_t>(names_.size());
    names_.emplace_back(name);
    ids_.emplace(names_.back(), id);  // views the deque element, which never moves
    return id;
  }

  std::optional<uint32_t> Find(std::string_view name) const {
    std::shared_lock lock(mu_);
    auto it = ids_.find(name);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
  }

  // The name of an id returned by Intern; the view stays valid for the table's life.
  std::string_view Name(uint32_t id) const {
    std::shared_lock lock(mu_);
    return names_.at(id);
  }

  size_t size() const {
    std::shared_lock lock(mu_);
    return names_.size();
  }

 private:
  const uint32_t capacity_;
  mutable std::shared_mutex mu_;
  absl::flat_hash_map<std::string_view, uint32_t> ids_;  // GUARDED_BY(mu_)
  std::deque<std::string> names_;                        // GUARDED_BY(mu_)
};

}  // namespace limits
