// limitsctl loadgen: load for a node — Loki-schema records produced to its topic and/or
// ExceedsLimits (and UpdateRates) requests at a target rate — with a line of figures every
// second and a summary at the end (--duration, --records, or Ctrl-C).
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "command.h"
#include "config/units.h"
#include "loadgen/exceeds_load.h"
#include "loadgen/options.h"
#include "loadgen/produce_load.h"
#include "loadgen/reporter.h"

namespace limits::ctl {
namespace {

using loadgen::Pacer;
using Steady = Pacer::Clock;

constexpr auto kFlushTimeout = std::chrono::seconds(30);

std::atomic<bool> g_interrupted{false};
// Outside the load (connecting, the final flush) a Ctrl-C ends the process at once; during it,
// every signal only asks for the summary (not "the second one exits": timeout(1), or a kill of
// the process group, delivers two).
std::atomic<bool> g_exit_on_signal{true};
static_assert(std::atomic<bool>::is_always_lock_free, "used from a signal handler");

extern "C" void OnSignal(int) {
  if (g_exit_on_signal.load(std::memory_order_relaxed)) _exit(130);
  g_interrupted.store(true, std::memory_order_relaxed);
}

void CatchSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int Run(Context& ctx, const Args& args) {
  CatchSignals();
  Result<loadgen::LoadgenOptions> options = loadgen::ParseLoadgenOptions(args.flags, ctx.config);
  if (!options.ok()) return UsageError(ctx, "loadgen", options.status().message());
  const loadgen::Universe universe(options->universe);
  loadgen::LoadCounters counters;

  std::unique_ptr<loadgen::ProduceLoad> produce;
  if (options->produce) {
    Result<std::unique_ptr<loadgen::ProduceLoad>> p =
        loadgen::ProduceLoad::Create(*options->produce, universe, counters);
    if (!p.ok()) return Fail(ctx, p.status());
    produce = std::move(*p);
  }
  std::unique_ptr<loadgen::ExceedsLoad> exceeds;
  if (options->exceeds) {
    Result<std::unique_ptr<loadgen::ExceedsLoad>> e =
        loadgen::ExceedsLoad::Create(*options->exceeds, universe, counters);
    if (!e.ok()) return Fail(ctx, e.status());
    exceeds = std::move(*e);
    if (exceeds->ready_partitions() == 0) {
      std::fprintf(ctx.err,
                   "loadgen: the node reports no ready partition yet: expect reason 1 (failed) until it is ready\n");
    }
  }
  const std::string tenants = universe.tenants() == 1
                                  ? "1 tenant (" + universe.Tenant(0) + ")"
                                  : std::to_string(universe.tenants()) + " tenants (" + universe.Tenant(0) + ".." +
                                        universe.Tenant(universe.tenants() - 1) + ")";
  std::fprintf(ctx.err, "loadgen: %s, %llu streams each, %llu bytes per stream\n", tenants.c_str(),
               static_cast<unsigned long long>(universe.streams_per_tenant()),
               static_cast<unsigned long long>(universe.bytes_per_stream()));
  if (produce) std::fprintf(ctx.err, "loadgen: %s\n", produce->Describe().c_str());
  if (exceeds) std::fprintf(ctx.err, "loadgen: %s\n", exceeds->Describe().c_str());
  const std::string how_long = options->duration ? "for " + config::FormatDuration(*options->duration)
                               : options->produce && options->produce->records > 0 ? "until the records are produced"
                                                                                   : "until stopped";
  std::fprintf(ctx.err, "loadgen: running %s; Ctrl-C stops with a summary\n", how_long.c_str());

  g_exit_on_signal = false;
  const Steady::time_point start = Steady::now();
  loadgen::Reporter reporter(counters,
                             {.produce = produce != nullptr,
                              .exceeds = exceeds != nullptr,
                              .updates = exceeds != nullptr && options->exceeds->update_rate > 0},
                             ctx.json, ctx.out, start);
  reporter.Header();
  std::atomic<bool> stop_producing{false};
  std::thread producer_thread;
  if (produce) {
    producer_thread = std::thread([&] { produce->Run(stop_producing, start, options->duration); });
  }
  if (exceeds) exceeds->Start(start);

  const Steady::time_point end = options->duration ? start + *options->duration : Steady::time_point::max();
  std::string ended_by;
  Steady::time_point last_line = start;
  for (int64_t second = 1;; ++second) {
    const Steady::time_point tick = std::min(start + std::chrono::seconds(second), end);
    // A timer, not a synchronisation: wake at the tick, or early for Ctrl-C or --records done.
    for (auto now = Steady::now(); now < tick && ended_by.empty(); now = Steady::now()) {
      if (g_interrupted.load(std::memory_order_relaxed)) ended_by = "signal";
      else if (produce && produce->finished() && !exceeds) ended_by = "records";
      else std::this_thread::sleep_until(std::min(tick, now + std::chrono::milliseconds(20)));
    }
    if (ended_by.empty() && tick == end) ended_by = "duration";
    if (!ended_by.empty()) break;
    reporter.Line(tick);  // timed at the tick, so that a second is a second
    last_line = tick;
  }
  // Stop the loads before the last line, so that the lines add up to the summary.
  const Steady::time_point stopped = ended_by == "duration" ? end : Steady::now();
  stop_producing = true;
  if (exceeds) exceeds->Stop();
  if (producer_thread.joinable()) producer_thread.join();
  if (stopped - last_line >= std::chrono::milliseconds(100) || reporter.Pending()) reporter.Line(stopped);
  g_exit_on_signal = true;
  const uint64_t undelivered = produce ? produce->Flush(kFlushTimeout) : 0;
  reporter.Summary(stopped, undelivered, ended_by);
  const bool failed = counters.records_failed.load() + undelivered + counters.request_errors.load() +
                          counters.update_errors.load() > 0;
  return failed ? kExitFailed : kExitOk;
}

}  // namespace

extern const Command kLoadgenCommand{
    .name = "loadgen",
    .synopsis = "loadgen [--brokers HOSTS] [--grpc HOST:PORT] [options]",
    .summary = "load a node: produce Loki-schema records to its topic and/or call ExceedsLimits at a rate",
    .help = R"(Prints a line every second and a summary at the end (--json: one JSON object per line).
Exit 0 when every request and record succeeded, 1 when any failed (the summary lists each kind
of error with its first message) or the load could not start, 2 on a bad option.

What to run (at least one; --mode with --config takes both from the node's configuration):
  --brokers HOSTS          produce records to the node's topic (Kafka bootstrap servers; a node
                           with no brokers configured logs its embedded cluster's "bootstrap")
  --grpc HOST:PORT         call ExceedsLimits on the node (its server.grpc_listen, default :9095)
  --mode M                 produce, exceeds or both (default: what --brokers / --grpc ask for)
  --duration DUR           stop after DUR (e.g. 30s; default: at Ctrl-C, or after --records)

The streams (the same in every run with the same --seed):
  --tenants N              tenants "<prefix>0".."<prefix>N-1" (default 1)
  --tenant-prefix P        (default "tenant-")
  --streams N              streams per tenant (default 1000)
  --policies A,B           ingestion policies, stream i gets the (i mod n)-th; an empty entry is
                           no policy, e.g. ",gold" (default: none)
  --bytes N                totalSize of each stream in records and requests (default 100): the
                           tenant's ingestion rate limit counts these bytes
  --seed N                 (default 1)

Producing (proto.StreamMetadataRecord values, key = tenant, partition = stream hash mod the
topic's partition count, tenants in turn walking their streams):
  --topic T                (default kafka.topic of --config, else ingest-limits-metadata)
  --partitions N           the partition count the topic must have (default: the topic's own)
  --produce-rate N         records/s (default 10000; 0: as fast as the producer takes them)
  --records N              stop after N records
  --batch-size SIZE        librdkafka batch.size (default 1MB)
  --linger DUR             librdkafka linger.ms (default 100ms; 1 MB batches need enough records
                           per partition within it)
  --compression C          none, gzip, snappy, lz4 or zstd (default lz4)
  --spread DUR             record timestamps from now-DUR rising to now over the run (needs
                           --records or --duration; default 0: now)
  --zone Z                 StreamMetadataRecord.zone (default "loadgen")

ExceedsLimits (requests go to the tenants in turn):
  --request-rate N         requests/s (default 100; 0: as fast as the callers go)
  --streams-per-request N  (default 100)
  --new-fraction F         fraction of each request's streams never sent before (default 0.1);
                           the rest are streams already sent. Once every stream of a tenant has
                           been sent, its requests carry known streams only
  --concurrency N          callers, each one request at a time (default 4)
  --update-rate N          also UpdateRates requests/s of known streams (default 0: none)
  --timeout DUR            per request, and for connecting at the start (default 10s)

Columns: PRODUCED/S records handed to librdkafka, DELIVERED/S acknowledged by the broker;
REQUESTS/S answered OK, ERRORS failed requests; STREAMS/S in answered requests, ACCEPTED/S
those not rejected, REJECTED/S by reason (1 failed: partition not ready here; 2 max streams;
3 rate limited); P50_MS/P99_MS request latency in that second. The pace is open loop: a
slow node does not lower the offered rate while callers are free.
)",
    .flags = loadgen::LoadgenFlags(),
    .writes = false,
    .opens_db = false,
    .run = Run,
};

}  // namespace limits::ctl
