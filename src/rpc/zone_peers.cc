#include "rpc/zone_peers.h"

#include <algorithm>
#include <utility>

namespace limits::rpc {
namespace {
Status FromCall(const std::string& address, const char* method, const grpc::Status& s) {
  const std::string what = "zone peer " + address + ": " + method + ": " + s.error_message();
  if (s.error_code() == grpc::INVALID_ARGUMENT) return Status::InvalidArgument(what);
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

void ZonePeers::Prepare(grpc::ClientContext* context) const {
  context->set_deadline(std::chrono::system_clock::now() + options_.timeout);
}

Result<zone::ExchangeAnswer> ZonePeers::Exchange(const std::string& address, const zone::ExchangeRequest& request) {
  wire::ExchangeRequest req;
  Encode(request, &req);
  wire::ExchangeAnswer resp;
  grpc::ClientContext context;
  Prepare(&context);
  const grpc::Status s = StubOf(address)->Exchange(&context, req, &resp);
  if (!s.ok()) return FromCall(address, "Exchange", s);
  Result<zone::ExchangeAnswer> answer = Decode(resp);
  if (!answer.ok()) return BadAnswer(address, "Exchange", answer.status());
  return answer;
}

Result<std::vector<zone::BucketReport>> ZonePeers::Direct(const std::string& address, const DirectRequest& request) {
  wire::DirectRequest req;
  Encode(request, &req);
  wire::DirectAnswer resp;
  grpc::ClientContext context;
  Prepare(&context);
  const grpc::Status s = StubOf(address)->Direct(&context, req, &resp);
  if (!s.ok()) return FromCall(address, "Direct", s);
  Result<std::vector<zone::BucketReport>> reports = Decode(resp, options_.num_partitions);
  if (!reports.ok()) return BadAnswer(address, "Direct", reports.status());
  return reports;
}

void ZonePeers::Retain(const std::vector<std::string>& keep) {
  std::lock_guard lock(mu_);
  std::erase_if(stubs_, [&](const auto& entry) { return std::find(keep.begin(), keep.end(), entry.first) == keep.end(); });
}

}  // namespace limits::rpc
