#include "node/overrides_reloader.h"

#include <prometheus/family.h>
#include <sys/stat.h>

#include "common/log.h"
#include "config/load_config.h"

namespace limits {

OverridesReloader::OverridesReloader(std::string path, LimitsProvider& provider, prometheus::Registry& registry,
                                     std::chrono::milliseconds poll_interval, std::string format)
    : path_(std::move(path)),
      format_(std::move(format)),
      provider_(provider),
      poll_interval_(poll_interval),
      reload_ok_(prometheus::BuildCounter()
                     .Name("limitsd_overrides_reloads_total")
                     .Help("Loads of limits.overrides_file, by result.")
                     .Register(registry)
                     .Add({{"result", "success"}})),
      reload_failed_(prometheus::BuildCounter()
                         .Name("limitsd_overrides_reload_failures_total")
                         .Help("Loads of limits.overrides_file that failed (the previous limits stayed in force).")
                         .Register(registry)
                         .Add({})),
      last_success_(prometheus::BuildGauge()
                        .Name("limitsd_overrides_last_success_timestamp_seconds")
                        .Help("When limits.overrides_file was last loaded successfully.")
                        .Register(registry)
                        .Add({})),
      last_ok_(prometheus::BuildGauge()
                   .Name("limitsd_overrides_last_reload_successful")
                   .Help("1 when the last load of limits.overrides_file succeeded, 0 while a broken file waits "
                         "to be fixed (Loki's loki_runtime_config_last_reload_successful).")
                   .Register(registry)
                   .Add({})) {}

OverridesReloader::~OverridesReloader() { Stop(); }

std::string OverridesReloader::Fingerprint() const {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) return "absent";
  return std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "/" +
         std::to_string(st.st_size) + "/" + std::to_string(st.st_ino);
}

Status OverridesReloader::LoadInitial() {
  std::lock_guard lock(reload_mu_);
  loaded_fingerprint_ = Fingerprint();
  if (loaded_fingerprint_ == "absent") {
    log::Warn("limits", "overrides file not found; using the configured limits until it appears").Kv("path", path_);
    last_ok_.Set(1);  // not a failure: the file is optional
    return Status::OK();
  }
  Result<std::map<std::string, TenantOverrides>> overrides = config::LoadOverridesFile(path_, format_);
  if (!overrides.ok()) return overrides.status();
  const size_t tenants = overrides->size();
  provider_.SetFileOverrides(std::move(*overrides));
  reload_ok_.Increment();
  last_success_.SetToCurrentTime();
  last_ok_.Set(1);
  log::Info("limits", "loaded tenant overrides").Kv("path", path_).Kv("tenants", tenants);
  return Status::OK();
}

Status OverridesReloader::Reload() {
  std::lock_guard lock(reload_mu_);
  const std::string fingerprint = Fingerprint();
  Result<std::map<std::string, TenantOverrides>> overrides =
      fingerprint == "absent" ? Result<std::map<std::string, TenantOverrides>>(std::map<std::string, TenantOverrides>{})
                              : config::LoadOverridesFile(path_, format_);
  loaded_fingerprint_ = fingerprint;  // a broken file is not re-read until it changes again
  if (!overrides.ok()) {
    reload_failed_.Increment();
    last_ok_.Set(0);
    log::Error("limits", "overrides reload failed; the previous limits stay in force")
        .Kv("path", path_)
        .Kv("error", overrides.status().message());
    return overrides.status();
  }
  const size_t tenants = overrides->size();
  provider_.SetFileOverrides(std::move(*overrides));
  reload_ok_.Increment();
  last_success_.SetToCurrentTime();
  last_ok_.Set(1);
  log::Info("limits", "reloaded tenant overrides").Kv("path", path_).Kv("tenants", tenants);
  return Status::OK();
}

void OverridesReloader::Start() {
  poller_.Start(poll_interval_, [this] {
    bool changed;
    {
      std::lock_guard lock(reload_mu_);
      changed = Fingerprint() != loaded_fingerprint_;
    }
    if (changed) (void)Reload();
  });
}

}  // namespace limits
