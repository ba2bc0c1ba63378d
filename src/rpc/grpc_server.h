// GrpcServer: the gRPC server the IngestLimits service (and the zone's) runs in, with grpc.health.v1.Health
// (SERVING while it runs, NOT_SERVING once Stop() begins). Binds host:port, [v6]:port or
// Loki's ":port" (every interface); port 0: the kernel picks, port() says which.
// With TLS settings it speaks TLS (mTLS per client_auth_type), the health service included,
// and re-reads its certificate, key and CA files every tls_reload_interval.
// Stop() closes the listener, lets calls in flight finish (up to the grace), then closes every
// connection at once: an idle client channel no longer holds shutdown for the whole grace.
#pragma once

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "tls/server_tls.h"

namespace limits::rpc {

struct GrpcServerOptions {
  std::string listen;                     // host:port, [v6]:port or :port
  // A request larger than this is refused by gRPC. Above what Loki's limits client can send
  // (dskit grpcclient's grpc-max-send-msg-size, 100 MiB by default), so no push Loki can
  // make is refused for its size.
  int max_receive_bytes = 128 << 20;
  // Calls the service has received and not yet answered; Stop() closes the connections once
  // it is 0 instead of waiting out the grace. Unset: Stop() waits for gRPC's own shutdown.
  std::function<int64_t()> in_flight = nullptr;
  std::string health_service_name = "";   // also reported by the health service, e.g. "proto.IngestLimits"
  tls::ServerTls tls = {};                // checked already (tls::CheckServerTls); off when not enabled()
  // dskit's tls_cipher_suites (Go's names). gRPC reads its cipher list once per process, so
  // every TLS server of a process must be given the same list.
  std::string cipher_suites = "";
  std::chrono::seconds tls_reload_interval{5};
};

// "0.0.0.0:9095" for ":9095" (gRPC treats 0.0.0.0 as every interface, IPv6 included).
std::string GrpcListenAddress(const std::string& listen);

class GrpcServer {
 public:
  // `service` first (its calls are the ones `in_flight` counts), then any others on the same
  // port and credentials (the zone's).
  static Result<std::unique_ptr<GrpcServer>> Start(const GrpcServerOptions& options, grpc::Service& service,
                                                   const std::vector<grpc::Service*>& others = {});
  ~GrpcServer();
  // Health checks answer NOT_SERVING from now on (Stop() begins with it).
  void SetNotServing();
  // Stops accepting calls, lets running ones finish (up to `grace`), then cancels the rest.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  int port() const { return port_; }

 private:
  std::unique_ptr<grpc::Server> server_;
  std::function<int64_t()> in_flight_;
  int port_ = 0;
};

}  // namespace limits::rpc
