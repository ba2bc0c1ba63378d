// IngestLimitsService: Loki's IngestLimits gRPC service (synchronous API: gRPC's thread pool
// runs the handlers, which may wait on the store's group commit). Converts the wire messages
// to the LimitsChecker's calls and our Status to grpc::Status, once, here; counts requests
// and their latency by method and code. Handlers never throw.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <mutex>
#include <string>

#include "limits/limits_checker.h"
#include "proto/limits.grpc.pb.h"

namespace limits::rpc {

grpc::Status ToGrpc(const Status& status);

class IngestLimitsService final : public proto::IngestLimits::Service {
 public:
  IngestLimitsService(LimitsChecker& checker, prometheus::Registry& registry);

  grpc::Status ExceedsLimits(grpc::ServerContext* context, const proto::ExceedsLimitsRequest* request,
                             proto::ExceedsLimitsResponse* response) override;
  grpc::Status GetAssignedPartitions(grpc::ServerContext* context, const proto::GetAssignedPartitionsRequest* request,
                                     proto::GetAssignedPartitionsResponse* response) override;
  grpc::Status UpdateRates(grpc::ServerContext* context, const proto::UpdateRatesRequest* request,
                           proto::UpdateRatesResponse* response) override;

 private:
  // Runs fn, turning exceptions into INTERNAL, and records the call's metrics.
  template <typename Fn>
  grpc::Status Observe(int method, Fn fn);

  // The series of one (method, code): created on first use, then found without a lock.
  struct Series {
    std::atomic<prometheus::Counter*> requests{nullptr};
    std::atomic<prometheus::Histogram*> latency{nullptr};
  };
  static constexpr int kMethods = 3;
  static constexpr int kCodes = 17;  // grpc::StatusCode 0..16
  Series& SeriesOf(int method, grpc::StatusCode code);

  LimitsChecker& checker_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  std::mutex create_mu_;  // only to create a series
  Series series_[kMethods][kCodes];
};

}  // namespace limits::rpc
