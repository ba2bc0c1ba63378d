// ZoneService: limitsd.zone.v1.Zone (src/proto/zone.proto) — this node's side of its zone's
// exchanges, as a home (Exchange: a member's reports, answered with the roster and directives)
// and as a member (Direct: a home's recall, answered with the reports that acknowledge it).
// Every message is decoded and checked first (rpc/zone_codec.h): a bad one is INVALID_ARGUMENT
// naming the field and never reaches the handler. Counts calls by method and gRPC code
// (limitsd_zone_requests_total). The node's zone::ZoneHandler answers. Synchronous API, on gRPC's sync pool: these calls are few
// (about one a second per peer) and apart from Loki's. Thread-safe; destroy after the server.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/registry.h>

#include <grpcpp/grpcpp.h>

#include <vector>

#include "common/result.h"
#include "limits/zone/exchange.h"
#include "proto/zone.grpc.pb.h"
#include "rpc/zone_codec.h"

namespace limits::rpc {

class ZoneService final : public wire::Zone::Service {
 public:
  // `num_partitions`: the topic's. `handler` must outlive the service.
  ZoneService(zone::ZoneHandler& handler, int32_t num_partitions, prometheus::Registry& registry);

  grpc::Status Exchange(grpc::ServerContext* context, const wire::ExchangeRequest* request,
                        wire::ExchangeAnswer* response) override;
  grpc::Status Direct(grpc::ServerContext* context, const wire::DirectRequest* request,
                      wire::DirectAnswer* response) override;

 private:
  grpc::Status Counted(int method, grpc::Status status);

  zone::ZoneHandler& handler_;
  const int32_t num_partitions_;
  prometheus::Family<prometheus::Counter>& requests_;
};

}  // namespace limits::rpc
