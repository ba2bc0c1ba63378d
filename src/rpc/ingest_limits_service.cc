#include "rpc/ingest_limits_service.h"

#include <chrono>

#include "common/log.h"

namespace limits::rpc {
namespace {

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK: return "OK";
    case grpc::INVALID_ARGUMENT: return "InvalidArgument";
    case grpc::UNAVAILABLE: return "Unavailable";
    case grpc::INTERNAL: return "Internal";
    case grpc::NOT_FOUND: return "NotFound";
    case grpc::FAILED_PRECONDITION: return "FailedPrecondition";
    case grpc::CANCELLED: return "Canceled";
    default: return "Unknown";
  }
}

std::vector<StreamUpdate> Streams(const google::protobuf::RepeatedPtrField<proto::StreamMetadata>& in) {
  std::vector<StreamUpdate> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (const proto::StreamMetadata& s : in) {
    out.push_back({.stream_hash = s.streamhash(), .bytes = s.totalsize(), .policy = s.ingestionpolicy()});
  }
  return out;
}

}  // namespace

grpc::Status ToGrpc(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk: return grpc::Status::OK;
    case StatusCode::kInvalidArgument: return {grpc::INVALID_ARGUMENT, status.message()};
    case StatusCode::kUnavailable:
    case StatusCode::kShutdown:
    case StatusCode::kIOError: return {grpc::UNAVAILABLE, status.message()};
    case StatusCode::kNotFound: return {grpc::NOT_FOUND, status.message()};
    case StatusCode::kFailedPrecondition: return {grpc::FAILED_PRECONDITION, status.message()};
    default: return {grpc::INTERNAL, status.message()};
  }
}

IngestLimitsService::IngestLimitsService(LimitsChecker& checker, prometheus::Registry& registry)
    : checker_(checker),
      requests_(prometheus::BuildCounter()
                    .Name("limitsd_grpc_requests_total")
                    .Help("IngestLimits requests by method and gRPC status code.")
                    .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("limitsd_grpc_request_duration_seconds")
                   .Help("IngestLimits request latency by method.")
                   .Register(registry)) {
  for (const char* method : {"ExceedsLimits", "GetAssignedPartitions", "UpdateRates"}) {
    latency_by_method_[method] = &latency_.Add(
        {{"method", method}}, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                                      0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1});
  }
}

template <typename Fn>
grpc::Status IngestLimitsService::Observe(const char* method, Fn fn) {
  const auto started = std::chrono::steady_clock::now();
  grpc::Status status;
  try {
    status = fn();
  } catch (const std::exception& e) {
    log::Error("rpc", "handler threw").Kv("method", method).Kv("error", e.what());
    status = grpc::Status(grpc::INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    status = grpc::Status(grpc::INTERNAL, "internal error");
  }
  latency_by_method_[method]->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  prometheus::Counter* counter;
  {
    std::lock_guard lock(counters_mu_);
    auto& c = requests_by_code_[{method, status.error_code()}];
    if (c == nullptr) c = &requests_.Add({{"method", method}, {"code", CodeName(status.error_code())}});
    counter = c;
  }
  counter->Increment();
  return status;
}

grpc::Status IngestLimitsService::ExceedsLimits(grpc::ServerContext*, const proto::ExceedsLimitsRequest* request,
                                                proto::ExceedsLimitsResponse* response) {
  return Observe("ExceedsLimits", [&] {
    const std::vector<StreamUpdate> streams = Streams(request->streams());
    std::vector<Rejection> rejected;
    Status s = checker_.ExceedsLimits(request->tenant(), streams, &rejected);
    if (!s.ok()) return ToGrpc(s);
    for (const Rejection& r : rejected) {
      proto::ExceedsLimitsResult* out = response->add_results();
      out->set_streamhash(r.stream_hash);
      out->set_reason(r.reason);
    }
    return grpc::Status::OK;
  });
}

grpc::Status IngestLimitsService::GetAssignedPartitions(grpc::ServerContext*, const proto::GetAssignedPartitionsRequest*,
                                                        proto::GetAssignedPartitionsResponse* response) {
  return Observe("GetAssignedPartitions", [&] {
    auto* out = response->mutable_assignedpartitions();
    for (const auto& [p, at] : checker_.AssignedPartitions()) (*out)[p] = at;
    return grpc::Status::OK;
  });
}

grpc::Status IngestLimitsService::UpdateRates(grpc::ServerContext*, const proto::UpdateRatesRequest* request,
                                              proto::UpdateRatesResponse* response) {
  return Observe("UpdateRates", [&] {
    const std::vector<StreamUpdate> streams = Streams(request->streams());
    std::vector<UsageStore::StreamRate> rates;
    Status s = checker_.UpdateRates(request->tenant(), streams, &rates);
    if (!s.ok()) return ToGrpc(s);
    for (const UsageStore::StreamRate& r : rates) {
      proto::UpdateRatesResult* out = response->add_results();
      out->set_streamhash(r.stream_hash);
      out->set_rate(r.bytes_per_s);
    }
    return grpc::Status::OK;
  });
}

}  // namespace limits::rpc
