#include "node/tenant_series.h"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace limits {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

constexpr char kOther[] = "other";

MetricFamily Family(const std::string& name, const std::string& help, MetricType type) {
  MetricFamily f;
  f.name = name;
  f.help = help;
  f.type = type;
  return f;
}

void Add(MetricFamily& f, const std::string& tenant, double value) {
  ClientMetric m;
  m.label = {{"tenant", tenant}};
  if (f.type == MetricType::Counter) m.counter.value = value;
  else m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

}  // namespace

TenantSeries::TenantSeries(UsageStore& store, PartitionManager& partitions, TenantCounters& ingested_bytes,
                           TenantCounters& evictions, size_t max_series)
    : store_(store),
      partitions_(partitions),
      ingested_bytes_(ingested_bytes),
      evictions_(evictions),
      max_series_(max_series) {}

std::vector<MetricFamily> TenantSeries::Collect() const {
  std::unordered_map<std::string, TenantTotals> tenants;
  store_.ForEachTenant(*partitions_.Serving(), [&](const std::string& t, const TenantTotals& c) { tenants[t] = c; });

  // Forget the counters of tenants gone for a whole scrape interval.
  {
    std::lock_guard lock(mu_);
    std::set<std::string> absent;
    auto keep = [&](const std::string& t) {
      if (tenants.count(t)) return true;
      if (absent_once_.count(t)) return false;
      absent.insert(t);
      return true;
    };
    ingested_bytes_.Retain(keep);
    evictions_.Retain(keep);
    absent_once_ = std::move(absent);
  }

  // The tenants with series of their own: the most streams first (ties by name: stable).
  std::vector<std::pair<uint64_t, std::string>> ranked;
  for (const auto& [t, c] : tenants) ranked.emplace_back(c.total_streams + c.retained_streams, t);
  std::set<std::string> counted_only;  // their last counts, before they are forgotten
  for (const TenantCounters* source : {&ingested_bytes_, &evictions_}) {
    for (const auto& [t, v] : source->Snapshot()) {
      if (!tenants.count(t) && counted_only.insert(t).second) ranked.emplace_back(0, t);
    }
  }
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::set<std::string> own;
  for (size_t i = 0; i < ranked.size() && i < max_series_; ++i) own.insert(ranked[i].second);
  auto label = [&](const std::string& t) -> const std::string& {
    static const std::string other = kOther;
    return own.count(t) ? t : other;
  };

  std::map<std::string, TenantTotals> gauges;
  for (const auto& [t, c] : tenants) {
    TenantTotals& g = gauges[label(t)];
    g.active_streams += c.active_streams;
    g.total_streams += c.total_streams;
    g.retained_streams += c.retained_streams;
  }
  MetricFamily streams = Family("loki_ingest_limits_streams",
                                "The current number of streams per tenant, including streams outside the active "
                                "window, in the partitions this node serves.",
                                MetricType::Gauge);
  MetricFamily active = Family("loki_ingest_limits_active_streams",
                               "The current number of active streams per tenant in the partitions this node serves.",
                               MetricType::Gauge);
  MetricFamily retained = Family("limitsd_retained_streams",
                                 "Streams per tenant held for partitions this node does not serve (revoked but "
                                 "retained, pending or replaying): not counted by limits here.",
                                 MetricType::Gauge);
  for (const auto& [t, g] : gauges) {
    Add(streams, t, static_cast<double>(g.total_streams));
    Add(active, t, static_cast<double>(g.active_streams));
    if (g.retained_streams > 0) Add(retained, t, static_cast<double>(g.retained_streams));
  }

  auto counters = [&](const TenantCounters& source, MetricFamily family) {
    std::map<std::string, double> sums;
    for (const auto& [t, v] : source.Snapshot()) sums[label(t)] += v;
    for (const auto& [t, v] : sums) Add(family, t, v);
    return family;
  };
  MetricFamily tenants_gauge = Family("limitsd_tenants", "Tenants with streams on this node.", MetricType::Gauge);
  ClientMetric n;
  n.gauge.value = static_cast<double>(tenants.size());
  tenants_gauge.metric.push_back(n);

  std::vector<MetricFamily> out;
  out.push_back(std::move(streams));
  out.push_back(std::move(active));
  out.push_back(std::move(retained));
  out.push_back(counters(ingested_bytes_,
                         Family("loki_ingest_limits_tenant_ingested_bytes_total",
                                "Total number of bytes ingested per tenant within the active window. This is not a "
                                "global total, as tenants can be sharded over multiple pods.",
                                MetricType::Counter)));
  out.push_back(counters(evictions_, Family("loki_ingest_limits_stream_evictions_total",
                                            "The total number of streams evicted due to age per tenant. This is not "
                                            "a global total, as tenants can be sharded over multiple pods.",
                                            MetricType::Counter)));
  out.push_back(std::move(tenants_gauge));
  return out;
}

}  // namespace limits
