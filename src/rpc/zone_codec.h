// The Zone service's wire messages (src/proto/zone.proto) to and from the zone room's own
// (limits/zone/exchange.h). Every byte comes from a peer, so decoding checks what a peer could
// get wrong or forge and answers kInvalidArgument naming the field: names that are not UTF-8
// or too long, a partition outside the topic or counted twice, a bucket reported twice, counts
// and headroom above 2^40 (no zone holds that many streams; sums never wrap), a rate bucket
// reported twice or a share above the whole rate, more entries than any zone sends. A decoded
// message is safe to hand to ZoneHome and ZoneMember.
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"
#include "limits/zone/exchange.h"
#include "proto/zone.pb.h"

namespace limits::rpc {

namespace wire = limitsd::zone::v1;

// Longest member name: a ring id (a host name, at most 253 bytes) and its registration time.
inline constexpr size_t kMaxMemberLength = 512;
// Most reports in one message: every bucket a member holds headroom for, tenants times their
// limited policies.
inline constexpr size_t kMaxZoneReports = 1 << 16;
// Most roster entries or directives in one answer: every bucket hot at one home.
inline constexpr size_t kMaxZoneEntries = 1 << 20;
// Above any count of streams, headroom or grant a zone can hold.
inline constexpr uint64_t kMaxZonePlaces = uint64_t{1} << 40;

using zone::DirectRequest;

void Encode(const zone::ExchangeRequest& in, wire::ExchangeRequest* out);
// The answer's recalls are the home's to send (Direct), not the asker's: they are not encoded.
void Encode(const zone::ExchangeAnswer& in, wire::ExchangeAnswer* out);
void Encode(const DirectRequest& in, wire::DirectRequest* out);
void Encode(const std::vector<zone::BucketReport>& in, wire::DirectAnswer* out);

// `num_partitions`: the topic's; every partition a message names must be below it.
Result<zone::ExchangeRequest> Decode(const wire::ExchangeRequest& in, int32_t num_partitions);
Result<zone::ExchangeAnswer> Decode(const wire::ExchangeAnswer& in);
Result<DirectRequest> Decode(const wire::DirectRequest& in);
Result<std::vector<zone::BucketReport>> Decode(const wire::DirectAnswer& in, int32_t num_partitions);

}  // namespace limits::rpc
