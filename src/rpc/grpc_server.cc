#include "rpc/grpc_server.h"

#include <grpc/grpc.h>
#include <grpcpp/health_check_service_interface.h>

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

Result<std::unique_ptr<GrpcServer>> GrpcServer::Start(const GrpcServerOptions& options, grpc::Service& service) {
  if (Result<ListenAddress> a = ParseListenAddress(options.listen); !a.ok()) {
    return Status::InvalidArgument("grpc: " + a.status().message());
  }
  auto server = std::make_unique<GrpcServer>();
  server->in_flight_ = options.in_flight;
  // grpc.health.v1.Health, which Loki's client pool calls on every instance (a server that
  // does not implement it is dropped and re-dialled). A process-wide switch, read by Build.
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(GrpcListenAddress(options.listen), grpc::InsecureServerCredentials(), &server->port_);
  builder.SetMaxReceiveMessageSize(options.max_receive_bytes);
  // gRPC sets SO_REUSEPORT by default: a second process on the same port then binds too and
  // the kernel splits calls between the two, silently. One port, one node.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // No ResourceQuota thread cap: the service runs on the callback API and queues calls for its
  // own handler threads (common/task_pool.h), so there is no sync thread pool to exhaust.
  builder.RegisterService(&service);
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
