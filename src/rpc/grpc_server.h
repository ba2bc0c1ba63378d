// GrpcServer: the gRPC server the IngestLimits service runs in, with grpc.health.v1.Health
// (SERVING while it runs, NOT_SERVING once Stop() begins). Binds host:port (port 0: the
// kernel picks; port() says which).
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/result.h"

namespace limits::rpc {

struct GrpcServerOptions {
  std::string listen;                     // host:port
  int max_receive_bytes = 64 << 20;       // a request larger than this is refused by gRPC
  int max_threads = 32;                   // handler threads
  std::string health_service_name;        // also reported by the health service, e.g. "proto.IngestLimits"
};

class GrpcServer {
 public:
  static Result<std::unique_ptr<GrpcServer>> Start(const GrpcServerOptions& options, grpc::Service& service);
  ~GrpcServer();
  // Health checks answer NOT_SERVING from now on (Stop() begins with it).
  void SetNotServing();
  // Stops accepting calls, lets running ones finish (up to `grace`), then cancels the rest.
  void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));
  int port() const { return port_; }

 private:
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace limits::rpc
