#include "loadgen/reporter.h"

#include <cmath>
#include <string>
#include <vector>

#include "common/json.h"

namespace limits::loadgen {
namespace {

double Ms(uint64_t micros) { return static_cast<double>(micros) / 1000.0; }

double PerSecond(uint64_t n, double seconds) { return seconds > 0 ? static_cast<double>(n) / seconds : 0; }

void Latency(JsonWriter& j, const LatencyHistogram& h, bool with_p90) {
  j.Key("latency_ms").BeginObject().Field("p50", Ms(h.Percentile(0.5)));
  if (with_p90) j.Field("p90", Ms(h.Percentile(0.9)));
  j.Field("p99", Ms(h.Percentile(0.99))).Field("max", Ms(h.max())).EndObject();
}

// The text columns: header and width, in print order.
struct Column {
  const char* name;
  int width;
};

}  // namespace

Reporter::Reporter(LoadCounters& counters, Shown shown, bool json, FILE* out, Clock::time_point start)
    : counters_(counters), shown_(shown), json_(json), out_(out), start_(start), last_(start) {}

Reporter::Totals Reporter::Read() const {
  Totals t;
  t.queued = counters_.records_queued.load(std::memory_order_relaxed);
  t.delivered = counters_.records_delivered.load(std::memory_order_relaxed);
  t.failed = counters_.records_failed.load(std::memory_order_relaxed);
  t.requests = counters_.requests.load(std::memory_order_relaxed);
  t.request_errors = counters_.request_errors.load(std::memory_order_relaxed);
  t.streams = counters_.streams.load(std::memory_order_relaxed);
  for (int r = 0; r < 4; ++r) t.rejected[r] = counters_.rejected[r].load(std::memory_order_relaxed);
  t.updates = counters_.updates.load(std::memory_order_relaxed);
  t.update_errors = counters_.update_errors.load(std::memory_order_relaxed);
  return t;
}

bool Reporter::Pending() const { return !(Read() == previous_); }

void Reporter::Header() {
  if (json_) return;
  std::string h = "   TIME";
  if (shown_.produce) h += "  PRODUCED/S  DELIVERED/S  DELIVERY_FAILED";
  if (shown_.exceeds) {
    h += "  REQUESTS/S  ERRORS  STREAMS/S  ACCEPTED/S";
    h += "  REJECTED/S: 1_FAILED  2_MAX_STREAMS  1001_RATE_LIMITED  P50_MS  P99_MS";
  }
  if (shown_.updates) h += "  UPDATES/S  U_ERRORS  U_P99_MS";
  std::fprintf(out_, "%s\n", h.c_str());
  std::fflush(out_);
}

void Reporter::Line(Clock::time_point now) {
  const Totals t = Read();
  const Totals& p = previous_;
  const double interval = std::chrono::duration<double>(now - last_).count();
  const double at = std::chrono::duration<double>(now - start_).count();
  exceeds_interval_.Clear();
  update_interval_.Clear();
  counters_.exceeds_latency.DrainInto(exceeds_interval_);
  counters_.update_latency.DrainInto(update_interval_);
  const uint64_t streams = t.streams - p.streams;
  uint64_t rejected[4];
  uint64_t rejected_all = 0;
  for (int r = 0; r < 4; ++r) rejected_all += rejected[r] = t.rejected[r] - p.rejected[r];
  if (json_) {
    JsonWriter j(false);
    j.BeginObject().Field("t_s", at).Field("interval_s", interval);
    if (shown_.produce) {
      j.Key("produce").BeginObject().Field("records", t.queued - p.queued).Field("delivered", t.delivered - p.delivered)
          .Field("delivery_failed", t.failed - p.failed).EndObject();
    }
    if (shown_.exceeds) {
      j.Key("exceeds_limits").BeginObject().Field("requests", t.requests - p.requests)
          .Field("errors", t.request_errors - p.request_errors).Field("streams", streams)
          .Field("accepted", streams - rejected_all).Key("rejected").BeginObject().Field("failed", rejected[1])
          .Field("max_streams", rejected[2]).Field("rate_limited", rejected[3]).Field("other", rejected[0]).EndObject();
      Latency(j, exceeds_interval_, false);
      j.EndObject();
    }
    if (shown_.updates) {
      j.Key("update_rates").BeginObject().Field("requests", t.updates - p.updates)
          .Field("errors", t.update_errors - p.update_errors);
      Latency(j, update_interval_, false);
      j.EndObject();
    }
    j.EndObject();
    std::fprintf(out_, "%s\n", j.Take().c_str());
  } else {
    auto rate = [&](uint64_t n) { return static_cast<unsigned long long>(PerSecond(n, interval) + 0.5); };
    std::string line;
    char buf[256];
    // Whole seconds on the ticks; the last, shorter interval shows where it ended.
    std::snprintf(buf, sizeof buf, std::abs(at - std::round(at)) < 0.05 ? "%6.0fs" : "%6.1fs", at);
    line += buf;
    if (shown_.produce) {
      std::snprintf(buf, sizeof buf, "  %10llu  %11llu  %15llu", rate(t.queued - p.queued),
                    rate(t.delivered - p.delivered),
                    static_cast<unsigned long long>(t.failed - p.failed));
      line += buf;
    }
    if (shown_.exceeds) {
      // Other reasons (not 1, 2 or 1001) are rare enough to show only in the summary and in --json.
      std::snprintf(buf, sizeof buf, "  %10llu  %6llu  %9llu  %10llu  %20llu  %13llu  %17llu  %6.2f  %6.2f",
                    rate(t.requests - p.requests), static_cast<unsigned long long>(t.request_errors - p.request_errors),
                    rate(streams), rate(streams - rejected_all), rate(rejected[1]), rate(rejected[2]),
                    rate(rejected[3]),
                    Ms(exceeds_interval_.Percentile(0.5)), Ms(exceeds_interval_.Percentile(0.99)));
      line += buf;
    }
    if (shown_.updates) {
      std::snprintf(buf, sizeof buf, "  %9llu  %8llu  %8.2f", rate(t.updates - p.updates),
                    static_cast<unsigned long long>(t.update_errors - p.update_errors),
                    Ms(update_interval_.Percentile(0.99)));
      line += buf;
    }
    std::fprintf(out_, "%s\n", line.c_str());
  }
  std::fflush(out_);
  exceeds_interval_.DrainInto(exceeds_total_);
  update_interval_.DrainInto(update_total_);
  previous_ = t;
  last_ = now;
}

void Reporter::Summary(Clock::time_point now, uint64_t undelivered, std::string_view ended_by) {
  // Whatever came in since the last line belongs to the totals too.
  counters_.exceeds_latency.DrainInto(exceeds_total_);
  counters_.update_latency.DrainInto(update_total_);
  const Totals t = Read();
  const double secs = std::chrono::duration<double>(now - start_).count();
  uint64_t rejected_all = 0;
  for (uint64_t r : t.rejected) rejected_all += r;
  const auto errors = counters_.Errors();
  if (json_) {
    JsonWriter j(false);
    j.BeginObject().Field("summary", true).Field("duration_s", secs).Field("ended_by", ended_by);
    if (shown_.produce) {
      j.Key("produce").BeginObject().Field("records", t.queued).Field("records_per_s", PerSecond(t.queued, secs))
          .Field("delivered", t.delivered).Field("delivery_failed", t.failed).Field("undelivered", undelivered)
          .EndObject();
    }
    if (shown_.exceeds) {
      j.Key("exceeds_limits").BeginObject().Field("requests", t.requests)
          .Field("requests_per_s", PerSecond(t.requests, secs)).Field("errors", t.request_errors)
          .Field("streams", t.streams).Field("streams_per_s", PerSecond(t.streams, secs))
          .Field("accepted", t.streams - rejected_all).Key("rejected").BeginObject().Field("failed", t.rejected[1])
          .Field("max_streams", t.rejected[2]).Field("rate_limited", t.rejected[3]).Field("other", t.rejected[0])
          .EndObject();
      Latency(j, exceeds_total_, true);
      j.EndObject();
    }
    if (shown_.updates) {
      j.Key("update_rates").BeginObject().Field("requests", t.updates)
          .Field("requests_per_s", PerSecond(t.updates, secs)).Field("errors", t.update_errors);
      Latency(j, update_total_, true);
      j.EndObject();
    }
    j.Key("errors").BeginArray();
    for (const auto& [kind, e] : errors) {
      j.BeginObject().Field("kind", kind).Field("count", e.count).Field("first", e.first).EndObject();
    }
    j.EndArray().EndObject();
    std::fprintf(out_, "%s\n", j.Take().c_str());
    std::fflush(out_);
    return;
  }
  auto u = [](uint64_t v) { return static_cast<unsigned long long>(v); };
  std::fprintf(out_, "summary: %.1f s (ended by %.*s)\n", secs, static_cast<int>(ended_by.size()), ended_by.data());
  if (shown_.produce) {
    std::fprintf(out_,
                 "  produce:       %llu records (%.0f/s), delivered %llu, delivery failed %llu, undelivered %llu\n",
                 u(t.queued), PerSecond(t.queued, secs), u(t.delivered), u(t.failed), u(undelivered));
  }
  if (shown_.exceeds) {
    std::fprintf(out_,
                 "  ExceedsLimits: %llu requests (%.0f/s), %llu errors; %llu streams (%.0f/s): accepted %llu, "
                 "rejected: "
                 "%llu failed (1), %llu max streams (2), %llu rate limited (1001)",
                 u(t.requests), PerSecond(t.requests, secs), u(t.request_errors), u(t.streams),
                 PerSecond(t.streams, secs), u(t.streams - rejected_all), u(t.rejected[1]), u(t.rejected[2]),
                 u(t.rejected[3]));
    if (t.rejected[0] > 0) std::fprintf(out_, ", %llu other reasons", u(t.rejected[0]));
    std::fprintf(out_, "\n                 latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n",
                 Ms(exceeds_total_.Percentile(0.5)), Ms(exceeds_total_.Percentile(0.9)),
                 Ms(exceeds_total_.Percentile(0.99)), Ms(exceeds_total_.max()));
  }
  if (shown_.updates) {
    std::fprintf(out_,
                 "  UpdateRates:   %llu requests (%.0f/s), %llu errors; latency ms: p50 %.2f  p99 %.2f  max %.2f\n",
                 u(t.updates), PerSecond(t.updates, secs), u(t.update_errors), Ms(update_total_.Percentile(0.5)),
                 Ms(update_total_.Percentile(0.99)), Ms(update_total_.max()));
  }
  for (const auto& [kind, e] : errors) {
    std::fprintf(out_, "  error: %s x%llu, first: %s\n", kind.c_str(), u(e.count), e.first.c_str());
  }
  std::fflush(out_);
}

}  // namespace limits::loadgen
