// Feeds: any bytes as one of the Zone service's four messages (the first byte picks which:
// ExchangeRequest and DirectAnswer as a home reads them, ExchangeAnswer and DirectRequest as a
// member reads them), parsed by protobuf and checked by rpc/zone_codec.h's Decode. A decoded
// ExchangeRequest is then answered by a ZoneHome, and a decoded DirectAnswer acknowledged.
// Checks: whatever Decode accepts keeps its promises (names UTF-8 and within their lengths,
// partitions of the topic and each counted once, buckets reported once, places at most 2^40,
// directives numbered, rate buckets reported once, shares at most the whole rate); encoding it
// and decoding again gives the same; the home takes any accepted message without a sanitizer
// report, never grants more than the bucket's limit, nor rate shares past the whole rate.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "common/utf8.h"
#include "fuzz_check.h"
#include "limits/zone/zone_home.h"
#include "rpc/zone_codec.h"

namespace {
using namespace limits;
using namespace limits::rpc;

constexpr int32_t kPartitions = 16;
constexpr uint64_t kLimit = 100;

void CheckKey(const zone::BucketKey& k) {
  FUZZ_CHECK(!k.tenant.empty() && k.tenant.size() <= 255 && IsValidUtf8(k.tenant));
  FUZZ_CHECK(k.policy.size() <= 255 && IsValidUtf8(k.policy));
}

void CheckReports(const std::vector<zone::BucketReport>& reports) {
  std::set<zone::BucketKey> keys;
  for (const zone::BucketReport& r : reports) {
    CheckKey(r.key);
    FUZZ_CHECK(keys.insert(r.key).second);
    FUZZ_CHECK(r.report.seq > 0 && r.report.unused <= kMaxZonePlaces && r.want <= kMaxZonePlaces);
    std::set<int32_t> partitions;
    for (const zone::PartitionCount& c : r.report.counts) {
      FUZZ_CHECK(c.partition >= 0 && c.partition < kPartitions && partitions.insert(c.partition).second);
      FUZZ_CHECK(c.active <= kMaxZonePlaces && c.admitted <= kMaxZonePlaces && c.consumed >= 0 && c.horizon >= 0);
    }
  }
}

void CheckDirectives(const std::vector<zone::BucketDirective>& directives) {
  for (const zone::BucketDirective& d : directives) {
    CheckKey(d.key);
    FUZZ_CHECK(d.directive.seq > 0 && d.directive.home > 0);
    FUZZ_CHECK(d.directive.delta <= static_cast<int64_t>(kMaxZonePlaces) &&
               d.directive.delta >= -static_cast<int64_t>(kMaxZonePlaces));
  }
}

bool SameReports(const std::vector<zone::BucketReport>& a, const std::vector<zone::BucketReport>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const zone::MemberReport &x = a[i].report, &y = b[i].report;
    if (a[i].key != b[i].key || a[i].want != b[i].want || a[i].trigger != b[i].trigger ||
        a[i].waiting != b[i].waiting || x.seq != y.seq ||
        x.unused != y.unused || x.applied_home != y.applied_home || x.applied_directive != y.applied_directive ||
        x.counts.size() != y.counts.size()) {
      return false;
    }
    for (size_t j = 0; j < x.counts.size(); ++j) {
      const zone::PartitionCount &c = x.counts[j], &d = y.counts[j];
      if (c.partition != d.partition || c.active != d.active || c.consumed != d.consumed || c.horizon != d.horizon ||
          c.admitted != d.admitted || c.generation != d.generation || c.caught_up != d.caught_up) {
        return false;
      }
    }
  }
  return true;
}

void CheckRates(const std::vector<zone::RateReport>& rates) {
  std::set<zone::BucketKey> keys;
  for (const zone::RateReport& r : rates) {
    CheckKey(r.key);
    FUZZ_CHECK(keys.insert(r.key).second);
    FUZZ_CHECK(r.demand <= kMaxZonePlaces && r.applied <= zone::kWholeRate);
  }
}

bool SameRates(const std::vector<zone::RateReport>& a, const std::vector<zone::RateReport>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].demand != b[i].demand || a[i].applied != b[i].applied) return false;
  }
  return true;
}

bool SameShares(const std::vector<zone::RateShare>& a, const std::vector<zone::RateShare>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].share != b[i].share) return false;
  }
  return true;
}

bool SameDirectives(const std::vector<zone::BucketDirective>& a, const std::vector<zone::BucketDirective>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || a[i].directive.delta != b[i].directive.delta ||
        a[i].directive.seq != b[i].directive.seq || a[i].directive.home != b[i].directive.home) {
      return false;
    }
  }
  return true;
}

// The home answers, and grants its urgent asks what waits (GrantWaiting, as the agent does
// after the answer's calls); what it grants, over both rounds (the same report twice: the
// second is not newer, so the first round's grants stay in flight), is at most the bucket's
// limit.
void Home(const zone::ExchangeRequest& request, bool acknowledge) {
  const std::vector<std::string> members = {"a", "b", request.member};
  zone::ZoneHome home(kPartitions, 60'000, [](const zone::BucketKey&) { return kLimit; },
                      [](const zone::BucketKey&) { return true; }, 1'000);
  for (const std::string& m : {"a", "b"}) home.Answer({m, {}}, members, 1'000);
  std::map<zone::BucketKey, int64_t> granted;
  for (int round = 0; round < 2; ++round) {
    if (acknowledge) {
      home.Acknowledge(request.member, request.reports);
      continue;
    }
    zone::ExchangeAnswer answer = home.Answer(request, members, 2'000 + round);
    for (zone::BucketDirective& d : home.GrantWaiting(request, answer)) answer.directives.push_back(std::move(d));
    for (const zone::BucketDirective& d : answer.directives) {
      if (d.directive.delta > 0) granted[d.key] += d.directive.delta;
    }
    for (const zone::RateShare& r : answer.rate_shares) FUZZ_CHECK(r.share <= zone::kWholeRate);
  }
  for (const auto& [key, places] : granted) FUZZ_CHECK(places <= static_cast<int64_t>(kLimit));
  // The other members' rate reports, then this one's again: the shares given (each member's
  // last) never sum past the whole rate, whatever the members claim to apply.
  std::map<std::pair<std::string, zone::BucketKey>, uint64_t> given;
  auto note = [&](const std::string& member, const zone::ExchangeAnswer& answer) {
    for (const zone::RateShare& r : answer.rate_shares) given[{member, r.key}] = r.share;
  };
  for (const std::string& m : {"a", "b"}) note(m, home.Answer({m, {}, request.rates}, members, 3'000));
  note(request.member, home.Answer(request, members, 3'001));
  std::map<zone::BucketKey, uint64_t> total;
  for (const auto& [at, share] : given) total[at.second] += share;
  for (const auto& [key, sum] : total) FUZZ_CHECK(sum <= zone::kWholeRate);
}
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t kind = data[0] % 4;
  const std::string_view body = limits::fuzz::AsView(data + 1, size - 1);
  auto parse = [&](auto& message) { return message.ParseFromArray(body.data(), static_cast<int>(body.size())); };
  switch (kind) {
    case 0: {
      wire::ExchangeRequest m;
      if (!parse(m)) return 0;
      Result<zone::ExchangeRequest> r = Decode(m, kPartitions);
      if (!r.ok()) return 0;
      FUZZ_CHECK(!r->member.empty() && r->member.size() <= kMaxMemberLength && IsValidUtf8(r->member));
      CheckReports(r->reports);
      CheckRates(r->rates);
      wire::ExchangeRequest again;
      Encode(*r, &again);
      Result<zone::ExchangeRequest> r2 = Decode(again, kPartitions);
      FUZZ_CHECK(r2.ok() && r2->member == r->member && SameReports(r2->reports, r->reports) &&
                 SameRates(r2->rates, r->rates));
      Home(*r, false);
      return 0;
    }
    case 1: {
      wire::ExchangeAnswer m;
      if (!parse(m)) return 0;
      Result<zone::ExchangeAnswer> r = Decode(m);
      if (!r.ok()) return 0;
      for (const zone::BucketKey& k : r->roster) CheckKey(k);
      CheckDirectives(r->directives);
      for (const zone::RateShare& s : r->rate_shares) {
        CheckKey(s.key);
        FUZZ_CHECK(s.share <= zone::kWholeRate);
      }
      for (const zone::BucketKey& k : r->full) CheckKey(k);
      wire::ExchangeAnswer again;
      Encode(*r, &again);
      Result<zone::ExchangeAnswer> r2 = Decode(again);
      FUZZ_CHECK(r2.ok() && r2->roster == r->roster && SameDirectives(r2->directives, r->directives) &&
                 SameShares(r2->rate_shares, r->rate_shares) && r2->full == r->full);
      return 0;
    }
    case 2: {
      wire::DirectRequest m;
      if (!parse(m)) return 0;
      Result<DirectRequest> r = Decode(m);
      if (!r.ok()) return 0;
      FUZZ_CHECK(!r->home.empty() && r->home.size() <= kMaxMemberLength && IsValidUtf8(r->home));
      CheckDirectives(r->directives);
      for (const zone::BucketKey& k : r->reports) CheckKey(k);
      wire::DirectRequest again;
      Encode(*r, &again);
      Result<DirectRequest> r2 = Decode(again);
      FUZZ_CHECK(r2.ok() && r2->home == r->home && SameDirectives(r2->directives, r->directives) &&
                 r2->reports == r->reports);
      return 0;
    }
    default: {
      wire::DirectAnswer m;
      if (!parse(m)) return 0;
      Result<std::vector<zone::BucketReport>> r = Decode(m, kPartitions);
      if (!r.ok()) return 0;
      CheckReports(*r);
      wire::DirectAnswer again;
      Encode(*r, &again);
      Result<std::vector<zone::BucketReport>> r2 = Decode(again, kPartitions);
      FUZZ_CHECK(r2.ok() && SameReports(*r2, *r));
      Home({"c", *r}, true);
      return 0;
    }
  }
}
