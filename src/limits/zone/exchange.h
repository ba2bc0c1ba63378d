// What a member and a home say to each other about the buckets of their zone, once a second
// per pair and at once on a trigger: the member's reports, the home's roster and directives
// (ARCHITECTURE.md, "Exact limits across a zone"). The Zone service carries them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

struct ExchangeRequest {
  // The node's name and when it started: a restarted node is a new member, whose predecessor
  // the home forgets once Kafka has moved its partitions on (a forgotten name stays forgotten).
  std::string member;
  std::vector<BucketReport> reports;
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
};

}  // namespace limits::zone
