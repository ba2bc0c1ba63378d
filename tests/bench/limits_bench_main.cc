// limits_bench: issue 9's benchmark (run it through tests/bench/run.sh). Runs the restart
// scenario on the mock broker, a real Kafka broker or both, and prints the figures side by
// side with the targets; --memory adds the 10 M-stream memory run.
// Usage: limits_bench --limitsd P --limitsctl P --mock-broker P --grpc-load P [--dir D]
//        [--broker mock|kafka|both] [--records N] [--streams N] [--tenants N] [--partitions N]
//        [--spread DUR] [--grpc-seconds S] [--grpc-rounds R] [--grpc-callers C] [--new-fraction F] [--no-grpc]
//        [--memory] [--memory-streams N] [--memory-only]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "report.h"
#include "scenario.h"

using namespace limits::bench;

int main(int argc, char** argv) {
  Paths paths;
  paths.dir = "/tmp/limits_bench." + std::to_string(getpid());
  ScenarioOptions o;
  std::string brokers = "mock";
  bool memory = false, memory_only = false;
  int64_t memory_streams = 10'000'000;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "limits_bench: %s needs a value\n", k.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (k == "--limitsd") paths.limitsd = value();
    else if (k == "--limitsctl") paths.limitsctl = value();
    else if (k == "--mock-broker") paths.mock_broker = value();
    else if (k == "--grpc-load") paths.grpc_load = value();
    else if (k == "--dir") paths.dir = value();
    else if (k == "--broker") brokers = value();
    else if (k == "--records") o.records = std::stoll(value());
    else if (k == "--streams") o.streams = std::stoll(value());
    else if (k == "--tenants") o.tenants = static_cast<uint32_t>(std::stoul(value()));
    else if (k == "--partitions") o.partitions = std::stoi(value());
    else if (k == "--spread") o.spread = value();
    else if (k == "--grpc-seconds") o.grpc_seconds = std::stod(value());
    else if (k == "--grpc-rounds") o.grpc_rounds = std::max(1, std::stoi(value()));
    else if (k == "--grpc-callers") o.grpc_callers = std::stoi(value());
    else if (k == "--new-fraction") o.new_fraction = std::stod(value());
    else if (k == "--no-grpc") o.grpc = false;
    else if (k == "--node-set") o.node_sets.push_back(value());
    else if (k == "--memory") memory = true;
    else if (k == "--memory-only") memory = memory_only = true;
    else if (k == "--memory-streams") memory_streams = std::stoll(value());
    else {
      std::fprintf(stderr, "limits_bench: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (paths.limitsd.empty() || paths.limitsctl.empty() || paths.mock_broker.empty() || paths.grpc_load.empty()) {
    std::fprintf(stderr, "limits_bench: --limitsd, --limitsctl, --mock-broker and --grpc-load are required (run.sh passes them)\n");
    return 2;
  }
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  std::vector<std::string> which;
  if (brokers == "both") which = {"mock", "kafka"};
  else which = {brokers};

  if (!memory_only) {
    std::vector<ScenarioResult> results;
    for (const std::string& b : which) {
      ScenarioOptions so = o;
      so.broker = b;
      Paths p = paths;
      p.dir += "/" + b;
      limits::Result<ScenarioResult> r = RunScenario(p, so);
      if (!r.ok()) {
        std::fprintf(stderr, "limits_bench: %s: %s\n", b.c_str(), r.status().ToString().c_str());
        return 1;
      }
      results.push_back(std::move(*r));
    }
    PrintReport(o, results);
  }
  if (memory) {
    ScenarioOptions mo = o;
    mo.broker = which.front();
    mo.streams = memory_streams;
    mo.records = memory_streams;  // each stream once: the memory figure is per stream
    mo.grpc = false;
    mo.raw = false;
    mo.kill_restart = false;
    Paths p = paths;
    p.dir += "/memory";
    limits::Result<ScenarioResult> r = RunScenario(p, mo);
    if (!r.ok()) {
      std::fprintf(stderr, "limits_bench: memory: %s\n", r.status().ToString().c_str());
      return 1;
    }
    PrintMemoryReport(mo, *r);
  }
  std::printf("\nlogs (limitsd, loadgen, grpc_load, mock broker): %s\n", paths.dir.c_str());
  return 0;
}
