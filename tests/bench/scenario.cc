// RunScenario (see scenario.h).
#include "scenario.h"

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <thread>

#include "bench_broker.h"
#include "child.h"

namespace limits::bench {
namespace {

constexpr const char* kTopic = "ingest-limits-metadata";

void Say(const std::string& what) {
  std::fprintf(stderr, "limits_bench: %s\n", what.c_str());
}

// The lines of loadgen's summary ("summary:" and what follows).
std::string SummaryOf(const std::string& out) {
  const size_t at = out.find("summary:");
  return at == std::string::npos ? out : out.substr(at);
}

// `node` and `broker`: the processes whose CPU time the load is charged with.
Result<GrpcFigures> RunLoad(const Paths& paths, const ScenarioOptions& o, int port, pid_t node, pid_t broker,
                            const std::string& method, double rate, const std::string& name) {
  const double node_cpu = ProcCpuSeconds(node), broker_cpu = ProcCpuSeconds(broker);
  Child load({paths.grpc_load, "--target", "127.0.0.1:" + std::to_string(port), "--method", method, "--seconds",
              std::to_string(o.grpc_seconds), "--callers", std::to_string(o.grpc_callers), "--rate", std::to_string(rate),
              "--tenants", std::to_string(o.tenants), "--streams-per-tenant", std::to_string(o.streams / o.tenants),
              "--new-fraction", std::to_string(o.new_fraction)},
             paths.dir + "/grpc_" + name + ".out");
  if (load.Wait() != 0) return Status::Unavailable("grpc_load " + name + " failed: " + load.Output());
  GrpcFigures g;
  g.seconds = o.grpc_seconds;
  auto used = [](double before, pid_t pid) {
    const double after = ProcCpuSeconds(pid);
    return before < 0 || after < 0 ? -1 : after - before;
  };
  g.node_cpu_s = used(node_cpu, node);
  g.broker_cpu_s = used(broker_cpu, broker);
  std::istringstream in(load.Output().substr(load.Output().find("requests_per_s")));
  std::string k;
  in >> k >> g.requests_per_s >> k >> g.streams_per_s >> k >> g.p50_ms >> k >> g.p90_ms >> k >> g.p99_ms >> k >> g.max_ms >>
      k >> g.errors >> k >> g.client_cpu_s;
  if (in.fail()) return Status::Unavailable("grpc_load " + name + " printed: " + load.Output());
  return g;
}

// Waits (up to `limit`) until the node uses under a fifth of a core over half a second: what
// a load left behind (records still being produced, read back and flushed) is not charged
// to the next one. Returns how long that took.
double WaitUntilIdle(pid_t node, std::chrono::seconds limit) {
  const auto t0 = std::chrono::steady_clock::now();
  double before = ProcCpuSeconds(node);
  while (std::chrono::steady_clock::now() - t0 < limit) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the sampling period
    const double now = ProcCpuSeconds(node);
    if (now < 0 || now - before < 0.1) break;
    before = now;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Result<ScenarioResult> RunScenario(const Paths& paths, const ScenarioOptions& o) {
  ScenarioResult r;
  r.broker = o.broker;
  std::filesystem::remove_all(paths.dir);
  std::filesystem::create_directories(paths.dir);

  Say(o.broker + ": starting the broker");
  std::unique_ptr<BenchBroker> broker;
  if (o.broker == "kafka") {
    ASSIGN_OR_RETURN(broker, StartRealKafka(kTopic, o.partitions));
  } else {
    ASSIGN_OR_RETURN(broker, StartMockBroker(paths.mock_broker, kTopic, o.partitions, paths.dir));
  }

  Say(o.broker + ": producing " + std::to_string(o.records) + " records with limitsctl loadgen");
  const auto tp = std::chrono::steady_clock::now();
  Child produce({paths.limitsctl, "loadgen", "--brokers", broker->bootstrap(), "--mode", "produce", "--topic", kTopic,
                 "--partitions", std::to_string(o.partitions), "--tenants", std::to_string(o.tenants), "--streams",
                 std::to_string(o.streams / o.tenants), "--records", std::to_string(o.records), "--produce-rate", "0",
                 "--spread", o.spread, "--batch-size", "1MB", "--compression", "lz4"},
                paths.dir + "/loadgen_produce.out");
  const int produced = produce.Wait();
  r.produce_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - tp).count();
  r.produce_summary = SummaryOf(produce.Output());
  if (produced != 0) return Status::Unavailable("loadgen failed:\n" + produce.Output());

  if (o.raw) {
    Say(o.broker + ": bare librdkafka consumer reading the topic");
    ASSIGN_OR_RETURN(RawConsumeResult raw, RawConsume(broker->bootstrap(), kTopic, o.partitions));
    r.raw = raw;
  }

  std::vector<std::string> sets = {
      "kafka.brokers=" + broker->bootstrap(),
      "kafka.topic=" + std::string(kTopic),
      "kafka.num_partitions=" + std::to_string(o.partitions),
      "store.path=" + paths.dir + "/db",
      "node.instance_id=bench",
      "server.http_listen=127.0.0.1:0",
      "server.grpc_listen=127.0.0.1:0",
      // The mock's joins wait session.timeout.ms - 1 s (MOCK-KAFKA.md); the same on both brokers.
      "kafka.properties.session.timeout.ms=6000",
      "kafka.properties.heartbeat.interval.ms=500",
  };
  sets.insert(sets.end(), o.node_sets.begin(), o.node_sets.end());
  // Give the node the time to persist what it replayed (its flush interval is 1 s) before a stop.
  // The RSS then is the node's steady state after its start (a replay's transient memory gone).
  auto settle = [](NodeRun& node, NodeFigures& f) {
    std::this_thread::sleep_for(std::chrono::seconds(3));
    f.rss_settled = ProcStatusBytes(node.child().pid(), "VmRSS");
  };

  Say(o.broker + ": limitsd cold start (empty data dir)");
  {
    NodeRun node(paths.limitsd, sets, paths.dir + "/limitsd_cold.log");
    ASSIGN_OR_RETURN(NodeFigures f, node.WaitReady(o.partitions));
    settle(node, f);
    r.cold = f;
    node.child().Kill(o.kill_restart ? SIGKILL : SIGTERM);
  }
  if (o.kill_restart) {
    Say(o.broker + ": limitsd restart after SIGKILL");
    NodeRun node(paths.limitsd, sets, paths.dir + "/limitsd_after_kill.log");
    ASSIGN_OR_RETURN(NodeFigures f, node.WaitReady(o.partitions));
    settle(node, f);
    r.after_kill = f;
    node.child().Kill(SIGTERM);
  }
  Say(o.broker + ": limitsd restart after SIGTERM");
  NodeRun node(paths.limitsd, sets, paths.dir + "/limitsd_after_term.log");
  ASSIGN_OR_RETURN(NodeFigures f, node.WaitReady(o.partitions));
  settle(node, f);
  r.after_term = f;
  r.streams = f.streams_loaded;

  if (o.grpc) {
    const int port = node.GrpcPort();
    auto load = [&](const std::string& method, double rate, const std::string& name) {
      return RunLoad(paths, o, port, node.child().pid(), broker->pid(), method, rate, name);
    };
    // The node knows every stream from the topic but has produced none: the first request
    // naming a stream produces it (then once per produce interval), ~400 K records for the
    // request pool's streams. That pass is shown on its own; the saturated rounds are the
    // steady state after it, with each call's new streams still new.
    Say(o.broker + ": gRPC: ExceedsLimits first pass (produces the pool's streams)");
    ASSIGN_OR_RETURN(r.exceeds_first, load("exceeds", 0, "exceeds_first"));
    r.settle_after_first_s = WaitUntilIdle(node.child().pid(), std::chrono::seconds(15));
    for (int round = 1; round <= o.grpc_rounds; ++round) {
      const std::string n = std::to_string(round);
      Say(o.broker + ": gRPC: round " + n + ": trivial call, then ExceedsLimits, at saturation");
      ASSIGN_OR_RETURN(GrpcFigures trivial, load("trivial", 0, "trivial_" + n));
      ASSIGN_OR_RETURN(GrpcFigures exceeds, load("exceeds", 0, "exceeds_" + n));
      r.trivial.push_back(trivial);
      r.exceeds.push_back(exceeds);
    }
    std::vector<size_t> rounds(r.trivial.size());
    for (size_t i = 0; i < rounds.size(); ++i) rounds[i] = i;
    std::sort(rounds.begin(), rounds.end(), [&](size_t a, size_t b) { return r.Ratio(a) < r.Ratio(b); });
    r.median_round = rounds[rounds.size() / 2];
    // The same open-loop pacing on the trivial call tells a stall of the machine or the client
    // (both calls see it) from one of ExceedsLimits' path (only it does).
    Say(o.broker + ": gRPC: trivial call at half of its saturation");
    ASSIGN_OR_RETURN(r.trivial_half, load("trivial", r.trivial[r.median_round].requests_per_s / 2, "trivial_half"));
    Say(o.broker + ": gRPC: ExceedsLimits at half of its saturation");
    ASSIGN_OR_RETURN(r.exceeds_half, load("exceeds", r.exceeds[r.median_round].requests_per_s / 2, "exceeds_half"));
  }
  node.child().Kill(SIGTERM);
  // The logs stay for a look at what the figures came from; the store (up to GiBs) does not.
  std::filesystem::remove_all(paths.dir + "/db");
  return r;
}

}  // namespace limits::bench
