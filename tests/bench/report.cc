// Report (see report.h).
#include "report.h"

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace limits::bench {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string Fmt(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

const char* Met(bool met) { return met ? "met" : "MISSED"; }

struct Column {
  std::string name;
  const ScenarioResult* r;
  const NodeFigures* f;
};

// The "steady state afterwards" read literally: the cold node itself, 3 s after ready.
// Shown beside the warm restart's RSS, the stricter denominator the target is judged on.
void PrintPeakOverSettled(const NodeFigures& cold) {
  if (cold.rss_settled <= 0) return;
  std::printf("  cold peak RSS / the cold node's own RSS 3 s after ready: %.2fx (%.0f / %.0f MiB)\n",
              static_cast<double>(cold.rss_peak) / static_cast<double>(cold.rss_settled),
              static_cast<double>(cold.rss_peak) / kMiB, static_cast<double>(cold.rss_settled) / kMiB);
}

}  // namespace

void PrintReport(const ScenarioOptions& o, const std::vector<ScenarioResult>& results) {
  std::vector<Column> cols;
  for (const ScenarioResult& r : results) {
    if (r.cold) cols.push_back({r.broker + " cold", &r, &*r.cold});
    if (r.after_kill) cols.push_back({r.broker + " SIGKILL", &r, &*r.after_kill});
    if (r.after_term) cols.push_back({r.broker + " SIGTERM", &r, &*r.after_term});
  }
  std::printf("\nlimitsd restarts: %lld records over %lld streams of %u tenants, %d partitions, timestamps over %s,"
              " 1 MB lz4 batches\n",
              static_cast<long long>(o.records), static_cast<long long>(o.streams), o.tenants, o.partitions,
              o.spread.c_str());
  std::printf("%-34s", "");
  for (const Column& c : cols) std::printf(" %14s", c.name.c_str());
  std::printf("   target\n");
  auto row = [&](const char* label, const std::function<std::string(const Column&)>& cell, const char* target) {
    std::printf("%-34s", label);
    for (const Column& c : cols) std::printf(" %14s", cell(c).c_str());
    std::printf("   %s\n", target);
  };
  row("process start -> assigned s", [](const Column& c) { return Fmt("%.2f", c.f->start_to_assigned_s); }, "(group join)");
  row("assigned -> look-ups done s", [](const Column& c) { return Fmt("%.2f", c.f->assigned_to_lookups_s); }, "<= 1 s");
  row("look-ups done -> ready s", [](const Column& c) { return Fmt("%.2f", c.f->lookups_to_ready_s); }, "(replay)");
  row("assigned -> ready s", [](const Column& c) { return Fmt("%.2f", c.f->assigned_to_ready_s); }, "cold/warm >= 20x");
  row("process start -> ready s", [](const Column& c) { return Fmt("%.2f", c.f->start_to_ready_s); },
      "warm <= join + 1 s");
  row("store open s", [](const Column& c) { return Fmt("%.2f", c.f->store_open_s); }, "");
  row("records replayed", [](const Column& c) { return Fmt("%.0f", static_cast<double>(c.f->replayed)); }, "");
  row("look-ups given up", [](const Column& c) { return Fmt("%.0f", static_cast<double>(c.f->gave_up)); }, "0");
  row("replay records/s", [](const Column& c) { return Fmt("%.0f", c.f->replay_rate()); }, "");
  row("replay / raw consume", [](const Column& c) {
        return c.r->raw && c.f->replayed > 0 ? Fmt("%.2f", c.f->replay_rate() / c.r->raw->records_per_s()) : std::string("-");
      }, ">= 0.8");
  row("RSS when ready MiB", [](const Column& c) { return Fmt("%.0f", static_cast<double>(c.f->rss_ready) / kMiB); }, "");
  row("peak RSS (VmHWM) MiB", [](const Column& c) { return Fmt("%.0f", static_cast<double>(c.f->rss_peak) / kMiB); },
      "cold peak <= 1.5 x warm");
  row("RSS 3 s after ready MiB", [](const Column& c) { return Fmt("%.0f", static_cast<double>(c.f->rss_settled) / kMiB); },
      "");
  row("RSS per stream B", [](const Column& c) {
        return c.r->streams > 0 ? Fmt("%.0f", static_cast<double>(c.f->rss_ready) / static_cast<double>(c.r->streams))
                                : std::string("-");
      }, "<= 64 at 10 M (--memory)");

  for (const ScenarioResult& r : results) {
    std::printf("\n[%s]\n", r.broker.c_str());
    std::printf("  produce (limitsctl loadgen): %.1f s; %s", r.produce_s, r.produce_summary.c_str());
    if (!r.produce_summary.empty() && r.produce_summary.back() != '\n') std::printf("\n");
    if (r.raw) {
      std::printf("  bare librdkafka consumer: %lld records in %.2f s from the first record = %.0f records/s"
                  " (assign -> first record %.2f s)\n",
                  static_cast<long long>(r.raw->records), r.raw->seconds, r.raw->records_per_s(), r.raw->connect_seconds);
    }
    if (r.cold && r.cold->replayed > 0 && r.raw) {
      const double ratio = r.cold->replay_rate() / r.raw->records_per_s();
      std::printf("  cold replay / raw consume: %.2f (target >= 0.8: %s)\n", ratio, Met(ratio >= 0.8));
    }
    const NodeFigures* warm[] = {r.after_kill ? &*r.after_kill : nullptr, r.after_term ? &*r.after_term : nullptr};
    const char* names[] = {"SIGKILL", "SIGTERM"};
    for (int i = 0; i < 2; ++i) {
      if (!warm[i] || !r.cold) continue;
      const NodeFigures& w = *warm[i];
      const double ratio = w.assigned_to_ready_s > 0 ? r.cold->assigned_to_ready_s / w.assigned_to_ready_s : 0;
      std::printf("  cold/warm (%s) assignment->ready: %.2f s / %.2f s = %.1fx (target >= 20x: %s)\n", names[i],
                  r.cold->assigned_to_ready_s, w.assigned_to_ready_s, ratio, Met(ratio >= 20));
      std::printf("  warm (%s) process start->ready %.2f s vs assigned at %.2f s + 1 s (target: %s)\n", names[i],
                  w.start_to_ready_s, w.start_to_assigned_s, Met(w.start_to_ready_s <= w.start_to_assigned_s + 1));
    }
    const NodeFigures* all[] = {r.cold ? &*r.cold : nullptr, warm[0], warm[1]};
    double worst_lookup = 0;
    for (const NodeFigures* f : all) {
      if (f) worst_lookup = std::max(worst_lookup, f->assigned_to_lookups_s);
    }
    std::printf("  look-ups (worst of cold and warm): %.2f s (target <= 1 s: %s)\n", worst_lookup, Met(worst_lookup <= 1));
    if (r.cold && r.after_term && r.after_term->rss_ready > 0) {
      const double peak = static_cast<double>(r.cold->rss_peak) / static_cast<double>(r.after_term->rss_ready);
      std::printf("  cold peak RSS / warm RSS: %.2fx (target <= 1.5x: %s)\n", peak, Met(peak <= 1.5));
      PrintPeakOverSettled(*r.cold);
    }
    if (!r.trivial.empty() && !r.exceeds.empty()) {
      const GrpcFigures& trivial = r.trivial[r.median_round];
      const GrpcFigures& exceeds = r.exceeds[r.median_round];
      std::printf("  gRPC, %d callers in a separate process, 100 streams per request (%.0f%% of them new in every call), %.0f s each;\n"
                  "  saturated trivial / ExceedsLimits pairs in %zu rounds, the round of the median ratio shown first:\n",
                  o.grpc_callers, o.new_fraction * 100, o.grpc_seconds, r.trivial.size());
      auto g = [](const std::string& what, const GrpcFigures& f) {
        std::printf("    %-40s %6.0f req/s %8.0f streams/s  ms: p50 %5.2f p90 %5.2f p99 %6.2f max %6.1f  errors %lld\n",
                    what.c_str(), f.requests_per_s, f.streams_per_s, f.p50_ms, f.p90_ms, f.p99_ms, f.max_ms,
                    static_cast<long long>(f.errors));
      };
      // What bounds a saturated load on two shared cores: the node's and the client's CPU per
      // call, and what the broker (beside them) took.
      auto cpu = [](const std::string& what, const GrpcFigures& f) {
        const double calls = f.requests_per_s * f.seconds;
        auto per_call = [&](double s) { return s < 0 || calls <= 0 ? -1.0 : s * 1e6 / calls; };
        std::printf("    %-41s node %5.0f us  client %5.0f us  broker %3.0f%%\n", what.c_str(), per_call(f.node_cpu_s),
                    per_call(f.client_cpu_s), f.broker_cpu_s < 0 || f.seconds <= 0 ? -1.0 : 100 * f.broker_cpu_s / f.seconds);
      };
      struct Load {
        std::string what;
        const GrpcFigures* f;
      };
      std::vector<Load> loads = {{"trivial call (ceiling), saturated", &trivial},
                                 {"ExceedsLimits, saturated", &exceeds},
                                 {"trivial call at half of saturation", &r.trivial_half},
                                 {"ExceedsLimits at half of saturation", &r.exceeds_half},
                                 {"ExceedsLimits, first pass, saturated", &r.exceeds_first}};
      for (const Load& l : loads) g(l.what, *l.f);
      std::printf("  CPU during each load: per call (node, the client process), and the broker's share of one core:\n");
      for (const Load& l : loads) cpu(l.what, *l.f);
      std::printf("  after the first pass the node went idle in %.1f s; every round: trivial / ExceedsLimits req/s = ratio\n",
                  r.settle_after_first_s);
      for (size_t i = 0; i < r.trivial.size(); ++i) {
        std::printf("    round %zu: %6.0f / %6.0f = %.2f%s\n", i + 1, r.trivial[i].requests_per_s, r.exceeds[i].requests_per_s,
                    r.Ratio(i), i == r.median_round ? "  (median)" : "");
      }
      std::printf("  ExceedsLimits / ceiling: %.2f, the median of %zu rounds (target >= 0.7: %s); stream checks/s %.0f (target >= 1 M: %s)\n",
                  r.Ratio(r.median_round), r.trivial.size(), Met(r.Ratio(r.median_round) >= 0.7), exceeds.streams_per_s, Met(exceeds.streams_per_s >= 1e6));
      std::printf("  ExceedsLimits p99 at half of saturation: %.2f ms (target < 2 ms: %s); the trivial call's: %.2f ms\n",
                  r.exceeds_half.p99_ms, Met(r.exceeds_half.p99_ms < 2), r.trivial_half.p99_ms);
    }
  }
}

void PrintMemoryReport(const ScenarioOptions& o, const ScenarioResult& r) {
  std::printf("\nmemory (%s): %lld records over %lld streams of %u tenants, %d partitions\n", r.broker.c_str(),
              static_cast<long long>(o.records), static_cast<long long>(o.streams), o.tenants, o.partitions);
  if (r.cold) {
    std::printf("  cold start: ready in %.2f s, replayed %lld records; RSS %.0f MiB, peak %.0f MiB\n",
                r.cold->start_to_ready_s, static_cast<long long>(r.cold->replayed),
                static_cast<double>(r.cold->rss_ready) / kMiB, static_cast<double>(r.cold->rss_peak) / kMiB);
  }
  if (r.after_term && r.streams > 0) {
    const double per = static_cast<double>(r.after_term->rss_ready) / static_cast<double>(r.streams);
    std::printf("  warm restart (SIGTERM): ready in %.2f s, %lld streams loaded in %.2f s; RSS %.0f MiB = %.1f B/stream"
                " (target <= 64: %s)\n",
                r.after_term->start_to_ready_s, static_cast<long long>(r.streams), r.after_term->store_open_s,
                static_cast<double>(r.after_term->rss_ready) / kMiB, per, Met(per <= 64));
    if (r.cold) {
      const double peak = static_cast<double>(r.cold->rss_peak) / static_cast<double>(r.after_term->rss_ready);
      std::printf("  cold peak RSS / warm RSS: %.2fx (target <= 1.5x: %s)\n", peak, Met(peak <= 1.5));
      PrintPeakOverSettled(*r.cold);
    }
  }
}

}  // namespace limits::bench
