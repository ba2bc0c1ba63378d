// FakeKv: an in-memory KvClient with etcd's CAS semantics (read value and version, call fn,
// commit only if the version is unchanged, else call fn again with the newer value), for
// unit tests of what builds on KvClient. Values are stored encoded (ring_codec.h), so a test
// can plant bytes that do not decode. Faults: Unavailable for the next n calls, a hook that
// runs between a CAS's read and its commit (a concurrent writer). Thread-safe.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ring/kv_client.h"
#include "ring/ring_codec.h"

namespace limits::testing {

class FakeKv final : public ring::KvClient {
 public:
  Result<std::optional<::ring::Desc>> Get(const std::string& key) override {
    std::lock_guard lock(mu_);
    ++calls_;
    if (Status s = TakeFault(); !s.ok()) return s;
    auto it = values_.find(key);
    if (it == values_.end()) return std::optional<::ring::Desc>();
    ASSIGN_OR_RETURN(::ring::Desc desc, ring::DecodeDesc(it->second.bytes));
    return std::optional<::ring::Desc>(std::move(desc));
  }

  Status Cas(const std::string& key, const CasFn& fn) override {
    std::unique_lock lock(mu_);
    ++calls_;
    if (Status s = TakeFault(); !s.ok()) return s;
    for (int attempt = 0; attempt < 10; ++attempt) {
      ::ring::Desc desc;
      int64_t version = 0;
      if (auto it = values_.find(key); it != values_.end()) {
        ASSIGN_OR_RETURN(desc, ring::DecodeDesc(it->second.bytes));
        version = it->second.version;
      }
      lock.unlock();
      Result<CasAction> action = fn(desc);
      lock.lock();
      if (!action.ok()) return action.status();
      if (*action == CasAction::kSkip) return Status::OK();
      if (before_commit_) {
        auto hook = std::move(before_commit_);
        before_commit_ = nullptr;
        lock.unlock();
        hook();
        lock.lock();
      }
      const int64_t now_version = values_.count(key) ? values_[key].version : 0;
      if (now_version != version) {
        ++conflicts_;
        continue;
      }
      PutLocked(key, ring::EncodeDesc(desc));
      return Status::OK();
    }
    return Status::Unavailable("fake kv: too many CAS conflicts on " + key);
  }

  const char* name() const override { return "fake"; }

  // --- test controls ---
  void PutRaw(const std::string& key, const std::string& bytes) {
    std::lock_guard lock(mu_);
    PutLocked(key, bytes);
  }
  void Put(const std::string& key, const ::ring::Desc& desc) { PutRaw(key, ring::EncodeDesc(desc)); }
  void Erase(const std::string& key) {
    std::lock_guard lock(mu_);
    values_.erase(key);
  }
  std::optional<std::string> Raw(const std::string& key) const {
    std::lock_guard lock(mu_);
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    return it->second.bytes;
  }
  // The decoded value; an empty Desc when absent or undecodable.
  ::ring::Desc Value(const std::string& key) const {
    std::optional<std::string> raw = Raw(key);
    if (!raw) return {};
    Result<::ring::Desc> d = ring::DecodeDesc(*raw);
    return d.ok() ? *d : ::ring::Desc();
  }
  // Every value committed, in order (what a watcher would have seen).
  std::vector<::ring::Desc> History(const std::string& key) const {
    std::lock_guard lock(mu_);
    std::vector<::ring::Desc> out;
    for (const auto& [k, bytes] : history_) {
      if (k != key) continue;
      Result<::ring::Desc> d = ring::DecodeDesc(bytes);
      if (d.ok()) out.push_back(*d);
    }
    return out;
  }
  void FailNext(int n, Status error = Status::Unavailable("fake kv: connection refused")) {
    std::lock_guard lock(mu_);
    fail_next_ = n;
    fault_ = std::move(error);
  }
  // Runs once, inside the next CAS, after fn and before the commit.
  void BeforeNextCommit(std::function<void()> hook) {
    std::lock_guard lock(mu_);
    before_commit_ = std::move(hook);
  }
  int conflicts() const {
    std::lock_guard lock(mu_);
    return conflicts_;
  }
  int calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  struct Entry {
    std::string bytes;
    int64_t version = 0;
  };

  void PutLocked(const std::string& key, std::string bytes) {
    Entry& e = values_[key];
    e.bytes = std::move(bytes);
    ++e.version;
    history_.emplace_back(key, e.bytes);
  }

  Status TakeFault() {
    if (fail_next_ <= 0) return Status::OK();
    --fail_next_;
    return fault_;
  }

  mutable std::mutex mu_;
  std::map<std::string, Entry> values_;
  std::vector<std::pair<std::string, std::string>> history_;
  std::function<void()> before_commit_;
  int fail_next_ = 0;
  Status fault_;
  int conflicts_ = 0;
  int calls_ = 0;
};

}  // namespace limits::testing
