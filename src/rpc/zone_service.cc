#include "rpc/zone_service.h"

#include <exception>

#include "common/deadline.h"
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
// A decoded request to the handler, and its answer encoded: every refusal as a gRPC status.
template <typename In, typename Handle, typename WireAnswer>
grpc::Status Serve(const Result<In>& decoded, Handle handle, WireAnswer* response) {
  if (!decoded.ok()) return ToGrpc(decoded.status());
  const auto answer = handle(*decoded);
  if (!answer.ok()) return ToGrpc(answer.status());
  Encode(*answer, response);
  return grpc::Status::OK;
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

grpc::Status ZoneService::Exchange(grpc::ServerContext* context, const wire::ExchangeRequest* request,
                                   wire::ExchangeAnswer* response) {
  // The calls a home makes before it answers (recalls, report requests) end in time for it.
  const Deadline deadline = Within(FromSystemDeadline(context->deadline()), zone::kCallsShare);
  return Counted(kExchange, Guarded([&] {
                   return Serve(Decode(*request, num_partitions_),
                                [&](const zone::ExchangeRequest& r) { return handler_.Exchange(r, deadline); },
                                response);
                 }));
}

grpc::Status ZoneService::Direct(grpc::ServerContext* /*context*/, const wire::DirectRequest* request,
                                 wire::DirectAnswer* response) {
  return Counted(kDirect, Guarded([&] {
                   return Serve(Decode(*request), [&](const DirectRequest& r) { return handler_.Direct(r); },
                                response);
                 }));
}

}  // namespace limits::rpc
