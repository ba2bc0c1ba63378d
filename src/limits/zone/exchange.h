// What a member and a home say to each other about the buckets of their zone, once a second
// per pair and at once on a trigger: the member's reports, the home's roster and directives
// (ARCHITECTURE.md, "Exact limits across a zone"). The Zone service carries them
// (src/proto/zone.proto, rpc/zone_service.h); the two interfaces below are its two ends.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/result.h"
#include "limits/zone/bucket_key.h"
#include "limits/zone/home_ledger.h"

namespace limits::zone {

// One bucket, from a member: hot here (it holds a MemberBucket), or cold and asking to turn
// hot (`trigger`).
struct BucketReport {
  BucketKey key;
  MemberReport report;
  uint64_t want = 0;  // places it asks for beyond its unused headroom
  bool trigger = false;
  // Of `want`, the places streams wait for now (an urgent ask: a request out of headroom; 0
  // for a round's report): granted in full when free. The rest is its usual top-up, granted
  // as a round's ask is (at most half a fair share of what is free), so that near the limit
  // places go where streams wait rather than to the first asker's top-up.
  uint64_t waiting = 0;
};

// One rate bucket (a tenant's ingestion rate, or a policy's with a rate of its own), from a
// member, in millionths of the bucket's rate (kWholeRate): how fast bytes were asked of it
// lately, and the share it refills at now (rate_ledger.h).
inline constexpr uint64_t kWholeRate = 1'000'000;
struct RateReport {
  BucketKey key;
  uint64_t demand = 0;  // may exceed the whole rate
  uint64_t applied = 0;
};

// A member's share of a rate bucket's rate, in millionths of it, from the bucket's home.
struct RateShare {
  BucketKey key;
  uint64_t share = 0;
};

struct ExchangeRequest {
  // The node's name and when it started: a restarted node is a new member, whose predecessor
  // the home forgets once Kafka has moved its partitions on (a forgotten name stays forgotten).
  std::string member;
  std::vector<BucketReport> reports;
  std::vector<RateReport> rates = {};  // sent by rounds only
};

struct BucketDirective {
  BucketKey key;
  Directive directive;
};

// A directive for another member, sent at once (Recall): give back unused headroom.
struct Recall {
  std::string member;
  BucketDirective directive;
};

struct ExchangeAnswer {
  std::vector<BucketKey> roster;  // every bucket hot at this home
  std::vector<BucketDirective> directives;
  // When the asker got nothing because others hold what is left: their returns, for the home
  // to send at once. Once they acknowledge them, the asker asks again.
  std::vector<Recall> recalls;
  std::vector<RateShare> rate_shares = {};  // for the rate reports, of the buckets homed here
  // Buckets the asker got nothing of while the zone is settled at its limit: nothing free, no
  // grant unacknowledged, no member holding places unused. For an exchange interval the asker
  // refuses their streams without asking again (places free only as streams expire).
  std::vector<BucketKey> full = {};
};

// What a home sends at once: directives (a recall of unused headroom), which the member
// applies, and buckets turning hot whose counts it needs now. The member answers with its
// reports of all of them (acknowledging the directives).
struct DirectRequest {
  std::string home = "";  // the home's ring id
  std::vector<BucketDirective> directives = {};
  std::vector<BucketKey> reports = {};
};

// One Direct of several that a home sends together, to the peer at `address`.
struct DirectCall {
  std::string address;
  DirectRequest request;
};

// Of the time a caller has left, what the calls made for it may take: the rest is for the
// answer's way back.
inline constexpr double kCallsShare = 0.75;

// What a node answers: as a home, members' exchanges; as a member, homes' directives.
// Thread-safe. The Zone service serves one (rpc/zone_service.h). An exchange may call other
// members first: those calls end by `deadline` (the asker's, less the time to answer it).
class ZoneHandler {
 public:
  virtual ~ZoneHandler() = default;
  virtual Result<ExchangeAnswer> Exchange(const ExchangeRequest& request, Deadline deadline) = 0;
  virtual Result<std::vector<BucketReport>> Direct(const DirectRequest& request) = 0;
};

// How a node calls a peer at its address (rpc/zone_peers.h over gRPC). Thread-safe.
// kUnavailable when the peer did not answer (within its call timeout, or by `deadline` when
// that is sooner); kInvalidArgument for a refused request or an answer that does not decode;
// kWouldBlock when the home answered that the bucket's other asks held it until `deadline`.
class ZoneTransport {
 public:
  virtual ~ZoneTransport() = default;
  virtual Result<ExchangeAnswer> Exchange(const std::string& address, const ExchangeRequest& request,
                                          Deadline deadline) = 0;
  virtual Result<std::vector<BucketReport>> Direct(const std::string& address, const DirectRequest& request,
                                                   Deadline deadline) = 0;
  // Every call in flight at once, so that a home asking all its members waits for the slowest
  // rather than for their sum; the answers in the calls' order. This default makes them one
  // after another, which is all an in-process transport (the tests') can do.
  virtual std::vector<Result<std::vector<BucketReport>>> DirectAll(const std::vector<DirectCall>& calls,
                                                                   Deadline deadline) {
    std::vector<Result<std::vector<BucketReport>>> out;
    out.reserve(calls.size());
    for (const DirectCall& call : calls) out.push_back(Direct(call.address, call.request, deadline));
    return out;
  }
};

}  // namespace limits::zone
