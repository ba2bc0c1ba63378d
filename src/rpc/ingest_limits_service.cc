#include "rpc/ingest_limits_service.h"

#include <grpcpp/support/proto_buffer_reader.h>

#include "common/log.h"
#include "common/utf8.h"
#include "rpc/limits_server.pb.h"
#include "rpc/stream_list.h"

namespace limits::rpc {
namespace {

constexpr const char* kMethodNames[] = {"ExceedsLimits", "GetAssignedPartitions", "UpdateRates"};
// dskit's route label: the full gRPC method name.
constexpr const char* kRoutes[] = {"/proto.IngestLimits/ExceedsLimits", "/proto.IngestLimits/GetAssignedPartitions",
                                   "/proto.IngestLimits/UpdateRates"};
enum Method { kExceedsLimits = 0, kGetAssignedPartitions = 1, kUpdateRates = 2 };
// Above this a request goes to the pool without an attempt on gRPC's thread: a slice of
// 10 000 streams is ~300 KB on the wire.
constexpr size_t kInlineMaxBytes = 1 << 20;

const char* CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK: return "OK";
    case grpc::CANCELLED: return "Canceled";
    case grpc::INVALID_ARGUMENT: return "InvalidArgument";
    case grpc::DEADLINE_EXCEEDED: return "DeadlineExceeded";
    case grpc::NOT_FOUND: return "NotFound";
    case grpc::RESOURCE_EXHAUSTED: return "ResourceExhausted";
    case grpc::FAILED_PRECONDITION: return "FailedPrecondition";
    case grpc::UNIMPLEMENTED: return "Unimplemented";
    case grpc::INTERNAL: return "Internal";
    case grpc::UNAVAILABLE: return "Unavailable";
    default: return "Unknown";
  }
}

// dskit's DefBuckets (instrument.DefBuckets), which Loki's loki_request_duration_seconds uses.
const prometheus::Histogram::BucketBoundaries& LokiBuckets() {
  static const prometheus::Histogram::BucketBoundaries b = {.005, .01, .025, .05, .1, .25, .5,
                                                             1,    2.5, 5,    10,  25,  50, 100};
  return b;
}

template <typename Message>
bool Parse(const grpc::ByteBuffer& in, Message* out) {
  grpc::ByteBuffer copy(in);  // shares the slices; the reader needs a mutable buffer
  grpc::ProtoBufferReader reader(&copy);
  return out->ParseFromZeroCopyStream(&reader);
}

template <typename Message>
grpc::Status Serialize(const Message& message, grpc::ByteBuffer* out) {
  bool own_buffer = false;
  return grpc::SerializationTraits<Message>::Serialize(message, out, &own_buffer);
}

grpc::Status NotUtf8(const std::string& field, std::string_view value) {
  return {grpc::INVALID_ARGUMENT,
          field + " is not valid UTF-8 (byte " + std::to_string(FirstInvalidUtf8(value)) + " of " +
              std::to_string(value.size()) + ")"};
}

grpc::Status Unparsable(int method) {
  return {grpc::INVALID_ARGUMENT,
          std::string("the request body is not a valid proto.") + kMethodNames[method] + "Request"};
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
    // A zone home whose bucket's other asks held it past the asker's time (ZoneAgent::Exchange).
    case StatusCode::kWouldBlock: return {grpc::ABORTED, status.message()};
    default: return {grpc::INTERNAL, status.message()};
  }
}

const char* LokiStatusCode(grpc::StatusCode code) {
  if (code == grpc::OK) return "success";
  if (code == grpc::CANCELLED) return "cancel";
  return "error";
}

IngestLimitsService::IngestLimitsService(LimitsChecker& checker, prometheus::Registry& registry,
                                         TaskPool::Options pool)
    : checker_(checker),
      requests_(prometheus::BuildCounter()
                    .Name("limitsd_grpc_requests_total")
                    .Help("IngestLimits requests by method and gRPC status code.")
                    .Register(registry)),
      latency_(prometheus::BuildHistogram()
                   .Name("limitsd_grpc_request_duration_seconds")
                   .Help("IngestLimits request latency (queueing included) by method and gRPC status code.")
                   .Register(registry)),
      loki_latency_(prometheus::BuildHistogram()
                        .Name("loki_request_duration_seconds")
                        .Help("Time (in seconds) spent serving HTTP requests.")  // Loki's (dskit's) help text
                        .Register(registry)),
      loki_inflight_(prometheus::BuildGauge()
                         .Name("loki_inflight_requests")
                         .Help("Current number of inflight requests.")
                         .Register(registry)),
      queued_(prometheus::BuildGauge()
                  .Name("limitsd_grpc_queued_calls")
                  .Help("IngestLimits calls waiting for a handler thread.")
                  .Register(registry)
                  .Add({})),
      pool_(pool) {
  auto& handoffs = prometheus::BuildCounter()
                       .Name("limitsd_grpc_handoffs_total")
                       .Help("Calls started on gRPC's thread that found a lock busy, changed nothing there and were "
                             "handed to a handler thread.")
                       .Register(registry);
  for (int m = 0; m < kMethods; ++m) {
    handoffs_[m] = &handoffs.Add({{"method", kMethodNames[m]}});
    inflight_[m] = &loki_inflight_.Add({{"method", "gRPC"}, {"route", kRoutes[m]}});
    SeriesOf(m, grpc::OK);  // the usual series exist from the start
  }
}

IngestLimitsService::~IngestLimitsService() { pool_.Stop(); }

IngestLimitsService::Series& IngestLimitsService::SeriesOf(int method, grpc::StatusCode code) {
  const int c = code >= 0 && code < kCodes ? code : grpc::UNKNOWN;
  Series& s = series_[method][c];
  if (s.requests.load(std::memory_order_acquire) == nullptr) {
    std::lock_guard lock(create_mu_);
    if (s.requests.load(std::memory_order_relaxed) == nullptr) {
      const auto status = static_cast<grpc::StatusCode>(c);
      s.latency.store(&latency_.Add({{"method", kMethodNames[method]}, {"code", CodeName(status)}},
                                    prometheus::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025,
                                                                            0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                                            1}),
                      std::memory_order_relaxed);
      // Several gRPC codes share one Loki status_code: Family::Add returns the same series.
      s.loki_latency.store(&loki_latency_.Add({{"method", "gRPC"},
                                               {"route", kRoutes[method]},
                                               {"status_code", LokiStatusCode(status)},
                                               {"ws", "false"}},
                                              LokiBuckets()),
                           std::memory_order_relaxed);
      s.requests.store(&requests_.Add({{"method", kMethodNames[method]}, {"code", CodeName(status)}}),
                       std::memory_order_release);
    }
  }
  return s;
}

grpc::ServerUnaryReactor* IngestLimitsService::Dispatch(int method, Mode mode, grpc::CallbackServerContext* context,
                                                        const grpc::ByteBuffer* request, grpc::ByteBuffer* response,
                                                        Handler handler) {
  const auto started = std::chrono::steady_clock::now();
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  in_flight_.fetch_add(1, std::memory_order_acq_rel);
  inflight_[method]->Increment();
  // A client that cancels before its request has arrived still gets its handler called, with
  // no message (an invalid buffer; an empty message is a valid one): served, it read as
  // "tenant is required" and counted an INVALID_ARGUMENT per cancelled call (loadgen's last
  // call of a run; 295 of 300 quick cancels).
  if (!request->Valid() || context->IsCancelled()) {
    Finish(method, reactor, started, grpc::Status(grpc::CANCELLED, "cancelled before its request arrived"));
    return reactor;
  }
  // A large request is decoded and checked slice by slice in the pool: gRPC's threads only
  // take calls a slice of streams could fill.
  if (mode == Mode::kInlineOrPool && request->Length() > kInlineMaxBytes) mode = Mode::kPool;
  if (mode != Mode::kPool) {
    const Wait wait = mode == Mode::kInline ? Wait::kMay : Wait::kNever;
    if (std::optional<grpc::Status> status = Run(method, *request, response, handler, wait)) {
      Finish(method, reactor, started, *status);
      return reactor;
    }
    handoffs_[method]->Increment();
  }
  const size_t bytes = request->Length();
  auto task = [this, method, reactor, started, context, request, response, handler = std::move(handler)] {
    queued_.Decrement();
    // A call whose client gave up (deadline, cancel) while it waited is not worth serving.
    grpc::Status status(grpc::CANCELLED, "cancelled while queued");
    if (!context->IsCancelled()) {
      status = Run(method, *request, response, handler, Wait::kMay)
                   .value_or(grpc::Status(grpc::INTERNAL, "internal error: a handler that may wait would block"));
    }
    Finish(method, reactor, started, status);
  };
  queued_.Increment();
  if (!pool_.TrySubmit(bytes, std::move(task))) {
    queued_.Decrement();
    Finish(method, reactor, started,
           grpc::Status(grpc::RESOURCE_EXHAUSTED, "limitsd is busy: " + std::to_string(pool_.queued()) +
                                                      " calls already wait for a handler; retry"));
  }
  return reactor;
}

std::optional<grpc::Status> IngestLimitsService::Run(int method, const grpc::ByteBuffer& request,
                                                     grpc::ByteBuffer* response, const Handler& handler, Wait wait) {
  try {
    return handler(request, response, wait);
  } catch (const std::exception& e) {
    log::Error("rpc", "handler threw").Kv("method", kMethodNames[method]).Kv("error", e.what());
    return grpc::Status(grpc::INTERNAL, std::string("internal error: ") + e.what());
  } catch (...) {
    log::Error("rpc", "handler threw").Kv("method", kMethodNames[method]);
    return grpc::Status(grpc::INTERNAL, "internal error");
  }
}

void IngestLimitsService::Finish(int method, grpc::ServerUnaryReactor* reactor,
                                 std::chrono::steady_clock::time_point started, const grpc::Status& status) {
  Series& series = SeriesOf(method, status.error_code());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  series.latency.load(std::memory_order_relaxed)->Observe(seconds);
  series.loki_latency.load(std::memory_order_relaxed)->Observe(seconds);
  series.requests.load(std::memory_order_relaxed)->Increment();
  inflight_[method]->Decrement();
  in_flight_.fetch_sub(1, std::memory_order_acq_rel);
  reactor->Finish(status);  // last: the call (context, buffers) may be gone after it
}

grpc::ServerUnaryReactor* IngestLimitsService::ExceedsLimits(grpc::CallbackServerContext* context,
                                                             const grpc::ByteBuffer* request,
                                                             grpc::ByteBuffer* response) {
  // With a zone, a check near a limit may wait for a call to a peer: never on gRPC's thread.
  return Dispatch(kExceedsLimits, checker_.zoned() ? Mode::kPool : Mode::kInlineOrPool, context, request, response,
                  [this, context](const grpc::ByteBuffer& in, grpc::ByteBuffer* out, Wait wait) {
                    return DoExceedsLimits(in, out, wait, FromSystemDeadline(context->deadline()));
                  });
}

grpc::ServerUnaryReactor* IngestLimitsService::GetAssignedPartitions(grpc::CallbackServerContext* context,
                                                                     const grpc::ByteBuffer* request,
                                                                     grpc::ByteBuffer* response) {
  // A copy of the serving set: cheap and never blocking, so it skips the queue.
  return Dispatch(kGetAssignedPartitions, Mode::kInline, context, request, response,
                  [this](const grpc::ByteBuffer& in, grpc::ByteBuffer* out, Wait) -> std::optional<grpc::Status> {
                    return DoGetAssignedPartitions(in, out);
                  });
}

grpc::ServerUnaryReactor* IngestLimitsService::UpdateRates(grpc::CallbackServerContext* context,
                                                           const grpc::ByteBuffer* request,
                                                           grpc::ByteBuffer* response) {
  return Dispatch(kUpdateRates, Mode::kPool, context, request, response,
                  [this](const grpc::ByteBuffer& in, grpc::ByteBuffer* out, Wait) -> std::optional<grpc::Status> {
                    return DoUpdateRates(in, out);
                  });
}

std::optional<grpc::Status> IngestLimitsService::DoExceedsLimits(const grpc::ByteBuffer& in, grpc::ByteBuffer* out,
                                                                 Wait wait, Deadline deadline) {
  const ContiguousBody body(in);
  StreamList request;
  if (!body.ok() || !request.Parse(body.view())) return Unparsable(kExceedsLimits);
  if (!IsValidUtf8(request.tenant())) return NotUtf8("tenant", request.tenant());
  if (Status s = checker_.Validate(request.tenant()); !s.ok()) return ToGrpc(s);
  // Slice by slice, each committed before the next is decoded: never on a thread that must
  // not wait (a later slice could not give up cleanly).
  const size_t slice = checker_.slice_streams();
  if (wait == Wait::kNever && request.size() > slice) return std::nullopt;
  std::string response;
  std::vector<StreamUpdate> streams;
  std::vector<Rejection> rejected;
  Status status;
  request.ForEachSlice(slice, &streams, [&](std::span<const StreamUpdate> part) {
    status = checker_.ExceedsLimits(request.tenant(), part, &rejected, wait, deadline);
    if (!status.ok()) return false;
    for (const Rejection& r : rejected) AppendResult(&response, r.stream_hash, r.reason);
    return true;
  });
  if (!status.ok()) {
    if (status.IsWouldBlock()) return std::nullopt;  // only ever a first and only slice: nothing changed
    return ToGrpc(status);
  }
  *out = ToByteBuffer(std::move(response));
  return grpc::Status::OK;
}

grpc::Status IngestLimitsService::DoGetAssignedPartitions(const grpc::ByteBuffer& in, grpc::ByteBuffer* out) {
  proto::server::GetAssignedPartitionsRequest request;
  if (!Parse(in, &request)) return Unparsable(kGetAssignedPartitions);
  proto::GetAssignedPartitionsResponse response;
  auto* partitions = response.mutable_assignedpartitions();
  for (const auto& [p, at] : checker_.AssignedPartitions()) (*partitions)[p] = at;
  return Serialize(response, out);
}

grpc::Status IngestLimitsService::DoUpdateRates(const grpc::ByteBuffer& in, grpc::ByteBuffer* out) {
  const ContiguousBody body(in);
  StreamList request;
  if (!body.ok() || !request.Parse(body.view())) return Unparsable(kUpdateRates);
  if (!IsValidUtf8(request.tenant())) return NotUtf8("tenant", request.tenant());
  if (Status s = checker_.Validate(request.tenant()); !s.ok()) return ToGrpc(s);
  std::string response;
  std::vector<StreamUpdate> streams;
  std::vector<UsageStore::StreamRate> rates;
  Status status;
  request.ForEachSlice(checker_.slice_streams(), &streams, [&](std::span<const StreamUpdate> part) {
    status = checker_.UpdateRates(request.tenant(), part, &rates);
    if (!status.ok()) return false;
    for (const UsageStore::StreamRate& r : rates) AppendResult(&response, r.stream_hash, r.bytes_per_s);
    return true;
  });
  if (!status.ok()) return ToGrpc(status);
  *out = ToByteBuffer(std::move(response));
  return grpc::Status::OK;
}

}  // namespace limits::rpc
