// KvClient: the KV store a dskit ring lives in (etcd, memberlist), as the ring lifecycler needs
// it — read the ring value, and change it with compare-and-swap semantics. Values are dskit's
// ring.Desc (src/proto/ring.proto); each backend encodes them as dskit does (ring_codec.h).
// Implementations are thread-safe.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/result.h"
#include "proto/ring.pb.h"

namespace limits::ring {

class KvClient {
 public:
  // What a CAS callback decides: write `desc` as modified, or leave the store untouched.
  enum class CasAction { kWrite, kSkip };
  using CasFn = std::function<Result<CasAction>(::ring::Desc& desc)>;

  virtual ~KvClient() = default;

  // Reads `key`: nullopt when absent. kCorruption when the stored value does not decode (the
  // value is then left alone: never overwritten by a ring that lost its entries).
  virtual Result<std::optional<::ring::Desc>> Get(const std::string& key) = 0;

  // Calls fn with the current value of `key` (empty when absent) and stores what it made of
  // it, so that concurrent writers never lose each other's changes: etcd retries on a
  // version conflict (calling fn again with the newer value); memberlist merges the change
  // into its state by dskit's rules and gossips it. An error from fn is returned unchanged.
  virtual Status Cas(const std::string& key, const CasFn& fn) = 0;

  // Short name for logs and metrics: "etcd", "memberlist".
  virtual const char* name() const = 0;
};

}  // namespace limits::ring
