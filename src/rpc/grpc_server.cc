#include "rpc/grpc_server.h"

#include <grpc/grpc.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include <cstdlib>
#include <mutex>

#include <atomic>
#include <thread>

#include "common/listen_address.h"
#include "common/log.h"

namespace limits::rpc {

std::string GrpcListenAddress(const std::string& listen) {
  Result<ListenAddress> a = ParseListenAddress(listen);
  if (a.ok() && a->host.empty()) return "0.0.0.0:" + std::to_string(a->port);
  return listen;
}

namespace {

grpc_ssl_client_certificate_request_type RequestType(tls::ClientAuth auth) {
  switch (auth) {
    case tls::ClientAuth::kNoClientCert: return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    case tls::ClientAuth::kRequestClientCert: return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY;
    case tls::ClientAuth::kRequireAnyClientCert: return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_BUT_DONT_VERIFY;
    case tls::ClientAuth::kVerifyClientCertIfGiven: return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    case tls::ClientAuth::kRequireAndVerifyClientCert:
      return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
}

// gRPC takes its TLS 1.2 cipher list from GRPC_SSL_CIPHER_SUITES, read once, when the first
// TLS credentials of the process are made: set it before, and refuse a second, different list.
Status SetCipherList(const std::string& go_names) {
  static std::mutex mu;
  static std::string set;  // guarded by mu; the first TLS server's list
  static bool done = false;
  std::lock_guard lock(mu);
  if (done) {
    if (go_names != set) return Status::InvalidArgument("grpc: tls_cipher_suites differ between servers of one process");
    return Status::OK();
  }
  if (!go_names.empty()) {
    Result<std::string> list = tls::OpenSslCipherList(go_names);
    if (!list.ok()) return list.status();
    if (!list->empty()) setenv("GRPC_SSL_CIPHER_SUITES", list->c_str(), 1);
  }
  set = go_names;
  done = true;
  return Status::OK();
}

Result<std::shared_ptr<grpc::ServerCredentials>> Credentials(const GrpcServerOptions& o) {
  if (!o.tls.enabled()) return grpc::InsecureServerCredentials();
  Result<tls::ClientAuth> auth = tls::ParseClientAuth(o.tls.client_auth_type);
  if (!auth.ok()) return auth.status();
  if (Status s = SetCipherList(o.cipher_suites); !s.ok()) return s;
  const auto interval = static_cast<unsigned int>(std::max<int64_t>(1, o.tls_reload_interval.count()));
  // Re-reads the files every interval; a key that does not match its certificate, or a file
  // caught half-written, is not taken: the last good pair stays.
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
  if (o.tls.client_ca_file.empty()) {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(o.tls.key_file, o.tls.cert_file,
                                                                                      interval);
  } else {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
        o.tls.key_file, o.tls.cert_file, o.tls.client_ca_file, interval);
  }
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!o.tls.client_ca_file.empty()) options.watch_root_certs();
  options.set_cert_request_type(RequestType(*auth));
  return grpc::experimental::TlsServerCredentials(options);
}

}  // namespace

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcServerOptions& options, grpc::Service& service,
                                                   const std::vector<grpc::Service*>& others) {
  if (Result<ListenAddress> a = ParseListenAddress(options.listen); !a.ok()) {
    return Status::InvalidArgument("grpc: " + a.status().message());
  }
  Result<std::shared_ptr<grpc::ServerCredentials>> credentials = Credentials(options);
  if (!credentials.ok()) return Status::InvalidArgument("grpc: " + credentials.status().message());
  auto server = std::make_unique<GrpcServer>();
  server->in_flight_ = options.in_flight;
  // grpc.health.v1.Health, which Loki's client pool calls on every instance (a server that
  // does not implement it is dropped and re-dialled). A process-wide switch, read by Build.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(GrpcListenAddress(options.listen), *credentials, &server->port_);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  // gRPC sets SO_REUSEPORT by default: a second process on the same port then binds too and
  // the kernel splits calls between the two, silently. One port, one node.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // No ResourceQuota thread cap: the service runs on the callback API and queues calls for its
  // own handler threads (common/task_pool.h). The zone's service is synchronous: a few calls
  // a second from each peer, on gRPC's sync pool, apart from Loki's.
  builder.RegisterService(&service);
  for (grpc::Service* other : others) builder.RegisterService(other);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) {
    return Status::Unavailable("grpc: cannot listen on " + options.listen + " (in use by another process, or not an "
                               "address of this host)");
  }
  // The overall status ("", what Loki's pool asks) is SERVING from the start; the named
  // service answers the same.
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  if (health != nullptr && !options.health_service_name.empty()) {
    health->SetServingStatus(options.health_service_name, true);
  }
  log::Info("rpc", "listening")
      .Kv("address", options.listen)
      .Kv("port", server->port_)
      .Kv("tls", options.tls.enabled())
      .Kv("client_auth", options.tls.enabled() ? tls::ClientAuthName(*tls::ParseClientAuth(options.tls.client_auth_type))
                                               : "none");
  return server;
}

GrpcServer::~GrpcServer() { Stop(); }

void GrpcServer::SetNotServing() {
  if (!server_) return;
  if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) health->SetServingStatus(false);
}

void GrpcServer::Stop(std::chrono::milliseconds grace) {
  if (!server_) return;
  SetNotServing();  // during the grace period too
  const auto started = std::chrono::steady_clock::now();
  // gRPC's shutdown closes the listener and waits until every call is done *and every
  // connection is closed*: an idle client channel holds it until the deadline. So, while it
  // waits, close the connections ourselves once no call of ours is in flight. Cancelling
  // before the shutdown has begun only drops connections it would drop anyway; repeating
  // until it returns covers that race.
  std::atomic<bool> done{false};
  std::thread closer;
  if (in_flight_) {
    closer = std::thread([this, &done, started, grace] {
      while (!done.load(std::memory_order_acquire) && std::chrono::steady_clock::now() - started < grace) {
        if (in_flight_() == 0) grpc_server_cancel_all_calls(server_->c_server());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    });
  }
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  done.store(true, std::memory_order_release);
  if (closer.joinable()) closer.join();
  server_->Wait();
  server_.reset();
  log::Info("rpc", "stopped")
      .Kv("ms", std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count());
}

}  // namespace limits::rpc
