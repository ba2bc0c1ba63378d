#include "loadgen/exceeds_load.h"

#include <algorithm>

#include "config/units.h"
#include "limits/decision/reason.h"

namespace limits::loadgen {
namespace {

// How long Stop() lets calls in flight finish before it cancels them.
constexpr std::chrono::milliseconds kStopGrace{1000};

constexpr size_t kMaxConnections = 8;

std::string CodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::OK: return "OK";
    case grpc::CANCELLED: return "CANCELLED";
    case grpc::UNKNOWN: return "UNKNOWN";
    case grpc::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::NOT_FOUND: return "NOT_FOUND";
    case grpc::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::ABORTED: return "ABORTED";
    case grpc::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::INTERNAL: return "INTERNAL";
    case grpc::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::DATA_LOSS: return "DATA_LOSS";
    case grpc::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "code " + std::to_string(static_cast<int>(code));
  }
}

std::string RateText(double rate) {
  return rate > 0 ? "at " + std::to_string(static_cast<uint64_t>(rate)) + "/s" : std::string("unpaced");
}

}  // namespace

ExceedsLoad::ExceedsLoad(const ExceedsOptions& options, const Universe& universe, LoadCounters& counters)
    : options_(options),
      universe_(universe),
      counters_(counters),
      picker_(universe, options.new_fraction, options.streams_per_request) {}

ExceedsLoad::~ExceedsLoad() { Stop(); }

Result<std::unique_ptr<ExceedsLoad>> ExceedsLoad::Create(const ExceedsOptions& options, const Universe& universe,
                                                         LoadCounters& counters) {
  auto load = std::unique_ptr<ExceedsLoad>(new ExceedsLoad(options, universe, counters));
  const size_t connections = std::min<size_t>(options.concurrency, kMaxConnections);
  for (size_t i = 0; i < connections; ++i) {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // a connection of its own, not a shared one
    args.SetMaxReceiveMessageSize(64 << 20);
    auto channel = grpc::CreateCustomChannel(options.target, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + options.timeout)) {
      return Status::Unavailable("cannot connect to " + options.target + " within " +
                                 config::FormatDuration(options.timeout) + " (--timeout): is the node running there?");
    }
    load->stubs_.push_back(proto::IngestLimits::NewStub(channel));
  }
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options.timeout);
  proto::GetAssignedPartitionsResponse assigned;
  const grpc::Status s = load->stubs_[0]->GetAssignedPartitions(&ctx, proto::GetAssignedPartitionsRequest(), &assigned);
  if (!s.ok()) {
    return Status::Unavailable("GetAssignedPartitions on " + options.target + ": " + CodeName(s.error_code()) + ": " +
                               s.error_message());
  }
  load->ready_partitions_ = static_cast<size_t>(assigned.assignedpartitions_size());
  return load;
}

std::string ExceedsLoad::Describe() const {
  char fraction[32];
  std::snprintf(fraction, sizeof fraction, "%g", options_.new_fraction);
  std::string s = "ExceedsLimits on " + options_.target + " (" + std::to_string(ready_partitions_) +
                  " ready partitions) " + RateText(options_.rate) + ", " + std::to_string(options_.concurrency) +
                  " callers, " + std::to_string(options_.streams_per_request) + " streams per request, " + fraction +
                  " of them new";
  if (options_.update_rate > 0) s += "; UpdateRates " + RateText(options_.update_rate);
  return s;
}

void ExceedsLoad::Start(Pacer::Clock::time_point start) {
  exceeds_pacer_ = std::make_unique<Pacer>(options_.rate, start);
  update_pacer_ = std::make_unique<Pacer>(options_.update_rate, start);
  const size_t per_method = options_.concurrency;
  const size_t callers = per_method * (options_.update_rate > 0 ? 2 : 1);
  for (size_t i = 0; i < callers; ++i) callers_.push_back(std::make_unique<Caller>());
  for (size_t i = 0; i < callers; ++i) {
    const bool update = i >= per_method;
    threads_.emplace_back([this, i, update] {
      CallerLoop(update ? Method::kUpdateRates : Method::kExceedsLimits, i, update ? *update_pacer_ : *exceeds_pacer_,
                 update ? update_next_ : exceeds_next_);
    });
  }
}

void ExceedsLoad::Stop() {
  stop_.store(true, std::memory_order_relaxed);
  // Calls in flight are let finish for a moment and counted: cancelled at once, the node would
  // still have served (and counted) most of them while the summary left them out.
  const auto grace_end = std::chrono::steady_clock::now() + kStopGrace;
  auto in_flight = [this] {
    for (auto& c : callers_) {
      std::lock_guard lock(c->mu);
      if (c->call) return true;
    }
    return false;
  };
  while (in_flight() && std::chrono::steady_clock::now() < grace_end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& c : callers_) {
    std::lock_guard lock(c->mu);
    if (c->call) c->call->TryCancel();
  }
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
  threads_.clear();
}

void ExceedsLoad::CallerLoop(Method method, size_t index, const Pacer& pacer, std::atomic<uint64_t>& next) {
  proto::IngestLimits::Stub& stub = *stubs_[index % stubs_.size()];
  Caller& caller = *callers_[index];
  PickedRequest picked;
  while (!stop_.load(std::memory_order_relaxed)) {
    const auto due = pacer.DueAt(next.fetch_add(1, std::memory_order_relaxed));
    // Wait for the slot in short steps, so that a stop is seen at once.
    for (auto now = Pacer::Clock::now(); now < due; now = Pacer::Clock::now()) {
      if (stop_.load(std::memory_order_relaxed)) return;
      std::this_thread::sleep_until(std::min(due, now + std::chrono::milliseconds(20)));
    }
    if (stop_.load(std::memory_order_relaxed)) return;
    CallOnce(method, stub, caller, picked);
  }
}

void ExceedsLoad::CallOnce(Method method, proto::IngestLimits::Stub& stub, Caller& caller, PickedRequest& picked) {
  const bool exceeds = method == Method::kExceedsLimits;
  if (exceeds) picker_.NextRequest(&picked);
  else picker_.NextKnown(&picked);
  // ExceedsLimitsRequest and UpdateRatesRequest have the same fields.
  proto::ExceedsLimitsRequest exceeds_request;
  proto::UpdateRatesRequest update_request;
  auto fill = [&](auto& request) {
    request.set_tenant(universe_.Tenant(picked.tenant));
    request.mutable_streams()->Reserve(static_cast<int>(picked.streams.size()));
    for (uint64_t i : picked.streams) {
      proto::StreamMetadata* s = request.add_streams();
      s->set_streamhash(universe_.StreamHash(picked.tenant, i));
      s->set_totalsize(universe_.bytes_per_stream());
      s->set_ingestionpolicy(universe_.Policy(i));
    }
  };
  if (exceeds) fill(exceeds_request);
  else fill(update_request);

  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + options_.timeout);
  {
    std::lock_guard lock(caller.mu);
    // Stop() sets the flag before it cancels the registered calls: past this check it sees ours.
    if (stop_.load(std::memory_order_relaxed)) return;
    caller.call = &ctx;
  }
  proto::ExceedsLimitsResponse exceeds_response;
  proto::UpdateRatesResponse update_response;
  const auto t0 = Pacer::Clock::now();
  const grpc::Status status = exceeds ? stub.ExceedsLimits(&ctx, exceeds_request, &exceeds_response)
                                      : stub.UpdateRates(&ctx, update_request, &update_response);
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(Pacer::Clock::now() - t0).count();
  {
    std::lock_guard lock(caller.mu);
    caller.call = nullptr;
  }
  if (!status.ok()) {
    if (stop_.load(std::memory_order_relaxed) && status.error_code() == grpc::CANCELLED) return;  // our Stop()
    (exceeds ? counters_.request_errors : counters_.update_errors).fetch_add(1, std::memory_order_relaxed);
    counters_.RecordError((exceeds ? "ExceedsLimits " : "UpdateRates ") + CodeName(status.error_code()),
                          status.error_message());
    return;
  }
  if (!exceeds) {
    counters_.updates.fetch_add(1, std::memory_order_relaxed);
    counters_.update_latency.Record(static_cast<uint64_t>(micros));
    return;
  }
  counters_.requests.fetch_add(1, std::memory_order_relaxed);
  counters_.streams.fetch_add(picked.streams.size(), std::memory_order_relaxed);
  for (const proto::ExceedsLimitsResult& r : exceeds_response.results()) {
    // Counted at 1 failed, 2 max streams, 3 rate limited (limitsd's 1001), 0 any other reason.
    const uint32_t reason = r.reason() == kReasonRateLimited             ? 3
                            : r.reason() == 1 || r.reason() == 2 ? r.reason()
                                                                 : 0;
    counters_.rejected[reason].fetch_add(1, std::memory_order_relaxed);
  }
  counters_.exceeds_latency.Record(static_cast<uint64_t>(micros));
}

}  // namespace limits::loadgen
