// ZonePeers: this node's client of its zone's other nodes (limitsd.zone.v1.Zone at the gRPC
// address the ring lists for each): Exchange with a bucket's home, Direct to members (several at
// once). One channel per address, kept while the address is in use, with the zone's TLS (dskit
// grpcclient names, tls/client_tls.h). Every answer is decoded and checked as a request is
// (rpc/zone_codec.h): a peer that sends garbage is an error, never a directive.
// Errors: kUnavailable for a peer that did not answer in time or at all (the caller keeps
// what it holds and fails closed), kInvalidArgument for a refused request or a bad answer,
// kWouldBlock for a home busy with the bucket's other asks until the caller's time ran out.
// Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/result.h"
#include "limits/zone/exchange.h"
#include "proto/zone.grpc.pb.h"
#include "rpc/zone_codec.h"
#include "tls/client_tls.h"

namespace limits::rpc {

struct ZonePeersOptions {
  int32_t num_partitions = 64;  // the topic's: answers naming another partition are refused
  tls::ClientTls tls = {};
  std::chrono::milliseconds timeout{2000};  // of one call, connecting included
};

class ZonePeers final : public zone::ZoneTransport {
 public:
  explicit ZonePeers(ZonePeersOptions options);

  // `address`: host:port of the peer's gRPC listener.
  Result<zone::ExchangeAnswer> Exchange(const std::string& address, const zone::ExchangeRequest& request,
                                        Deadline deadline) override;
  Result<std::vector<zone::BucketReport>> Direct(const std::string& address, const DirectRequest& request,
                                                 Deadline deadline) override;

  // All in flight at once (gRPC's callback API), each within the timeout and `deadline`.
  std::vector<Result<std::vector<zone::BucketReport>>> DirectAll(const std::vector<zone::DirectCall>& calls,
                                                                 Deadline deadline) override;

  // Closes the channels of addresses not in `keep` (peers that left the ring).
  void Retain(const std::vector<std::string>& keep);

 private:
  // Shared: a call in flight keeps its stub (and channel) while Retain drops the address.
  std::shared_ptr<wire::Zone::Stub> StubOf(const std::string& address);
  // A call's deadline: the timeout's, or `deadline` when that is sooner.
  std::chrono::system_clock::time_point CallDeadline(Deadline deadline) const;
  // A call's answer decoded, or its error: kUnavailable / kInvalidArgument as above.
  template <typename Out, typename WireAnswer, typename DecodeFn>
  Result<Out> Finish(const std::string& address, const char* name, const grpc::Status& status, const WireAnswer& answer,
                     DecodeFn decode) const;
  // One call within the timeout and `deadline`, its answer decoded.
  template <typename Out, typename WireRequest, typename WireAnswer, typename Method, typename DecodeFn>
  Result<Out> Call(const std::string& address, const char* name, const WireRequest& request, Deadline deadline,
                   Method method, DecodeFn decode);

  const ZonePeersOptions options_;
  const std::shared_ptr<grpc::ChannelCredentials> credentials_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<wire::Zone::Stub>> stubs_;
};

}  // namespace limits::rpc
