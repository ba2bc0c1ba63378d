// LimitsProvider: every tenant's limits as configured — the defaults, the config file's
// per-tenant overrides, and the overrides file's (which take precedence and are replaced
// whole on reload). Lookups take no mutex: a reload publishes a new immutable snapshot.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <absl/strings/string_view.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "limits/decision/tenant_limits.h"

namespace limits {

class LimitsProvider {
 public:
  // An immutable resolution of every tenant's limits.
  class Snapshot {
   public:
    const TenantLimits& For(std::string_view tenant) const {
      auto it = tenants_.find(absl::string_view(tenant.data(), tenant.size()));
      return it == tenants_.end() ? defaults_ : it->second;
    }
    const TenantLimits& defaults() const { return defaults_; }
    size_t overridden_tenants() const { return tenants_.size(); }

   private:
    friend class LimitsProvider;
    TenantLimits defaults_;
    absl::flat_hash_map<std::string, TenantLimits> tenants_;
  };

  LimitsProvider(TenantLimits defaults, std::map<std::string, TenantOverrides> config_tenants);

  // The current snapshot; hold it for the length of one request.
  std::shared_ptr<const Snapshot> Current() const { return current_.load(); }

  // Replaces the overrides file's entries (a successful reload).
  void SetFileOverrides(std::map<std::string, TenantOverrides> file_tenants);

 private:
  void Publish();

  const TenantLimits defaults_;
  const std::map<std::string, TenantOverrides> config_tenants_;
  std::map<std::string, TenantOverrides> file_tenants_;  // only Publish() and SetFileOverrides() touch it
  std::atomic<std::shared_ptr<const Snapshot>> current_;
};

}  // namespace limits
