#include "limits/decision/limits_provider.h"

namespace limits {

LimitsProvider::LimitsProvider(TenantLimits defaults, std::map<std::string, TenantOverrides> config_tenants)
    : defaults_(std::move(defaults)), config_tenants_(std::move(config_tenants)) {
  Publish();
}

void LimitsProvider::SetFileOverrides(std::map<std::string, TenantOverrides> file_tenants) {
  file_tenants_ = std::move(file_tenants);
  Publish();
}

void LimitsProvider::Publish() {
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->defaults_ = defaults_;
  for (const auto& [tenant, o] : config_tenants_) snapshot->tenants_[tenant] = ApplyOverrides(defaults_, o);
  // The overrides file is applied over the config file's entry for the same tenant.
  for (const auto& [tenant, o] : file_tenants_) {
    auto it = snapshot->tenants_.find(tenant);
    const TenantLimits base = it == snapshot->tenants_.end() ? defaults_ : it->second;
    snapshot->tenants_[tenant] = ApplyOverrides(base, o);
  }
  current_.store(std::move(snapshot));
}

}  // namespace limits
