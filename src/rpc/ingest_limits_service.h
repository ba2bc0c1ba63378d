// IngestLimitsService: Loki's IngestLimits gRPC service on gRPC's callback API with raw
// (ByteBuffer) methods. ExceedsLimits runs on gRPC's own thread when every lock it needs is
// free (no thread hand-off: a third of the call's cost); one that finds a lock busy changes
// nothing there and is handed to a TaskPool of our own, where waiting is fine, as
// UpdateRates always is. So 1000 concurrent calls queue and are served instead of meeting
// "Server Threadpool Exhausted"; a full queue answers RESOURCE_EXHAUSTED at once. Requests
// are decoded here (rpc/stream_list.h: a slice of streams at a time, strings as bytes), so
// a garbage body or a tenant that is not UTF-8 is INVALID_ARGUMENT with a message, never
// INTERNAL, and a request's size costs memory only for its bytes. Converts our Status to
// grpc::Status once, here; counts requests by method and code (limitsd_grpc_*) and under
// Loki's names (loki_request_duration_seconds, loki_inflight_requests). Handlers never
// throw. Thread-safe; destroy after the server.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "common/deadline.h"
#include "common/task_pool.h"
#include "limits/decision/limits_checker.h"
#include "proto/limits.grpc.pb.h"

namespace limits::rpc {

grpc::Status ToGrpc(const Status& status);

// dskit's status_code label (ReportGRPCCodesInInstrumentationLabel off, Loki's default):
// "success", "cancel" or "error".
const char* LokiStatusCode(grpc::StatusCode code);

using RawIngestLimitsService = proto::IngestLimits::WithRawCallbackMethod_ExceedsLimits<
    proto::IngestLimits::WithRawCallbackMethod_GetAssignedPartitions<
        proto::IngestLimits::WithRawCallbackMethod_UpdateRates<proto::IngestLimits::Service>>>;

class IngestLimitsService final : public RawIngestLimitsService {
 public:
  IngestLimitsService(LimitsChecker& checker, prometheus::Registry& registry,
                      TaskPool::Options pool = {.name = "grpc-handler"});
  ~IngestLimitsService() override;

  grpc::ServerUnaryReactor* ExceedsLimits(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                          grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* GetAssignedPartitions(grpc::CallbackServerContext* context,
                                                  const grpc::ByteBuffer* request, grpc::ByteBuffer* response) override;
  grpc::ServerUnaryReactor* UpdateRates(grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;

  // Calls received and not yet answered (queued or running).
  int64_t in_flight() const { return in_flight_.load(std::memory_order_acquire); }

  static constexpr int kMethods = 3;

 private:
  // A handler's answer; nullopt: it ran with Wait::kNever, found a lock busy and did nothing.
  using Handler = std::function<std::optional<grpc::Status>(const grpc::ByteBuffer&, grpc::ByteBuffer*, Wait)>;
  enum class Mode {
    kInline,        // on gRPC's thread: cheap, never waits
    kInlineOrPool,  // on gRPC's thread unless a lock is busy, then in the pool
    kPool,          // in the pool
  };
  grpc::ServerUnaryReactor* Dispatch(int method, Mode mode, grpc::CallbackServerContext* context,
                                     const grpc::ByteBuffer* request, grpc::ByteBuffer* response, Handler handler);
  // Runs the handler, turning exceptions into INTERNAL.
  std::optional<grpc::Status> Run(int method, const grpc::ByteBuffer& request, grpc::ByteBuffer* response,
                                  const Handler& handler, Wait wait);
  void Finish(int method, grpc::ServerUnaryReactor* reactor, std::chrono::steady_clock::time_point started,
              const grpc::Status& status);

  // `deadline`: the caller's, which a zone's calls to peers end in time for.
  std::optional<grpc::Status> DoExceedsLimits(const grpc::ByteBuffer& request, grpc::ByteBuffer* response, Wait wait,
                                              Deadline deadline);
  grpc::Status DoGetAssignedPartitions(const grpc::ByteBuffer& request, grpc::ByteBuffer* response);
  grpc::Status DoUpdateRates(const grpc::ByteBuffer& request, grpc::ByteBuffer* response);

  // The series of one (method, code): created on first use, then found without a lock.
  struct Series {
    std::atomic<prometheus::Counter*> requests{nullptr};
    std::atomic<prometheus::Histogram*> latency{nullptr};
    std::atomic<prometheus::Histogram*> loki_latency{nullptr};
  };
  static constexpr int kCodes = 17;  // grpc::StatusCode 0..16
  Series& SeriesOf(int method, grpc::StatusCode code);

  LimitsChecker& checker_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& latency_;
  prometheus::Family<prometheus::Histogram>& loki_latency_;
  prometheus::Family<prometheus::Gauge>& loki_inflight_;
  prometheus::Gauge* inflight_[kMethods] = {};
  prometheus::Gauge& queued_;
  prometheus::Counter* handoffs_[kMethods] = {};
  std::mutex create_mu_;  // only to create a series
  Series series_[kMethods][kCodes];
  std::atomic<int64_t> in_flight_{0};
  TaskPool pool_;  // last: its threads stop (and finish queued calls) before the rest dies
};

}  // namespace limits::rpc
