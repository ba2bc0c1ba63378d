#include "ring/etcd_kv.h"


#include <algorithm>
#include <limits>

#include "ring/ring_codec.h"
#include "tls/client_tls.h"

namespace limits::ring {
namespace {

bool IsTransportError(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE || s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

std::string GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    default: return "code " + std::to_string(static_cast<int>(code));
  }
}

// A token etcd no longer takes (expired, or etcd restarted): authenticate again.
bool IsTokenRejected(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAUTHENTICATED ||
         s.error_message().find("invalid auth token") != std::string::npos;
}

}  // namespace

Result<std::unique_ptr<EtcdKv>> EtcdKv::Create(const EtcdKvOptions& options) {
  if (options.endpoints.empty()) return Status::InvalidArgument("etcd: no endpoints");
  auto kv = std::unique_ptr<EtcdKv>(new EtcdKv(options));
  for (const std::string& configured : options.endpoints) {
    ASSIGN_OR_RETURN(std::string target, ParseEtcdEndpoint(configured));
    grpc::ChannelArguments args;
    // Reconnect soon after etcd comes back (gRPC's default backoff grows to 2 minutes).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 5000);
    // As dskit: keepalive pings find a dead connection (etcd host gone, partition).
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10000);
    // gRPC takes an int of milliseconds; a dial timeout of weeks (the key allows up to 2^32-1 s)
    // means "never", not a wrapped negative.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                static_cast<int>(std::min<int64_t>(2 * options.dial_timeout.count(), std::numeric_limits<int>::max())));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    if (!options.tls.server_name.empty()) args.SetSslTargetNameOverride(options.tls.server_name);
    Endpoint ep;
    ep.target = target;
    ep.channel = grpc::CreateCustomChannel(target, tls::ChannelCredentials(options.tls), args);
    ep.stub = etcdserverpb::KV::NewStub(ep.channel);
    ep.auth = etcdserverpb::Auth::NewStub(ep.channel);
    kv->endpoints_.push_back(std::move(ep));
  }
  return kv;
}

void EtcdKv::SetDeadline(grpc::ClientContext* ctx, Endpoint& e) const {
  const bool connected = e.channel->GetState(/*try_to_connect=*/true) == GRPC_CHANNEL_READY;
  ctx->set_deadline(std::chrono::system_clock::now() + (connected ? options_.request_timeout : options_.dial_timeout));
}

Result<std::string> EtcdKv::Token(Endpoint& e) {
  if (options_.username.empty()) return std::string();
  std::lock_guard lock(token_mu_);
  if (!token_.empty()) return token_;
  etcdserverpb::AuthenticateRequest req;
  req.set_name(options_.username);
  req.set_password(options_.password);
  etcdserverpb::AuthenticateResponse resp;
  grpc::ClientContext ctx;
  SetDeadline(&ctx, e);
  const grpc::Status s = e.auth->Authenticate(&ctx, req, &resp);
  if (!s.ok()) {
    return Status::Unavailable("etcd " + e.target + " Authenticate as \"" + options_.username +
                               "\" (ring.etcd_username / ring.etcd_password): " + GrpcCodeName(s.error_code()) + " " +
                               s.error_message());
  }
  token_ = resp.token();
  return token_;
}

template <typename Call>
Status EtcdKv::OnSomeEndpoint(const char* what, const Call& call) {
  const size_t n = endpoints_.size();
  const size_t first = current_.load();
  std::string errors;
  for (size_t i = 0; i < n; ++i) {
    const size_t idx = (first + i) % n;
    Endpoint& e = endpoints_[idx];
    grpc::Status s;
    // A token etcd rejects is renewed once.
    for (int attempt = 0; attempt < 2; ++attempt) {
      Result<std::string> token = Token(e);
      if (!token.ok()) {
        s = grpc::Status(grpc::StatusCode::UNAVAILABLE, token.status().message());
        break;
      }
      grpc::ClientContext ctx;
      SetDeadline(&ctx, e);
      if (!token->empty()) ctx.AddMetadata("token", *token);
      s = call(*e.stub, &ctx);
      if (token->empty() || !IsTokenRejected(s)) break;
      std::lock_guard lock(token_mu_);
      if (token_ == *token) token_.clear();
    }
    if (s.ok()) {
      current_.store(idx);
      return Status::OK();
    }
    const std::string err = "etcd " + e.target + " " + what + ": " + GrpcCodeName(s.error_code()) + " " + s.error_message();
    if (!IsTransportError(s)) return Status::Unavailable(err);
    errors += (errors.empty() ? "" : "; ") + err;
  }
  return Status::Unavailable(errors);
}

Result<std::optional<EtcdKv::Raw>> EtcdKv::GetRaw(const std::string& key) {
  etcdserverpb::RangeRequest req;
  req.set_key(key);
  etcdserverpb::RangeResponse resp;
  RETURN_IF_ERROR(OnSomeEndpoint("Range", [&](etcdserverpb::KV::Stub& stub, grpc::ClientContext* ctx) {
    return stub.Range(ctx, req, &resp);
  }));
  if (resp.kvs_size() == 0) return std::optional<Raw>();
  if (resp.kvs_size() != 1) {
    return Status::Internal("etcd Range " + key + ": " + std::to_string(resp.kvs_size()) + " values, expected 1");
  }
  return std::optional<Raw>(Raw{resp.kvs(0).value(), resp.kvs(0).version()});
}

Result<std::optional<::ring::Desc>> EtcdKv::Get(const std::string& key) {
  ASSIGN_OR_RETURN(std::optional<Raw> raw, GetRaw(key));
  if (!raw) return std::optional<::ring::Desc>();
  Result<::ring::Desc> desc = DecodeDesc(raw->value);
  if (!desc.ok()) return desc.status().Prefixed("etcd key " + key);
  return std::optional<::ring::Desc>(std::move(*desc));
}

Status EtcdKv::Cas(const std::string& key, const CasFn& fn) {
  for (int attempt = 0; attempt < options_.max_cas_retries; ++attempt) {
    ASSIGN_OR_RETURN(std::optional<Raw> raw, GetRaw(key));
    ::ring::Desc desc;
    int64_t version = 0;  // etcd's version of an absent key
    if (raw) {
      Result<::ring::Desc> decoded = DecodeDesc(raw->value);
      // Never replace what we cannot read: it may hold every other instance's entry.
      if (!decoded.ok()) return decoded.status().Prefixed("etcd key " + key);
      desc = std::move(*decoded);
      version = raw->version;
    }
    ASSIGN_OR_RETURN(KvClient::CasAction action, fn(desc));
    if (action == CasAction::kSkip) return Status::OK();

    etcdserverpb::TxnRequest txn;
    etcdserverpb::Compare* cmp = txn.add_compare();
    cmp->set_result(etcdserverpb::Compare::EQUAL);
    cmp->set_target(etcdserverpb::Compare::VERSION);
    cmp->set_key(key);
    cmp->set_version(version);
    etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
    put->set_key(key);
    put->set_value(EncodeDesc(desc));
    etcdserverpb::TxnResponse resp;
    RETURN_IF_ERROR(OnSomeEndpoint("Txn", [&](etcdserverpb::KV::Stub& stub, grpc::ClientContext* ctx) {
      return stub.Txn(ctx, txn, &resp);
    }));
    if (resp.succeeded()) return Status::OK();
    // Another writer changed the key since our read: read again and re-apply.
  }
  return Status::Unavailable("etcd CAS " + key + ": still conflicting after " +
                             std::to_string(options_.max_cas_retries) + " attempts");
}

Status EtcdKv::Delete(const std::string& key) {
  etcdserverpb::DeleteRangeRequest req;
  req.set_key(key);
  etcdserverpb::DeleteRangeResponse resp;
  return OnSomeEndpoint("DeleteRange", [&](etcdserverpb::KV::Stub& stub, grpc::ClientContext* ctx) {
    return stub.DeleteRange(ctx, req, &resp);
  });
}

Status EtcdKv::PutRaw(const std::string& key, const std::string& value) {
  etcdserverpb::TxnRequest txn;
  etcdserverpb::PutRequest* put = txn.add_success()->mutable_request_put();
  put->set_key(key);
  put->set_value(value);
  etcdserverpb::TxnResponse resp;
  return OnSomeEndpoint("Txn", [&](etcdserverpb::KV::Stub& stub, grpc::ClientContext* ctx) {
    return stub.Txn(ctx, txn, &resp);
  });
}

}  // namespace limits::ring
