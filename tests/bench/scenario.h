// Scenario: issue 9's restart scenario on one broker — fill the topic with loadgen, read it
// with a bare consumer, then limitsd cold, after SIGKILL and after SIGTERM on the same volume,
// then gRPC load on the last node — and the figures it yields.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "node_run.h"
#include "raw_consume.h"

namespace limits::bench {

struct Paths {
  std::string limitsd, limitsctl, mock_broker, grpc_load, dir;
};

struct ScenarioOptions {
  std::string broker = "mock";  // or "kafka"
  int64_t records = 4'000'000;
  int64_t streams = 1'000'000;
  uint32_t tenants = 100;
  int partitions = 64;
  std::string spread = "90m";
  bool grpc = true;
  // Each saturated load's length. The pool the first pass produces is due again 60-75 s later
  // (produce interval): first pass + rounds + half loads stay inside that minute.
  double grpc_seconds = 5;
  // Saturated trivial / ExceedsLimits pairs, alternated so both see the VM's same phases;
  // the ratio is the median of the rounds'.
  int grpc_rounds = 3;
  int grpc_callers = 8;
  double new_fraction = 0.05;  // of each ExceedsLimits request's streams: never produced
  bool raw = true;
  bool kill_restart = true;  // the SIGKILL restart (the memory run skips it)
  std::vector<std::string> node_sets;  // more limitsd --set key=value (tuning experiments)
};

struct GrpcFigures {
  double requests_per_s = 0, streams_per_s = 0, p50_ms = 0, p90_ms = 0, p99_ms = 0, max_ms = 0;
  int64_t errors = 0;
  // CPU seconds each process used during the load (-1: unknown): where the two cores went.
  double node_cpu_s = -1, client_cpu_s = -1, broker_cpu_s = -1;
  double seconds = 0;  // the load's length
};

struct ScenarioResult {
  std::string broker;
  std::string produce_summary;
  double produce_s = 0;
  std::optional<RawConsumeResult> raw;
  std::optional<NodeFigures> cold, after_kill, after_term;
  GrpcFigures trivial_half, exceeds_first, exceeds_half;
  std::vector<GrpcFigures> trivial, exceeds;  // one of each per round, in order
  size_t median_round = 0;  // the round of the median ExceedsLimits / trivial ratio
  // How long the node took to go idle after the first pass (its records produced, read back
  // and flushed) before the rounds began.
  double settle_after_first_s = 0;
  int64_t streams = 0;  // held by the node after the warm restart

  // ExceedsLimits' saturated throughput over the trivial call's in `round` (0 if none).
  double Ratio(size_t round) const {
    return trivial[round].requests_per_s > 0 ? exceeds[round].requests_per_s / trivial[round].requests_per_s : 0;
  }
};

Result<ScenarioResult> RunScenario(const Paths& paths, const ScenarioOptions& o);

}  // namespace limits::bench
