// EtcdKv: the ring's KV store in etcd, over etcd's v3 gRPC API (Range and Txn), with dskit's
// etcd client semantics: CAS reads the key and its version, applies the callback, and writes
// with Txn(If Version(key) == v Then Put); a lost race (another writer in between) calls the
// callback again with the newer value, up to max_cas_retries. A stored value that does not
// decode is never overwritten: Cas and Get return kCorruption. Transport errors are returned
// after trying each endpoint once (the caller — the lifecycler — backs off and retries).
// TLS (server verification, a client certificate, files re-read for rotation) and etcd's
// user/password auth as dskit's etcd client has them. Creating it does not connect: etcd may
// be down at start. Thread-safe.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "proto/etcd_kv.grpc.pb.h"
#include "ring/etcd_endpoint.h"
#include "ring/kv_client.h"
#include "tls/client_tls.h"

namespace limits::ring {

struct EtcdKvOptions {
  // host:port (or http://host:port) of etcd's client URLs; tried in order, sticking to the
  // last one that answered.
  std::vector<std::string> endpoints;
  // Deadline of a call on an endpoint that is not connected (connecting included).
  std::chrono::milliseconds dial_timeout = std::chrono::seconds(10);
  // Deadline of a call on a connected endpoint.
  std::chrono::milliseconds request_timeout = std::chrono::seconds(5);
  // Version conflicts one Cas retries before giving up (dskit: 10).
  int max_cas_retries = 10;
  tls::ClientTls tls;  // dskit kvstore.etcd's tls_* keys
  std::string username = "";  // with password: etcd's Auth.Authenticate, its token on every call
  std::string password = "";
};

class EtcdKv final : public KvClient {
 public:
  static Result<std::unique_ptr<EtcdKv>> Create(const EtcdKvOptions& options);

  Result<std::optional<::ring::Desc>> Get(const std::string& key) override;
  Status Cas(const std::string& key, const CasFn& fn) override;
  const char* name() const override { return "etcd"; }

  // Deletes `key` (tests and tools; the lifecycler never deletes the ring).
  Status Delete(const std::string& key);
  // Raw bytes and version of `key`; nullopt when absent (tests).
  struct Raw {
    std::string value;
    int64_t version = 0;
  };
  Result<std::optional<Raw>> GetRaw(const std::string& key);
  // Unconditional put of raw bytes (tests plant undecodable values with it).
  Status PutRaw(const std::string& key, const std::string& value);

 private:
  struct Endpoint {
    std::string target;  // host:port
    std::shared_ptr<grpc::Channel> channel;
    std::unique_ptr<etcdserverpb::KV::Stub> stub;
    std::unique_ptr<etcdserverpb::Auth::Stub> auth;
  };

  explicit EtcdKv(const EtcdKvOptions& options) : options_(options) {}
  // Runs `call` on the current endpoint, then on each other one while the error is a
  // transport error; sticks to the endpoint that answered.
  template <typename Call>
  Status OnSomeEndpoint(const char* what, const Call& call);
  void SetDeadline(grpc::ClientContext* ctx, Endpoint& e) const;
  // The auth token to send (authenticating on `e` when there is none); "" without a user.
  Result<std::string> Token(Endpoint& e);

  const EtcdKvOptions options_;
  std::vector<Endpoint> endpoints_;
  std::atomic<size_t> current_{0};
  std::mutex token_mu_;
  std::string token_;  // guarded by token_mu_; "" until authenticated, cleared when etcd rejects it
};

}  // namespace limits::ring
