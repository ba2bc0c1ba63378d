#include "rpc/zone_codec.h"

#include <set>
#include <string_view>
#include <utility>

#include "common/utf8.h"
#include "limits/usage/policy_names.h"
#include "limits/usage/usage_store.h"

namespace limits::rpc {
namespace {

Status Invalid(const std::string& field, const std::string& why) { return Status::InvalidArgument(field + " " + why); }

Status CheckText(const std::string& field, std::string_view value, size_t max, bool required) {
  if (required && value.empty()) return Invalid(field, "is required");
  if (value.size() > max) return Invalid(field, "is longer than " + std::to_string(max) + " bytes");
  if (!IsValidUtf8(value)) return Invalid(field, "is not valid UTF-8 (byte " + std::to_string(FirstInvalidUtf8(value)) + ")");
  return Status::OK();
}

Status CheckPlaces(const std::string& field, uint64_t value) {
  if (value > kMaxZonePlaces) return Invalid(field, "is above 2^40");
  return Status::OK();
}

void EncodeKey(const zone::BucketKey& in, wire::BucketKey* out) {
  out->set_tenant(in.tenant);
  out->set_policy(in.policy);
}

Result<zone::BucketKey> DecodeKey(const wire::BucketKey& in, const std::string& field) {
  RETURN_IF_ERROR(CheckText(field + ".tenant", in.tenant(), kMaxTenantLength, true));
  RETURN_IF_ERROR(CheckText(field + ".policy", in.policy(), kMaxPolicyLength, false));
  return zone::BucketKey{in.tenant(), in.policy()};
}

void EncodeDirective(const zone::BucketDirective& in, wire::BucketDirective* out) {
  EncodeKey(in.key, out->mutable_key());
  out->mutable_directive()->set_delta(in.directive.delta);
  out->mutable_directive()->set_seq(in.directive.seq);
  out->mutable_directive()->set_home(in.directive.home);
}

Result<zone::BucketDirective> DecodeDirective(const wire::BucketDirective& in, const std::string& field) {
  ASSIGN_OR_RETURN(zone::BucketKey key, DecodeKey(in.key(), field + ".key"));
  const wire::Directive& d = in.directive();
  const int64_t max = static_cast<int64_t>(kMaxZonePlaces);
  if (d.delta() > max || d.delta() < -max) return Invalid(field + ".directive.delta", "is beyond ±2^40");
  if (d.seq() == 0 || d.home() == 0) return Invalid(field + ".directive", "has no sequence number or home");
  return zone::BucketDirective{std::move(key), zone::Directive{d.delta(), d.seq(), d.home()}};
}

void EncodeReport(const zone::BucketReport& in, wire::BucketReport* out) {
  EncodeKey(in.key, out->mutable_key());
  wire::MemberReport* r = out->mutable_report();
  r->set_seq(in.report.seq);
  for (const zone::PartitionCount& c : in.report.counts) {
    wire::PartitionCount* w = r->add_counts();
    w->set_partition(c.partition);
    w->set_active(c.active);
    w->set_consumed(c.consumed);
    w->set_horizon(c.horizon);
    w->set_admitted(c.admitted);
    w->set_generation(c.generation);
    w->set_caught_up(c.caught_up);
  }
  r->set_unused(in.report.unused);
  r->set_applied_home(in.report.applied_home);
  r->set_applied_directive(in.report.applied_directive);
  out->set_want(in.want);
  out->set_trigger(in.trigger);
  out->set_waiting(in.waiting);
}

Result<zone::BucketReport> DecodeReport(const wire::BucketReport& in, int32_t num_partitions,
                                        const std::string& field) {
  ASSIGN_OR_RETURN(zone::BucketKey key, DecodeKey(in.key(), field + ".key"));
  const wire::MemberReport& r = in.report();
  if (r.seq() == 0) return Invalid(field + ".report.seq", "is 0 (reports are numbered from 1)");
  if (r.counts_size() > num_partitions) {
    return Invalid(field + ".report.counts", "has more entries than the topic has partitions");
  }
  RETURN_IF_ERROR(CheckPlaces(field + ".report.unused", r.unused()));
  RETURN_IF_ERROR(CheckPlaces(field + ".want", in.want()));
  if (in.waiting() > in.want()) return Invalid(field + ".waiting", "is more than want");
  zone::BucketReport out{std::move(key), {}, in.want(), in.trigger(), in.waiting()};
  out.report.seq = r.seq();
  out.report.unused = r.unused();
  out.report.applied_home = r.applied_home();
  out.report.applied_directive = r.applied_directive();
  out.report.counts.reserve(static_cast<size_t>(r.counts_size()));
  std::set<int32_t> seen;
  for (int i = 0; i < r.counts_size(); ++i) {
    const wire::PartitionCount& c = r.counts(i);
    const std::string at = field + ".report.counts[" + std::to_string(i) + "]";
    if (c.partition() < 0 || c.partition() >= num_partitions) {
      return Invalid(at + ".partition", std::to_string(c.partition()) + " is not a partition of the topic (0-" +
                                            std::to_string(num_partitions - 1) + ")");
    }
    if (!seen.insert(c.partition()).second) {
      return Invalid(at + ".partition", std::to_string(c.partition()) + " is counted twice");
    }
    RETURN_IF_ERROR(CheckPlaces(at + ".active", c.active()));
    RETURN_IF_ERROR(CheckPlaces(at + ".admitted", c.admitted()));
    if (c.consumed() < 0 || c.horizon() < 0) return Invalid(at, "has a negative offset");
    out.report.counts.push_back(zone::PartitionCount{c.partition(), c.active(), c.consumed(), c.horizon(),
                                                     c.admitted(), c.generation(), c.caught_up()});
  }
  return out;
}

// Reports of one message, each bucket at most once.
Result<std::vector<zone::BucketReport>> DecodeReports(
    const google::protobuf::RepeatedPtrField<wire::BucketReport>& in, int32_t num_partitions) {
  if (in.size() > static_cast<int>(kMaxZoneReports)) {
    return Invalid("reports", "has more than " + std::to_string(kMaxZoneReports) + " entries");
  }
  std::vector<zone::BucketReport> out;
  out.reserve(static_cast<size_t>(in.size()));
  std::set<zone::BucketKey> seen;
  for (int i = 0; i < in.size(); ++i) {
    const std::string field = "reports[" + std::to_string(i) + "]";
    ASSIGN_OR_RETURN(zone::BucketReport report, DecodeReport(in[i], num_partitions, field));
    if (!seen.insert(report.key).second) return Invalid(field + ".key", "names a bucket reported twice");
    out.push_back(std::move(report));
  }
  return out;
}

Result<std::vector<zone::BucketDirective>> DecodeDirectives(
    const google::protobuf::RepeatedPtrField<wire::BucketDirective>& in) {
  if (in.size() > static_cast<int>(kMaxZoneEntries)) {
    return Invalid("directives", "has more than " + std::to_string(kMaxZoneEntries) + " entries");
  }
  std::vector<zone::BucketDirective> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    ASSIGN_OR_RETURN(zone::BucketDirective d, DecodeDirective(in[i], "directives[" + std::to_string(i) + "]"));
    out.push_back(std::move(d));
  }
  return out;
}

Result<std::vector<zone::BucketKey>> DecodeKeys(const google::protobuf::RepeatedPtrField<wire::BucketKey>& in,
                                               const std::string& field, size_t max) {
  if (in.size() > static_cast<int>(max)) return Invalid(field, "has more than " + std::to_string(max) + " entries");
  std::vector<zone::BucketKey> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    ASSIGN_OR_RETURN(zone::BucketKey key, DecodeKey(in[i], field + "[" + std::to_string(i) + "]"));
    out.push_back(std::move(key));
  }
  return out;
}

Status CheckShare(const std::string& field, uint64_t value) {
  if (value > zone::kWholeRate) return Invalid(field, "is above the whole rate (1000000)");
  return Status::OK();
}

Result<std::vector<zone::RateReport>> DecodeRates(const google::protobuf::RepeatedPtrField<wire::RateReport>& in) {
  if (in.size() > static_cast<int>(kMaxZoneReports)) {
    return Invalid("rates", "has more than " + std::to_string(kMaxZoneReports) + " entries");
  }
  std::vector<zone::RateReport> out;
  out.reserve(static_cast<size_t>(in.size()));
  std::set<zone::BucketKey> seen;
  for (int i = 0; i < in.size(); ++i) {
    const std::string field = "rates[" + std::to_string(i) + "]";
    ASSIGN_OR_RETURN(zone::BucketKey key, DecodeKey(in[i].key(), field + ".key"));
    RETURN_IF_ERROR(CheckPlaces(field + ".demand", in[i].demand()));
    RETURN_IF_ERROR(CheckShare(field + ".applied", in[i].applied()));
    if (!seen.insert(key).second) return Invalid(field + ".key", "names a rate bucket reported twice");
    out.push_back({std::move(key), in[i].demand(), in[i].applied()});
  }
  return out;
}

Result<std::vector<zone::RateShare>> DecodeShares(const google::protobuf::RepeatedPtrField<wire::RateShare>& in) {
  if (in.size() > static_cast<int>(kMaxZoneReports)) {
    return Invalid("rate_shares", "has more than " + std::to_string(kMaxZoneReports) + " entries");
  }
  std::vector<zone::RateShare> out;
  out.reserve(static_cast<size_t>(in.size()));
  for (int i = 0; i < in.size(); ++i) {
    const std::string field = "rate_shares[" + std::to_string(i) + "]";
    ASSIGN_OR_RETURN(zone::BucketKey key, DecodeKey(in[i].key(), field + ".key"));
    RETURN_IF_ERROR(CheckShare(field + ".share", in[i].share()));
    out.push_back({std::move(key), in[i].share()});
  }
  return out;
}

}  // namespace

void Encode(const zone::ExchangeRequest& in, wire::ExchangeRequest* out) {
  out->set_member(in.member);
  for (const zone::BucketReport& r : in.reports) EncodeReport(r, out->add_reports());
  for (const zone::RateReport& r : in.rates) {
    wire::RateReport* w = out->add_rates();
    EncodeKey(r.key, w->mutable_key());
    w->set_demand(r.demand);
    w->set_applied(r.applied);
  }
}

void Encode(const zone::ExchangeAnswer& in, wire::ExchangeAnswer* out) {
  for (const zone::BucketKey& k : in.roster) EncodeKey(k, out->add_roster());
  for (const zone::BucketDirective& d : in.directives) EncodeDirective(d, out->add_directives());
  for (const zone::RateShare& r : in.rate_shares) {
    wire::RateShare* w = out->add_rate_shares();
    EncodeKey(r.key, w->mutable_key());
    w->set_share(r.share);
  }
  for (const zone::BucketKey& k : in.full) EncodeKey(k, out->add_full());
}

void Encode(const DirectRequest& in, wire::DirectRequest* out) {
  out->set_home(in.home);
  for (const zone::BucketDirective& d : in.directives) EncodeDirective(d, out->add_directives());
  for (const zone::BucketKey& k : in.reports) EncodeKey(k, out->add_reports());
}

void Encode(const std::vector<zone::BucketReport>& in, wire::DirectAnswer* out) {
  for (const zone::BucketReport& r : in) EncodeReport(r, out->add_reports());
}

Result<zone::ExchangeRequest> Decode(const wire::ExchangeRequest& in, int32_t num_partitions) {
  RETURN_IF_ERROR(CheckText("member", in.member(), kMaxMemberLength, true));
  ASSIGN_OR_RETURN(std::vector<zone::BucketReport> reports, DecodeReports(in.reports(), num_partitions));
  ASSIGN_OR_RETURN(std::vector<zone::RateReport> rates, DecodeRates(in.rates()));
  return zone::ExchangeRequest{in.member(), std::move(reports), std::move(rates)};
}

Result<zone::ExchangeAnswer> Decode(const wire::ExchangeAnswer& in) {
  zone::ExchangeAnswer out;
  ASSIGN_OR_RETURN(out.roster, DecodeKeys(in.roster(), "roster", kMaxZoneEntries));
  ASSIGN_OR_RETURN(out.directives, DecodeDirectives(in.directives()));
  ASSIGN_OR_RETURN(out.rate_shares, DecodeShares(in.rate_shares()));
  ASSIGN_OR_RETURN(out.full, DecodeKeys(in.full(), "full", kMaxZoneReports));
  return out;
}

Result<DirectRequest> Decode(const wire::DirectRequest& in) {
  RETURN_IF_ERROR(CheckText("home", in.home(), kMaxMemberLength, true));
  ASSIGN_OR_RETURN(std::vector<zone::BucketDirective> directives, DecodeDirectives(in.directives()));
  ASSIGN_OR_RETURN(std::vector<zone::BucketKey> reports, DecodeKeys(in.reports(), "reports", kMaxZoneReports));
  return DirectRequest{in.home(), std::move(directives), std::move(reports)};
}

Result<std::vector<zone::BucketReport>> Decode(const wire::DirectAnswer& in, int32_t num_partitions) {
  return DecodeReports(in.reports(), num_partitions);
}

}  // namespace limits::rpc
