#include "rpc/ingest_limits_service.h"

#include <chrono>

#include "common/log.h"

namespace limits::rpc {
namespace {

constexpr const char* kMethodNames[] = {"ExceedsLimits", "GetAssignedPartitions", "UpdateRates"};
enum Method { kExceedsLimits = 0, kGetAssignedPartitions = 1, kUpdateRates = 2 };

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
                   .Help("IngestLimits request latency by method and gRPC status code.")
                   .Register(registry)) {
  for (int m = 0; m < kMethods; ++m) SeriesOf(m, grpc::OK);  // the usual series exist from the start
}

IngestLimitsService::Series& IngestLimitsService::SeriesOf(int method, grpc::StatusCode code) {
  const int c = code >= 0 && code < kCodes ? code : grpc::UNKNOWN;
  Series& s = series_[method][c];
  if (s.requests.load(std::memory_order_acquire) == nullptr) {
    std::lock_guard lock(create_mu_);
    if (s.requests.load(std::memory_order_relaxed) == nullptr) {
      const std::map<std::string, std::string> labels = {{"method", kMethodNames[method]},
                                                         {"code", CodeName(static_cast<grpc::StatusCode>(c))}};
      s.latency.store(&latency_.Add(labels, prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001,
                                                                                     0.0025, 0.005, 0.01, 0.025, 0.05,
                                                                                     0.1, 0.25, 0.5, 1}),
                      std::memory_order_relaxed);
      s.requests.store(&requests_.Add(labels), std::memory_order_release);
    }
  }
  return s;
}

template <typename Fn>
grpc::Status IngestLimitsService::Observe(int method, Fn fn) {
  const auto started = std::chrono::steady_clock::now();
  grpc::Status status;
  try {
    status = fn();
  } catch (const std::exception& e) {
    log::Error("rpc", "handler threw").Kv("method", kMethodNames[method]).Kv("error", e.what());
    status = grpc::Status(grpc::INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    status = grpc::Status(grpc::INTERNAL, "internal error");
  }
  Series& series = SeriesOf(method, status.error_code());
  series.latency.load(std::memory_order_relaxed)
      ->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  series.requests.load(std::memory_order_relaxed)->Increment();
  return status;
}

grpc::Status IngestLimitsService::ExceedsLimits(grpc::ServerContext*, const proto::ExceedsLimitsRequest* request,
                                                proto::ExceedsLimitsResponse* response) {
  return Observe(kExceedsLimits, [&] {
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
  return Observe(kGetAssignedPartitions, [&] {
    auto* out = response->mutable_assignedpartitions();
    for (const auto& [p, at] : checker_.AssignedPartitions()) (*out)[p] = at;
    return grpc::Status::OK;
  });
}

grpc::Status IngestLimitsService::UpdateRates(grpc::ServerContext*, const proto::UpdateRatesRequest* request,
                                              proto::UpdateRatesResponse* response) {
  return Observe(kUpdateRates, [&] {
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
