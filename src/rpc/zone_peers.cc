#include "rpc/zone_peers.h"

#include <algorithm>
#include <condition_variable>
#include <utility>

namespace limits::rpc {
namespace {
Status FromCall(const std::string& address, const char* method, const grpc::Status& s) {
  const std::string what = "zone peer " + address + ": " + method + ": " + s.error_message();
  if (s.error_code() == grpc::INVALID_ARGUMENT) return Status::InvalidArgument(what);
  if (s.error_code() == grpc::ABORTED) return Status::WouldBlock(what);
  return Status::Unavailable(what + " (gRPC code " + std::to_string(static_cast<int>(s.error_code())) + ")");
}

Status BadAnswer(const std::string& address, const char* method, const Status& why) {
  return Status::InvalidArgument("zone peer " + address + ": " + method + ": bad answer: " + why.message());
}
}  // namespace

ZonePeers::ZonePeers(ZonePeersOptions options)
    : options_(std::move(options)), credentials_(tls::ChannelCredentials(options_.tls)) {}

std::shared_ptr<wire::Zone::Stub> ZonePeers::StubOf(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = stubs_.find(address);
  if (it == stubs_.end()) {
    grpc::ChannelArguments args;
    // A peer that restarts is back within seconds: do not let gRPC's backoff grow to minutes.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MIN_RECONNECT_BACKOFF_MS, 200);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
    if (!options_.tls.server_name.empty()) args.SetSslTargetNameOverride(options_.tls.server_name);
    auto channel = grpc::CreateCustomChannel(address, credentials_, args);
    it = stubs_.emplace(address, wire::Zone::NewStub(channel)).first;
  }
  return it->second;
}

std::chrono::system_clock::time_point ZonePeers::CallDeadline(Deadline deadline) const {
  return std::min(std::chrono::system_clock::now() + options_.timeout, ToSystemDeadline(deadline));
}

template <typename Out, typename WireAnswer, typename DecodeFn>
Result<Out> ZonePeers::Finish(const std::string& address, const char* name, const grpc::Status& status,
                              const WireAnswer& answer, DecodeFn decode) const {
  if (!status.ok()) return FromCall(address, name, status);
  Result<Out> out = decode(answer);
  if (!out.ok()) return BadAnswer(address, name, out.status());
  return out;
}

template <typename Out, typename WireRequest, typename WireAnswer, typename Method, typename DecodeFn>
Result<Out> ZonePeers::Call(const std::string& address, const char* name, const WireRequest& request, Deadline deadline,
                            Method method, DecodeFn decode) {
  WireAnswer answer;
  grpc::ClientContext context;
  context.set_deadline(CallDeadline(deadline));
  const std::shared_ptr<wire::Zone::Stub> stub = StubOf(address);
  const grpc::Status s = ((*stub).*method)(&context, request, &answer);
  return Finish<Out>(address, name, s, answer, decode);
}

Result<zone::ExchangeAnswer> ZonePeers::Exchange(const std::string& address, const zone::ExchangeRequest& request,
                                                 Deadline deadline) {
  wire::ExchangeRequest req;
  Encode(request, &req);
  return Call<zone::ExchangeAnswer, wire::ExchangeRequest, wire::ExchangeAnswer>(
      address, "Exchange", req, deadline, &wire::Zone::Stub::Exchange,
      [](const wire::ExchangeAnswer& a) { return Decode(a); });
}

Result<std::vector<zone::BucketReport>> ZonePeers::Direct(const std::string& address, const DirectRequest& request,
                                                         Deadline deadline) {
  wire::DirectRequest req;
  Encode(request, &req);
  return Call<std::vector<zone::BucketReport>, wire::DirectRequest, wire::DirectAnswer>(
      address, "Direct", req, deadline, &wire::Zone::Stub::Direct,
      [this](const wire::DirectAnswer& a) { return Decode(a, options_.num_partitions); });
}

std::vector<Result<std::vector<zone::BucketReport>>> ZonePeers::DirectAll(const std::vector<zone::DirectCall>& calls,
                                                                          Deadline deadline) {
  // gRPC's callback API: every call is sent before any is waited for; each one's callback
  // runs once, by its deadline at the latest.
  struct InFlight {
    std::shared_ptr<wire::Zone::Stub> stub;  // the channel outlives the call
    grpc::ClientContext context;
    wire::DirectRequest request;
    wire::DirectAnswer answer;
    grpc::Status status;
  };
  std::mutex mu;
  std::condition_variable done;
  size_t open = calls.size();  // GUARDED_BY(mu)
  std::vector<std::unique_ptr<InFlight>> flights;
  const auto until = CallDeadline(deadline);
  for (const zone::DirectCall& call : calls) {
    InFlight& f = *flights.emplace_back(std::make_unique<InFlight>());
    f.stub = StubOf(call.address);
    f.context.set_deadline(until);
    Encode(call.request, &f.request);
    f.stub->async()->Direct(&f.context, &f.request, &f.answer, [&mu, &done, &open, &f](grpc::Status s) {
      std::lock_guard lock(mu);
      f.status = std::move(s);
      if (--open == 0) done.notify_one();
    });
  }
  {
    std::unique_lock lock(mu);
    done.wait(lock, [&] { return open == 0; });
  }
  std::vector<Result<std::vector<zone::BucketReport>>> out;
  out.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i) {
    out.push_back(Finish<std::vector<zone::BucketReport>>(
        calls[i].address, "Direct", flights[i]->status, flights[i]->answer,
        [this](const wire::DirectAnswer& a) { return Decode(a, options_.num_partitions); }));
  }
  return out;
}

void ZonePeers::Retain(const std::vector<std::string>& keep) {
  std::lock_guard lock(mu_);
  std::erase_if(stubs_, [&](const auto& entry) { return std::find(keep.begin(), keep.end(), entry.first) == keep.end(); });
}

}  // namespace limits::rpc
