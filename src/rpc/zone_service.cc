#include "rpc/zone_service.h"

#include <exception>

#include "rpc/ingest_limits_service.h"

namespace limits::rpc {
namespace {
constexpr const char* kMethods[] = {"Exchange", "Direct"};
enum Method { kExchange = 0, kDirect = 1 };

template <typename Fn>
grpc::Status Guarded(Fn&& fn) {
  try {
    return fn();
  } catch (const std::exception& e) {
    return {grpc::INTERNAL, std::string("zone: ") + e.what()};
  }
}
}  // namespace

ZoneService::ZoneService(zone::ZoneHandler& handler, int32_t num_partitions, prometheus::Registry& registry)
    : handler_(handler),
      num_partitions_(num_partitions),
      requests_(prometheus::BuildCounter()
                    .Name("limitsd_zone_requests_total")
                    .Help("Zone calls this node answered (Exchange as a home, Direct as a member), by gRPC code.")
                    .Register(registry)) {}

grpc::Status ZoneService::Counted(int method, grpc::Status status) {
  requests_.Add({{"method", kMethods[method]}, {"code", std::to_string(static_cast<int>(status.error_code()))}})
      .Increment();
  return status;
}

grpc::Status ZoneService::Exchange(grpc::ServerContext* /*context*/, const wire::ExchangeRequest* request,
                                   wire::ExchangeAnswer* response) {
  return Counted(kExchange, Guarded([&]() -> grpc::Status {
                   Result<zone::ExchangeRequest> decoded = Decode(*request, num_partitions_);
                   if (!decoded.ok()) return ToGrpc(decoded.status());
                   Result<zone::ExchangeAnswer> answer = handler_.Exchange(*decoded);
                   if (!answer.ok()) return ToGrpc(answer.status());
                   Encode(*answer, response);
                   return grpc::Status::OK;
                 }));
}

grpc::Status ZoneService::Direct(grpc::ServerContext* /*context*/, const wire::DirectRequest* request,
                                 wire::DirectAnswer* response) {
  return Counted(kDirect, Guarded([&]() -> grpc::Status {
                   Result<DirectRequest> decoded = Decode(*request);
                   if (!decoded.ok()) return ToGrpc(decoded.status());
                   Result<std::vector<zone::BucketReport>> reports = handler_.Direct(*decoded);
                   if (!reports.ok()) return ToGrpc(reports.status());
                   Encode(*reports, response);
                   return grpc::Status::OK;
                 }));
}

}  // namespace limits::rpc
