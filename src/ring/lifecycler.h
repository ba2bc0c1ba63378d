// Lifecycler: this node's membership in Loki's dskit ring, kept as dskit's ring.Lifecycler
// keeps it — register the instance JOINING, go ACTIVE once the node serves, heartbeat every
// heartbeat_period, and on Stop() write LEAVING and then remove the entry (or leave it
// LEAVING when unregister_on_shutdown is off, as dskit does). Backend-independent: it sees
// only a KvClient, and every write is a CAS that changes this instance's entry and nothing
// else. A failing KV never stops the node: the lifecycler retries with backoff and logs once
// per change of condition (working / failing with another kind of error).
// Thread-safety: Start() and Stop() from one thread (the node's); SetServing(), status() and
// tokens() from any thread. The steps (Register, Heartbeat, Leave) are what the thread runs;
// tests drive them directly without Start(). They serialise on a mutex.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include "common/clock.h"
#include "common/status.h"
#include "ring/kv_client.h"

namespace limits::ring {

using namespace std::chrono_literals;

struct LifecyclerOptions {
  // The KV key of the ring: prefix + key, e.g. "collectors/ingest-limits".
  std::string ring_key;
  // The map key and `id` of our InstanceDesc (the pod name).
  std::string instance_id;
  // Advertised gRPC address, host:port: what the frontend dials.
  std::string addr;
  std::string zone;
  int num_tokens = 128;
  std::chrono::milliseconds heartbeat_period = 5s;
  // Readers skip an instance whose heartbeat is older; the lifecycler warns (once per
  // outage) when its own last successful write gets this old.
  std::chrono::milliseconds heartbeat_timeout = 1min;
  // Remove the entry on a graceful Stop() (dskit's default); false leaves it LEAVING.
  bool unregister_on_shutdown = true;
  // Retry delays after a failed KV operation: doubling from min, capped at max and at
  // heartbeat_period (so a recovered KV is used at least as soon as the next heartbeat).
  std::chrono::milliseconds min_backoff = 100ms;
  std::chrono::milliseconds max_backoff = 10s;
  // How long Stop() keeps trying to write LEAVING / remove the entry while the KV fails.
  std::chrono::milliseconds stop_timeout = 5s;
  // Seed of the token generator; 0 picks a random one.
  uint64_t token_seed = 0;
  // The zone protocol advertised in the entry's `versions` (ring_members.h); 0 advertises
  // none (and removes one an earlier process wrote).
  uint64_t zone_protocol = 0;
};

// What /ready and the metrics report.
struct LifecyclerStatus {
  // Latched by the first successful registration; cleared by the removal of the entry.
  bool registered = false;
  // The state last written to the ring (PENDING before the first write).
  ::ring::InstanceState state = ::ring::PENDING;
  // Clock time (unix ms) of the last successful write; 0 before the first.
  int64_t last_success_ms = 0;
  // Empty while the last operation succeeded; else its error.
  std::string last_error;
  uint64_t cas_conflicts = 0;
};

class Lifecycler {
 public:
  // `kv` and `clock` must outlive the lifecycler. Metrics (limitsd_ring_*) go to `registry`.
  Lifecycler(KvClient& kv, const Clock& clock, LifecyclerOptions options, prometheus::Registry& registry);
  ~Lifecycler();
  Lifecycler(const Lifecycler&) = delete;
  Lifecycler& operator=(const Lifecycler&) = delete;

  // Starts the thread: registers (retrying until it succeeds), then heartbeats.
  void Start();
  // The node serves requests: the next write (done at once by the thread) says ACTIVE.
  void SetServing();
  // Graceful stop: LEAVING, then removal when unregister_on_shutdown — only if the instance
  // registered; gives up after stop_timeout. Idempotent; joins the thread.
  void Stop();

  LifecyclerStatus status() const;
  // Our tokens, sorted; empty before the first registration.
  std::vector<uint32_t> tokens() const;
  const LifecyclerOptions& options() const { return options_; }

  // --- steps (the thread's work) ---
  // Writes our entry JOINING: tokens reused from an existing entry under our id (topped up
  // or trimmed to num_tokens, never one another instance holds), its registered_timestamp
  // kept, else now.
  Status Register();
  // Refreshes our timestamp and writes the desired state (ACTIVE once serving, else the
  // registration's JOINING). An entry that vanished (KV reset) is written again with a new
  // registered_timestamp and the same tokens, as dskit does.
  Status Heartbeat();
  // Writes LEAVING, then removes the entry when unregister_on_shutdown. A missing entry is
  // not written again.
  Status Leave();

 private:
  enum class Op { kRegister, kHeartbeat, kLeave, kUnregister };
  static const char* OpName(Op op);

  void Run();
  // Runs one CAS for `op`, counting conflicts (a callback called again) and errors.
  Status CasOurEntry(Op op, const KvClient::CasFn& fn);
  void Report(Op op, const Status& s);
  void FillEntry(::ring::InstanceDesc* entry, ::ring::InstanceState state, int64_t now_s,
                 const std::vector<uint32_t>& tokens, int64_t registered_at_s) const;
  std::vector<uint32_t> PickTokens(const ::ring::Desc& desc) const;  // REQUIRES: op_mu_ held
  void SetWrittenState(::ring::InstanceState state, bool registered);

  KvClient& kv_;
  const Clock& clock_;
  const LifecyclerOptions options_;

  // Serialises the steps; guards what only they touch.
  std::mutex op_mu_;
  mutable std::mt19937_64 rng_;          // GUARDED_BY(op_mu_)
  std::vector<uint32_t> tokens_;         // GUARDED_BY(op_mu_); mirrored in status_mu_
  int64_t registered_at_s_ = 0;          // GUARDED_BY(op_mu_)
  bool failing_ = false;                 // GUARDED_BY(op_mu_): last op failed
  StatusCode failing_code_ = StatusCode::kOk;  // GUARDED_BY(op_mu_)
  bool stale_warned_ = false;            // GUARDED_BY(op_mu_)

  mutable std::mutex status_mu_;
  LifecyclerStatus status_;              // GUARDED_BY(status_mu_)
  std::vector<uint32_t> tokens_copy_;    // GUARDED_BY(status_mu_)

  // The thread.
  std::mutex mu_;
  std::condition_variable cv_;
  bool serving_ = false;  // GUARDED_BY(mu_)
  bool wake_ = false;     // GUARDED_BY(mu_)
  bool stop_ = false;     // GUARDED_BY(mu_)
  std::thread thread_;

  // Metrics.
  prometheus::Gauge& registered_gauge_;
  prometheus::Family<prometheus::Gauge>& state_family_;
  prometheus::Gauge& last_heartbeat_gauge_;
  prometheus::Counter& heartbeats_;
  prometheus::Counter& conflicts_;
  prometheus::Counter& undecodable_;
  prometheus::Family<prometheus::Counter>& errors_family_;
};

// "JOINING", "ACTIVE", ... as dskit prints InstanceState.
const char* StateName(::ring::InstanceState state);

}  // namespace limits::ring
