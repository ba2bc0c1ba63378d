#include "ring/lifecycler.h"

#include <algorithm>
#include <unordered_set>

#include "common/log.h"
#include "ring/ring_members.h"

namespace limits::ring {
namespace {

constexpr ::ring::InstanceState kStates[] = {::ring::JOINING, ::ring::ACTIVE, ::ring::LEAVING};

uint64_t Seed(uint64_t configured) {
  if (configured != 0) return configured;
  std::random_device rd;
  return (static_cast<uint64_t>(rd()) << 32) ^ rd();
}

}  // namespace

const char* StateName(::ring::InstanceState state) {
  switch (state) {
    case ::ring::ACTIVE: return "ACTIVE";
    case ::ring::LEAVING: return "LEAVING";
    case ::ring::PENDING: return "PENDING";
    case ::ring::JOINING: return "JOINING";
    case ::ring::LEFT: return "LEFT";
    default: return "UNKNOWN";
  }
}

const char* Lifecycler::OpName(Op op) {
  switch (op) {
    case Op::kRegister: return "register";
    case Op::kHeartbeat: return "heartbeat";
    case Op::kLeave: return "leave";
    case Op::kUnregister: return "unregister";
  }
  return "unknown";
}

Lifecycler::Lifecycler(KvClient& kv, const Clock& clock, LifecyclerOptions options, prometheus::Registry& registry)
    : kv_(kv),
      clock_(clock),
      options_(std::move(options)),
      rng_(Seed(options_.token_seed)),
      registered_gauge_(prometheus::BuildGauge()
                            .Name("limitsd_ring_registered")
                            .Help("1 once this instance registered in the ring (latched), 0 before and after "
                                  "its removal.")
                            .Register(registry)
                            .Add({})),
      state_family_(prometheus::BuildGauge()
                        .Name("limitsd_ring_state")
                        .Help("1 for the state this instance last wrote to the ring (JOINING, ACTIVE, LEAVING).")
                        .Register(registry)),
      last_heartbeat_gauge_(prometheus::BuildGauge()
                                .Name("limitsd_ring_last_heartbeat_timestamp_seconds")
                                .Help("Unix time of the last successful write of this instance's ring entry.")
                                .Register(registry)
                                .Add({})),
      heartbeats_(prometheus::BuildCounter()
                      .Name("limitsd_ring_heartbeats_total")
                      .Help("Successful heartbeats of this instance's ring entry.")
                      .Register(registry)
                      .Add({})),
      conflicts_(prometheus::BuildCounter()
                     .Name("limitsd_ring_cas_conflicts_total")
                     .Help("Compare-and-swap attempts that lost to a concurrent writer and were retried.")
                     .Register(registry)
                     .Add({})),
      undecodable_(prometheus::BuildCounter()
                       .Name("limitsd_ring_undecodable_values_total")
                       .Help("Ring operations refused because the stored ring value does not decode (it is "
                             "left untouched).")
                       .Register(registry)
                       .Add({})),
      errors_family_(prometheus::BuildCounter()
                         .Name("limitsd_ring_errors_total")
                         .Help("Failed ring operations by operation (register, heartbeat, leave, unregister).")
                         .Register(registry)) {
  for (::ring::InstanceState s : kStates) state_family_.Add({{"state", StateName(s)}}).Set(0);
  for (Op op : {Op::kRegister, Op::kHeartbeat, Op::kLeave, Op::kUnregister}) errors_family_.Add({{"op", OpName(op)}});
}

Lifecycler::~Lifecycler() { Stop(); }

void Lifecycler::Start() {
  log::Info("ring", "joining the ring")
      .Kv("store", kv_.name())
      .Kv("key", options_.ring_key)
      .Kv("instance", options_.instance_id)
      .Kv("addr", options_.addr)
      .Kv("zone", options_.zone);
  thread_ = std::thread([this] { Run(); });
}

void Lifecycler::SetServing() {
  {
    std::lock_guard lock(mu_);
    serving_ = true;
    wake_ = true;
  }
  cv_.notify_all();
}

void Lifecycler::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

LifecyclerStatus Lifecycler::status() const {
  std::lock_guard lock(status_mu_);
  return status_;
}

std::vector<uint32_t> Lifecycler::tokens() const {
  std::lock_guard lock(status_mu_);
  return tokens_copy_;
}

void Lifecycler::Run() {
  const std::chrono::milliseconds cap = std::min(options_.max_backoff, options_.heartbeat_period);
  std::chrono::milliseconds backoff = std::min(options_.min_backoff, cap);
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    const bool registered = status().registered;
    Status s = registered ? Heartbeat() : Register();
    lock.lock();
    std::chrono::milliseconds wait = options_.heartbeat_period;
    if (!s.ok()) {
      wait = backoff;
      backoff = std::min(backoff * 2, cap);
    } else {
      backoff = std::min(options_.min_backoff, cap);
      // Just registered JOINING, or told to serve meanwhile: write the new state now.
      if (serving_ && status().state != ::ring::ACTIVE) wait = 0ms;
    }
    cv_.wait_for(lock, wait, [this] { return stop_ || wake_; });
    wake_ = false;
  }
  lock.unlock();
  if (!status().registered) return;
  // Leave, retrying while the KV fails, for at most stop_timeout.
  const auto deadline = std::chrono::steady_clock::now() + options_.stop_timeout;
  backoff = std::min(options_.min_backoff, cap);
  while (true) {
    Status s = Leave();
    if (s.ok()) return;
    if (std::chrono::steady_clock::now() + backoff > deadline) {
      log::Warn("ring", "gave up leaving the ring; the entry stays until its heartbeat times out")
          .Kv("instance", options_.instance_id)
          .Kv("error", s.ToString());
      return;
    }
    std::this_thread::sleep_for(backoff);  // shutdown path: nothing else to wait for
    backoff = std::min(backoff * 2, cap);
  }
}

std::vector<uint32_t> Lifecycler::PickTokens(const ::ring::Desc& desc) const {
  std::unordered_set<uint32_t> taken;
  for (const auto& [id, other] : desc.ingesters()) {
    if (id == options_.instance_id) continue;
    taken.insert(other.tokens().begin(), other.tokens().end());
  }
  std::vector<uint32_t> mine;
  std::unordered_set<uint32_t> seen;
  if (auto it = desc.ingesters().find(options_.instance_id); it != desc.ingesters().end()) {
    for (uint32_t t : it->second.tokens()) {
      if (!taken.count(t) && seen.insert(t).second) mine.push_back(t);
    }
  }
  const size_t want = static_cast<size_t>(std::max(options_.num_tokens, 0));
  if (mine.size() > want) {
    std::shuffle(mine.begin(), mine.end(), rng_);
    mine.resize(want);
  }
  while (mine.size() < want) {
    const auto t = static_cast<uint32_t>(rng_());
    if (!taken.count(t) && seen.insert(t).second) mine.push_back(t);
  }
  std::sort(mine.begin(), mine.end());
  return mine;
}

void Lifecycler::FillEntry(::ring::InstanceDesc* entry, ::ring::InstanceState state, int64_t now_s,
                           const std::vector<uint32_t>& tokens, int64_t registered_at_s) const {
  // Only the fields the lifecycler owns (and its own key of `versions`); anything else
  // (read-only mode set by an operator, other versions, fields of a newer dskit) is kept as
  // found.
  entry->set_id(options_.instance_id);
  entry->set_addr(options_.addr);
  entry->set_zone(options_.zone);
  entry->set_state(state);
  entry->set_timestamp(now_s);
  entry->set_registered_timestamp(registered_at_s);
  entry->clear_tokens();
  for (uint32_t t : tokens) entry->add_tokens(t);
  if (options_.zone_protocol != 0) {
    (*entry->mutable_versions())[kZoneProtocolKey] = options_.zone_protocol;
  } else {
    entry->mutable_versions()->erase(kZoneProtocolKey);
  }
}

Status Lifecycler::CasOurEntry(Op op, const KvClient::CasFn& fn) {
  int calls = 0;
  Status s = kv_.Cas(options_.ring_key, [&](::ring::Desc& desc) {
    ++calls;
    return fn(desc);
  });
  if (calls > 1) {
    conflicts_.Increment(calls - 1);
    std::lock_guard lock(status_mu_);
    status_.cas_conflicts += static_cast<uint64_t>(calls - 1);
  }
  Report(op, s);
  return s;
}

void Lifecycler::Report(Op op, const Status& s) {
  if (s.ok()) {
    if (failing_) {
      log::Info("ring", "ring KV store works again").Kv("op", OpName(op)).Kv("store", kv_.name());
    }
    failing_ = false;
    failing_code_ = StatusCode::kOk;
    stale_warned_ = false;
    const int64_t now_ms = clock_.NowMillis();
    last_heartbeat_gauge_.Set(static_cast<double>(now_ms) / 1000.0);
    std::lock_guard lock(status_mu_);
    status_.last_success_ms = now_ms;
    status_.last_error.clear();
    return;
  }
  errors_family_.Add({{"op", OpName(op)}}).Increment();
  if (s.IsCorruption()) undecodable_.Increment();
  if (!failing_ || failing_code_ != s.code()) {
    auto line = log::Warn("ring", s.IsCorruption() ? "the ring value in the KV store does not decode; leaving it untouched and retrying"
                                                   : "ring KV store operation failed; the node keeps serving and retries with backoff");
    line.Kv("op", OpName(op)).Kv("store", kv_.name()).Kv("key", options_.ring_key).Kv("error", s.ToString());
  }
  failing_ = true;
  failing_code_ = s.code();
  LifecyclerStatus st;
  {
    std::lock_guard lock(status_mu_);
    status_.last_error = s.ToString();
    st = status_;
  }
  if (st.registered && !stale_warned_ && clock_.NowMillis() - st.last_success_ms > options_.heartbeat_timeout.count()) {
    stale_warned_ = true;
    log::Error("ring", "our heartbeat in the ring is older than heartbeat_timeout: Loki's frontends now skip this instance")
        .Kv("instance", options_.instance_id)
        .Kv("last_success_ms", st.last_success_ms)
        .Kv("heartbeat_timeout_s", options_.heartbeat_timeout.count() / 1000.0);
  }
}

void Lifecycler::SetWrittenState(::ring::InstanceState state, bool registered) {
  {
    std::lock_guard lock(status_mu_);
    status_.state = state;
    status_.registered = registered;
    tokens_copy_ = registered ? tokens_ : std::vector<uint32_t>{};
  }
  registered_gauge_.Set(registered ? 1 : 0);
  for (::ring::InstanceState s : kStates) {
    state_family_.Add({{"state", StateName(s)}}).Set(registered && s == state ? 1 : 0);
  }
}

Status Lifecycler::Register() {
  std::lock_guard op_lock(op_mu_);
  std::vector<uint32_t> picked;
  int64_t registered_at = 0;
  bool existed = false;
  size_t reused = 0;
  Status s = CasOurEntry(Op::kRegister, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    // Read in the callback, as dskit does: a retry writes the time of the retry.
    const int64_t now_s = clock_.NowMillis() / 1000;
      auto& ingesters = *desc.mutable_ingesters();
    auto it = ingesters.find(options_.instance_id);
    existed = it != ingesters.end();
    reused = existed ? static_cast<size_t>(it->second.tokens_size()) : 0;
    // A restart keeps its registration time and tokens (dskit honours the previous value).
    registered_at = existed ? it->second.registered_timestamp() : now_s;
    picked = tokens_.empty() ? PickTokens(desc) : tokens_;
    FillEntry(&ingesters[options_.instance_id], ::ring::JOINING, now_s, picked, registered_at);
    return KvClient::CasAction::kWrite;
  });
  if (!s.ok()) return s.Prefixed("register " + options_.instance_id);
  tokens_ = std::move(picked);
  registered_at_s_ = registered_at;
  SetWrittenState(::ring::JOINING, true);
  log::Info("ring", "registered in the ring")
      .Kv("instance", options_.instance_id)
      .Kv("state", "JOINING")
      .Kv("tokens", tokens_.size())
      .Kv("found_existing_entry", existed)
      .Kv("existing_tokens", reused)
      .Kv("registered_timestamp", registered_at_s_);
  return Status::OK();
}

Status Lifecycler::Heartbeat() {
  std::lock_guard op_lock(op_mu_);
  if (!status().registered) return Status::FailedPrecondition("heartbeat of an instance not registered");
  bool serving;
  {
    std::lock_guard lock(mu_);
    serving = serving_;
  }
  const ::ring::InstanceState prev = status().state;
  const ::ring::InstanceState state = serving ? ::ring::ACTIVE : (prev == ::ring::PENDING ? ::ring::JOINING : prev);
  bool readded = false;
  int64_t new_registered_at = registered_at_s_;
  Status s = CasOurEntry(Op::kHeartbeat, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    // Read in the callback, as dskit does: a retry writes the time of the retry.
    const int64_t now_s = clock_.NowMillis() / 1000;
      auto& ingesters = *desc.mutable_ingesters();
    readded = ingesters.find(options_.instance_id) == ingesters.end();
    // The entry vanished (KV reset, or removed by an operator): register again "now", as
    // dskit does, so shuffle-sharding readers see a new instance.
    new_registered_at = readded ? now_s : registered_at_s_;
    FillEntry(&ingesters[options_.instance_id], state, now_s, tokens_, new_registered_at);
    return KvClient::CasAction::kWrite;
  });
  if (!s.ok()) return s.Prefixed("heartbeat " + options_.instance_id);
  registered_at_s_ = new_registered_at;
  if (readded) {
    log::Warn("ring", "our entry was missing from the ring (KV store reset?); registered it again")
        .Kv("instance", options_.instance_id);
  }
  if (state != prev) {
    log::Info("ring", "changed state in the ring").Kv("from", StateName(prev)).Kv("to", StateName(state));
  }
  SetWrittenState(state, true);
  heartbeats_.Increment();
  return Status::OK();
}

Status Lifecycler::Leave() {
  std::lock_guard op_lock(op_mu_);
  bool missing = false;
  Status s = CasOurEntry(Op::kLeave, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    // Read in the callback, as dskit does: a retry writes the time of the retry.
    const int64_t now_s = clock_.NowMillis() / 1000;
      auto& ingesters = *desc.mutable_ingesters();
    auto it = ingesters.find(options_.instance_id);
    missing = it == ingesters.end();
    if (missing) return KvClient::CasAction::kSkip;
    FillEntry(&it->second, ::ring::LEAVING, now_s, tokens_, registered_at_s_);
    return KvClient::CasAction::kWrite;
  });
  if (!s.ok()) return s.Prefixed("leave " + options_.instance_id);
  if (missing) {
    SetWrittenState(::ring::LEAVING, false);
    log::Info("ring", "left the ring (our entry was already gone)").Kv("instance", options_.instance_id);
    return Status::OK();
  }
  SetWrittenState(::ring::LEAVING, true);
  log::Info("ring", "changed state in the ring").Kv("to", "LEAVING");
  if (!options_.unregister_on_shutdown) {
    log::Info("ring", "keeping the instance in the ring as LEAVING (unregister_on_shutdown = false)")
        .Kv("instance", options_.instance_id);
    return Status::OK();
  }
  s = CasOurEntry(Op::kUnregister, [&](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    if (desc.mutable_ingesters()->erase(options_.instance_id) == 0) return KvClient::CasAction::kSkip;
    return KvClient::CasAction::kWrite;
  });
  if (!s.ok()) return s.Prefixed("unregister " + options_.instance_id);
  SetWrittenState(::ring::LEAVING, false);
  log::Info("ring", "instance removed from the ring").Kv("instance", options_.instance_id);
  return Status::OK();
}

}  // namespace limits::ring
