#include "rpc/grpc_server.h"

#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>

#include "common/log.h"

namespace limits::rpc {

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcServerOptions& options, grpc::Service& service) {
  auto server = std::make_unique<GrpcServer>();
  // grpc.health.v1.Health, which Loki's client pool calls on every instance (a server that
  // does not implement it is dropped and re-dialled). A process-wide switch, read by Build.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &server->port_);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  grpc::ResourceQuota quota("limitsd");
  quota.SetMaxThreads(options.max_threads);
  builder.SetResourceQuota(quota);
  builder.RegisterService(&service);
  server->server_ = builder.BuildAndStart();
  if (!server->server_ || server->port_ == 0) return Status::Unavailable("grpc: cannot listen on " + options.listen);
  // The overall status ("", what Loki's pool asks) is SERVING from the start; the named
  // service answers the same.
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  if (health != nullptr && !options.health_service_name.empty()) {
    health->SetServingStatus(options.health_service_name, true);
  }
  log::Info("rpc", "listening").Kv("address", options.listen).Kv("port", server->port_);
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
  server_->Shutdown(std::chrono::system_clock::now() + grace);
  server_->Wait();
  server_.reset();
}

}  // namespace limits::rpc
