// OverridesReloader: keeps the LimitsProvider in step with limits.overrides_file — one TOML
// file, or Loki runtime-config YAML files merged as Loki merges them — loaded at start,
// reloaded on SIGHUP (Reload()) and whenever a file changes (polled: a Kubernetes ConfigMap
// update swaps a symlink, which inotify on the file would miss). A reload that fails keeps
// the limits in force and logs why.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "common/periodic.h"
#include "common/status.h"
#include "limits/decision/limits_provider.h"

namespace limits {

class OverridesReloader {
 public:
  // `format` is limits.overrides_format ("" by the file's extension; "toml"; "loki").
  OverridesReloader(std::vector<std::string> paths, LimitsProvider& provider, prometheus::Registry& registry,
                    std::chrono::milliseconds poll_interval = std::chrono::seconds(2), std::string format = "");
  ~OverridesReloader();

  // The first load. A missing file is not an error (it may be an optional ConfigMap that
  // appears later: it is skipped); a file that does not parse is, naming the key and line.
  Status LoadInitial();
  // Reads the file again; on failure the current limits stay in force.
  Status Reload();
  void Start();
  void Stop() { poller_.Stop(); }

 private:
  std::string Fingerprint() const;  // changes when a file does (mtime, size, inode)
  std::string Names() const;        // the paths, for log lines

  const std::vector<std::string> paths_;
  const std::string format_;
  LimitsProvider& provider_;
  const std::chrono::milliseconds poll_interval_;
  prometheus::Counter& reload_ok_;
  prometheus::Counter& reload_failed_;
  prometheus::Gauge& last_success_;
  prometheus::Gauge& last_ok_;
  std::mutex reload_mu_;  // one reload at a time (SIGHUP and the poller)
  std::string loaded_fingerprint_;  // GUARDED_BY(reload_mu_)
  Periodic poller_;
};

}  // namespace limits
