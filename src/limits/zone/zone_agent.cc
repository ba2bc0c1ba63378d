#include "limits/zone/zone_agent.h"

#include <algorithm>
#include <utility>

namespace limits::zone {

ZoneAgent::ZoneAgent(Options options, ZoneEnvironment& env, ZoneTransport& transport, const Clock& clock)
    : options_(std::move(options)),
      name_(options_.self.id + "@" + std::to_string(clock.NowMillis())),
      env_(env),
      transport_(transport),
      clock_(clock),
      member_(options_.lease_ms),
      home_(
          options_.num_partitions, options_.lease_ms, [this](const BucketKey& key) { return env_.LimitOf(key); },
          [this](const BucketKey& key) { return HomeOf(key, ring_ids_) == options_.self.id; }, clock.SteadyMillis(),
          IncarnationTiebreak(options_.self.id)) {}

std::vector<std::string> ZoneAgent::IdsOf(const std::vector<ZonePeer>& peers) {
  std::vector<std::string> out;
  for (const ZonePeer& p : peers) out.push_back(p.id);
  return out;
}

namespace {
std::string Placeholder(const std::string& id) { return id + "@?"; }
// The ring id a member name carries: all before its last '@'.
std::string_view IdOfName(std::string_view name) {
  const size_t at = name.rfind('@');
  return at == std::string_view::npos ? name : name.substr(0, at);
}
}  // namespace

std::vector<std::string> ZoneAgent::NamesOf(const std::vector<ZonePeer>& peers) const {
  std::vector<std::string> out;
  for (const ZonePeer& p : peers) {
    auto it = names_.find(p.id);
    out.push_back(it == names_.end() ? Placeholder(p.id) : it->second);
  }
  return out;
}

void ZoneAgent::Heard(const std::string& member) {
  const std::string id(IdOfName(member));
  auto [it, first] = names_.try_emplace(id, member);
  if (first) {
    home_.Renamed(Placeholder(id), member);
  } else {
    it->second = member;  // a restart: the earlier name is forgotten once it can be
  }
}

std::vector<ZoneBucket> ZoneAgent::States(const std::vector<std::pair<BucketKey, uint64_t>>& buckets) {
  const std::vector<std::string> ids = IdsOf(env_.Members());
  const int64_t now = clock_.SteadyMillis();
  std::vector<ZoneBucket> out;
  out.reserve(buckets.size());
  std::lock_guard lock(member_mu_);
  for (const auto& [key, limit] : buckets) {
    if (limit == 0) {
      out.push_back({});  // unlimited
      continue;
    }
    const std::string home = HomeOf(key, ids);
    // The lease is the home's: a member without a ring (or whose ring lost every member) knows
    // no home and admits nothing (unknown).
    out.push_back(member_.StateOf(key, home, limit, options_.num_partitions, now));
  }
  return out;
}

void ZoneAgent::SetShared(bool shared) {
  if (shared_.exchange(shared, std::memory_order_relaxed) == shared) return;
  std::lock_guard lock(member_mu_);
  for (const BucketKey& key : member_.Hot()) {
    if (MemberBucket* b = member_.Find(key)) b->Drop();  // its next report says 0 unused
  }
}

void ZoneAgent::AskToTurnHot(const std::vector<BucketKey>& keys) {
  if (keys.empty()) return;
  {
    std::lock_guard lock(member_mu_);
    triggered_.insert(keys.begin(), keys.end());
  }
  if (wake_) wake_();
}

BucketReport ZoneAgent::ReportOf(const BucketKey& key, bool trigger) {
  MemberBucket* bucket;
  {
    std::lock_guard lock(member_mu_);
    bucket = &member_.Reporting(key);  // never removed: good after the lock
  }
  const MemberBucket::Holding held = bucket->Hold();
  std::vector<PartitionCount> counts = env_.CountsOf(key);
  // It asks to top up to about four times what it spent since its last report (at least
  // min_want), not for that much more each time: an idle member would otherwise gather
  // places every round that a busy one then waits for. A cold bucket's report asks too: its
  // first directive should come with places (beyond the room it had on its floors).
  const uint64_t target = std::max(options_.min_want, 4 * held.spent);
  // On static shares it asks for nothing: what it got would be dropped when the zone is
  // shared again (SetShared).
  const uint64_t want = !Shared() || target <= held.unused ? 0 : target - held.unused;
  return BucketReport{key, bucket->Report(held, std::move(counts)), want, trigger};
}

Status ZoneAgent::ExchangeWith(const ZonePeer& home, const std::vector<BucketKey>& keys,
                               const std::set<BucketKey>& triggers, uint64_t need, Deadline deadline,
                               std::vector<RateReport> rates) {
  ExchangeRequest request{name_, {}, std::move(rates)};
  for (const BucketKey& key : keys) {
    request.reports.push_back(ReportOf(key, triggers.contains(key)));
    BucketReport& r = request.reports.back();
    if (need > r.report.unused) {
      // What waits, all of it when free, and its usual top-up with it (so that the next
      // streams do not wait for a call of their own).
      r.waiting = need - r.report.unused;
      r.want += r.waiting;
    }
  }
  const int64_t sent = clock_.SteadyMillis();
  Result<ExchangeAnswer> answer =
      home.id == options_.self.id ? Exchange(request, deadline) : transport_.Exchange(home.address, request, deadline);
  if (!answer.ok()) return answer.status();
  rates_.Apply(answer->rate_shares);
  std::lock_guard lock(member_mu_);
  for (const BucketDirective& d : answer->directives) {
    member_.Apply(d.key, d.directive);
    if (d.directive.delta > 0) full_until_.erase(d.key);
  }
  for (const BucketKey& key : answer->full) full_until_[key] = clock_.SteadyMillis() + options_.silent_hold_ms;
  member_.Heard(home.id, std::move(answer->roster), sent);
  silent_until_.erase(home.id);
  return Status::OK();
}

void ZoneAgent::DirectMembers(const std::vector<Directed>& sends, Deadline deadline) {
  std::vector<std::pair<const Directed*, Result<std::vector<BucketReport>>>> answers;
  std::vector<DirectCall> calls;
  std::vector<const Directed*> called;
  for (const Directed& s : sends) {
    if (s.peer.id == options_.self.id) {
      answers.emplace_back(&s, Direct(s.request));
    } else {
      calls.push_back({s.peer.address, s.request});
      called.push_back(&s);
    }
  }
  // A request whose time is up makes no call: the members report at their next exchanges.
  if (!calls.empty() && !Expired(deadline)) {
    std::vector<Result<std::vector<BucketReport>>> replies = transport_.DirectAll(calls, deadline);
    for (size_t i = 0; i < called.size() && i < replies.size(); ++i) {
      answers.emplace_back(called[i], std::move(replies[i]));
    }
  }
  std::lock_guard lock(home_mu_);
  for (const auto& [sent, reports] : answers) {
    // One that did not answer reports (acknowledges) at its next exchange; until then, a
    // return stays held.
    if (reports.ok()) home_.Acknowledge(sent->name, *reports);
  }
}

MemberBucket* ZoneAgent::HotBucket(const BucketKey& key) {
  std::lock_guard lock(member_mu_);
  return member_.Find(key);  // never removed, nor made cold again: good after the lock
}

std::optional<ZonePeer> ZoneAgent::HomePeerOf(const BucketKey& key) {
  const std::vector<ZonePeer> peers = env_.Members();
  const std::vector<std::string> ids = IdsOf(peers);
  const std::string id = HomeOf(key, ids);
  auto it = std::find_if(peers.begin(), peers.end(), [&](const ZonePeer& p) { return p.id == id; });
  if (it == peers.end()) return std::nullopt;
  std::lock_guard lock(member_mu_);
  auto silent = silent_until_.find(id);
  if (silent != silent_until_.end() && clock_.SteadyMillis() < silent->second) return std::nullopt;
  return *it;
}

Deadline ZoneAgent::CallsDeadline(Deadline caller) const {
  return std::min(Within(caller, kCallsShare),
                  std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.request_budget_ms));
}

bool ZoneAgent::CallFor(const ZonePeer& home, const std::vector<BucketKey>& keys, const std::set<BucketKey>& triggers,
                        uint64_t need, Deadline deadline) {
  if (Expired(deadline)) return false;  // the request's time is up, not the home's fault
  const Status s = ExchangeWith(home, keys, triggers, need, deadline);
  if (s.ok()) return true;
  // The home answered, busy with the bucket's other asks until this request's time ran out:
  // it is there, and the next request asks it.
  if (s.IsWouldBlock()) return false;
  std::lock_guard lock(member_mu_);
  silent_until_[home.id] = clock_.SteadyMillis() + options_.silent_hold_ms;
  return false;
}

double ZoneAgent::RateShareOf(const BucketKey& key, double rate, double bytes) {
  bool first = false;
  const double share = rates_.ShareFor(key, rate, bytes, &first);
  // No share yet: its burst serves until the home hears its demand, soon.
  if (first && wake_) wake_();
  return share;
}

ZoneAgent::RateView ZoneAgent::DescribeRate(const BucketKey& key) {
  RateView v;
  v.home = HomeOf(key, IdsOf(env_.Members()));
  v.share = rates_.Current(key);
  std::lock_guard lock(home_mu_);
  if (const std::optional<uint64_t> held = home_.RateHeld(key)) {
    v.zone_held = static_cast<double>(*held) / static_cast<double>(kWholeRate);
  }
  return v;
}

void ZoneAgent::Round() {
  const std::vector<ZonePeer> peers = env_.Members();
  const std::vector<std::string> ids = IdsOf(peers);
  std::map<std::string, std::vector<BucketKey>> by_home;  // ring id -> buckets to report there
  std::map<std::string, std::vector<RateReport>> rates_by_home;
  std::set<BucketKey> triggers;
  {
    std::lock_guard lock(member_mu_);
    for (const BucketKey& key : member_.Hot()) by_home[HomeOf(key, ids)].push_back(key);
    for (const ZonePeer& p : peers) {
      for (const BucketKey& key : member_.Pending(p.id)) by_home[p.id].push_back(key);
    }
    for (const BucketKey& key : triggered_) {
      by_home[HomeOf(key, ids)].push_back(key);
      triggers.insert(key);
    }
    triggered_.clear();
  }
  for (RateReport& r : rates_.Reports(clock_.SteadyMillis())) {
    rates_by_home[HomeOf(r.key, ids)].push_back(std::move(r));
  }
  for (const ZonePeer& p : peers) {
    std::vector<BucketKey>& keys = by_home[p.id];
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    if (!ExchangeWith(p, keys, triggers, 0, kNoDeadline, std::move(rates_by_home[p.id])).ok()) {
      // Asked again next round: the home may have missed it.
      std::lock_guard lock(member_mu_);
      for (const BucketKey& key : keys) {
        if (triggers.contains(key)) triggered_.insert(key);
      }
    }
  }
  std::lock_guard lock(home_mu_);
  ring_ids_ = ids;
  home_.Tick(NamesOf(peers), clock_.SteadyMillis());
}

bool ZoneAgent::KnownFull(const BucketKey& key) {
  std::lock_guard lock(member_mu_);
  auto it = full_until_.find(key);
  if (it == full_until_.end()) return false;
  if (clock_.SteadyMillis() < it->second) return true;
  full_until_.erase(it);
  return false;
}

bool ZoneAgent::Acquire(const BucketKey& key, uint64_t need, Deadline deadline) {
  const std::optional<ZonePeer> home = HomePeerOf(key);
  MemberBucket* bucket = HotBucket(key);
  if (!home || bucket == nullptr) return false;  // not hot here: the next request sees its state
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (KnownFull(key)) break;  // at the limit: asking again changes nothing
    // A failed call fails closed: what it holds is all it spends.
    if (!CallFor(*home, {key}, {}, std::max<uint64_t>(1, need), deadline)) return false;
    if (bucket->unused() >= need) return true;
  }
  return bucket->unused() > 0;
}

bool ZoneAgent::TurnHot(const BucketKey& key, uint64_t need, Deadline deadline) {
  const std::optional<ZonePeer> home = HomePeerOf(key);
  if (!home) return false;
  // The exchange makes the ledger, which has the other members report at once and, once every
  // partition is counted, brings this member's first directive (ZoneHome::GrantWaiting); a
  // second exchange when the reports did not all come.
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!CallFor(*home, {key}, {key}, need, deadline)) return false;
    MemberBucket* bucket = HotBucket(key);
    if (bucket == nullptr) continue;
    // Hot with nothing: what is free went to others first; ask for it (they give back).
    return bucket->unused() >= need || Acquire(key, need, deadline);
  }
  return false;
}

bool ZoneAgent::Refresh(const BucketKey& key, Deadline deadline) {
  const std::optional<ZonePeer> home = HomePeerOf(key);
  return home && CallFor(*home, {}, {}, 0, deadline);
}

Result<ExchangeAnswer> ZoneAgent::Exchange(const ExchangeRequest& request, Deadline deadline) {
  // One urgent ask of a bucket at a time, from its report requests and recalls to its answer:
  // concurrent asks (Loki's frontend calls every owner of a push at once) would take from each
  // other what their calls freed.
  std::vector<uint64_t> urgent;
  for (const BucketReport& r : request.reports) {
    if (r.waiting > 0) urgent.push_back(HashOf(r.key));
  }
  const auto serial = asks_.Take(urgent, deadline);
  if (!serial) return Status::WouldBlock("zone: the asks of the bucket ahead of this one took its time");
  const std::vector<ZonePeer> peers = env_.Members();
  ExchangeAnswer answer;
  std::vector<BucketKey> starved;
  {
    std::lock_guard lock(home_mu_);
    ring_ids_ = IdsOf(peers);
    Heard(request.member);
    starved = home_.Starved(request);
  }
  // Out of headroom while the others' holdings are not known: their reports first, so that
  // this answer grants what they freed, or recalls what they hold unused.
  if (!starved.empty()) AskForReports(starved, request.member, peers, deadline);
  {
    std::lock_guard lock(home_mu_);
    answer = home_.Answer(request, NamesOf(peers), clock_.SteadyMillis(), clock_.NowMillis());
  }
  if (!answer.recalls.empty()) SendRecalls(answer.recalls, peers, deadline);
  answer.recalls.clear();  // sent: the asker asks again
  // A bucket this member asks to turn hot whose partitions are not all counted: the other
  // members report it now, so that its next exchange finds it counted.
  std::vector<BucketKey> uncounted;
  {
    std::lock_guard lock(home_mu_);
    uncounted = home_.Uncounted();
  }
  std::erase_if(uncounted, [&](const BucketKey& key) {
    return std::none_of(request.reports.begin(), request.reports.end(),
                        [&](const BucketReport& r) { return r.trigger && r.key == key; });
  });
  if (!uncounted.empty()) AskForReports(uncounted, request.member, peers, deadline);
  if (!serial->empty()) {
    // What those calls freed goes to this asker's waiting streams now: asking again, it would
    // find another asker had taken it.
    std::lock_guard lock(home_mu_);
    for (BucketDirective& d : home_.GrantWaiting(request, answer)) {
      if (d.directive.delta > 0) std::erase(answer.full, d.key);
      answer.directives.push_back(std::move(d));
    }
  }
  return answer;
}

void ZoneAgent::AskForReports(const std::vector<BucketKey>& keys, const std::string& asker,
                              const std::vector<ZonePeer>& peers, Deadline deadline) {
  std::vector<Directed> sends;
  {
    std::lock_guard lock(home_mu_);
    for (const ZonePeer& peer : peers) {
      if (peer.id == IdOfName(asker)) continue;
      auto it = names_.find(peer.id);
      if (it == names_.end()) continue;  // not heard from: it reports at its first exchange
      sends.push_back({peer, it->second, {options_.self.id, home_.RoomDirectives(keys, it->second), keys}});
    }
  }
  DirectMembers(sends, deadline);
}

void ZoneAgent::SendRecalls(const std::vector<Recall>& recalls, const std::vector<ZonePeer>& peers,
                            Deadline deadline) {
  std::map<std::string, DirectRequest> by_member;
  for (const Recall& r : recalls) {
    DirectRequest& d = by_member[r.member];
    d.home = options_.self.id;
    d.directives.push_back(r.directive);
  }
  std::vector<Directed> sends;
  for (auto& [member, request] : by_member) {
    const std::string_view id = IdOfName(member);
    auto peer = std::find_if(peers.begin(), peers.end(), [&](const ZonePeer& p) { return p.id == id; });
    if (peer == peers.end()) continue;  // left the ring: its headroom is freed once it is forgotten
    sends.push_back({*peer, member, std::move(request)});
  }
  DirectMembers(sends, deadline);
}

Result<std::vector<BucketReport>> ZoneAgent::Direct(const DirectRequest& request) {
  const std::vector<std::string> ids = IdsOf(env_.Members());
  std::vector<BucketKey> applied;
  {
    std::lock_guard lock(member_mu_);
    for (const BucketDirective& d : request.directives) {
      // Only a bucket's home directs it: a peer that is not could otherwise number its
      // directives above the home's, which this member would then drop.
      if (HomeOf(d.key, ids) != request.home) continue;
      member_.Apply(d.key, d.directive);
      applied.push_back(d.key);
    }
  }
  for (const BucketKey& key : request.reports) {
    if (HomeOf(key, ids) == request.home) applied.push_back(key);
  }
  std::sort(applied.begin(), applied.end());
  applied.erase(std::unique(applied.begin(), applied.end()), applied.end());
  std::vector<BucketReport> reports;
  for (const BucketKey& key : applied) reports.push_back(ReportOf(key, false));
  return reports;
}

ZoneAgent::BucketView ZoneAgent::Describe(const BucketKey& key, uint64_t limit) {
  BucketView v;
  v.home = HomeOf(key, IdsOf(env_.Members()));
  const ZoneBucket st = States({{key, limit}})[0];
  switch (st.mode) {
    case ZoneBucket::Mode::kUnlimited: v.state = "unlimited"; break;
    case ZoneBucket::Mode::kUnknown: v.state = "unknown"; break;
    case ZoneBucket::Mode::kCold:
      v.state = "cold";
      v.floor_room = st.floors.total();
      break;
    case ZoneBucket::Mode::kHot:
      v.state = "hot";
      v.headroom = st.member->unused();
      break;
  }
  return v;
}

std::optional<ZoneAgent::LedgerView> ZoneAgent::LedgerOf(const BucketKey& key) {
  std::lock_guard lock(home_mu_);
  const HomeLedger* ledger = home_.LedgerOf(key);
  if (ledger == nullptr) return std::nullopt;
  return LedgerView{ledger->limit(), ledger->Counted(), ledger->Held(), ledger->Free(), ledger->Learning(),
                    ledger->RoomsOpen()};
}

std::optional<uint64_t> ZoneAgent::HeadroomOf(const BucketKey& key) {
  const MemberBucket* bucket = HotBucket(key);
  if (bucket == nullptr) return std::nullopt;
  return bucket->unused();
}

}  // namespace limits::zone
