#include "node/overrides_reloader.h"

#include <prometheus/family.h>
#include <sys/stat.h>

#include "common/log.h"
#include "config/load_config.h"

namespace limits {

OverridesReloader::OverridesReloader(std::vector<std::string> paths, LimitsProvider& provider,
                                     prometheus::Registry& registry, std::chrono::milliseconds poll_interval,
                                     std::string format)
    : paths_(std::move(paths)),
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
  std::string out;
  for (const std::string& path : paths_) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) {
      out += "absent;";
      continue;
    }
    out += std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec) + "/" +
           std::to_string(st.st_size) + "/" + std::to_string(st.st_ino) + ";";
  }
  return out;
}

std::string OverridesReloader::Names() const {
  std::string out;
  for (const std::string& path : paths_) out += (out.empty() ? "" : ",") + path;
  return out;
}

Status OverridesReloader::LoadInitial() {
  std::lock_guard lock(reload_mu_);
  loaded_fingerprint_ = Fingerprint();
  std::vector<std::string> present;
  Result<std::map<std::string, TenantOverrides>> overrides = config::LoadOverridesFiles(paths_, format_, &present);
  if (!overrides.ok()) return overrides.status();
  if (present.size() < paths_.size()) {
    log::Warn("limits", "overrides file not found; using the configured limits until it appears")
        .Kv("path", Names())
        .Kv("found", present.size());
  }
  const size_t tenants = overrides->size();
  provider_.SetFileOverrides(std::move(*overrides));
  if (!present.empty()) {
    reload_ok_.Increment();
    last_success_.SetToCurrentTime();
  }
  last_ok_.Set(1);  // a missing file is not a failure: it is optional
  log::Info("limits", "loaded tenant overrides").Kv("path", Names()).Kv("files", present.size()).Kv("tenants", tenants);
  return Status::OK();
}

Status OverridesReloader::Reload() {
  std::lock_guard lock(reload_mu_);
  const std::string fingerprint = Fingerprint();
  std::vector<std::string> present;
  Result<std::map<std::string, TenantOverrides>> overrides = config::LoadOverridesFiles(paths_, format_, &present);
  loaded_fingerprint_ = fingerprint;  // a broken file is not re-read until it changes again
  if (!overrides.ok()) {
    reload_failed_.Increment();
    last_ok_.Set(0);
    log::Error("limits", "overrides reload failed; the previous limits stay in force")
        .Kv("path", Names())
        .Kv("error", overrides.status().message());
    return overrides.status();
  }
  const size_t tenants = overrides->size();
  provider_.SetFileOverrides(std::move(*overrides));
  reload_ok_.Increment();
  last_success_.SetToCurrentTime();
  last_ok_.Set(1);
  log::Info("limits", "reloaded tenant overrides").Kv("path", Names()).Kv("files", present.size()).Kv("tenants", tenants);
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
