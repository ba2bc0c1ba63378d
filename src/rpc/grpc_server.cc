#include "rpc/grpc_server.h"

#include <grpcpp/resource_quota.h>

#include "common/log.h"

namespace limits::rpc {

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcServerOptions& options, grpc::Service& service) {
  auto server = std::make_unique<GrpcServer>();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &server->port_);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  grpc::ResourceQuota quota("limitsd");
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);
  builder.RegisterService(&service);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) return Status::Unavailable("grpc: cannot listen on " + options.listen);
  log::Info("rpc", "listening").Kv("address", options.listen).Kv("port", server->port_);
  return server;
}

GrpcServer::~GrpcServer() { Stop(); }

void GrpcServer::Stop(std::chrono::milliseconds grace) {
  if (!server_) return;
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
  server_.reset();
}

}  // namespace limits::rpc
