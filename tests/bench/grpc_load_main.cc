// grpc_load: the bench's gRPC load client, a process of its own (so it does not share the
// node's allocator or threads). Calls ExceedsLimits with requests of the loadgen universe's
// streams (the ones `limitsctl loadgen` produced to the topic: known to the node, plus a
// fraction of new ones), or the "trivial" call: GetAssignedPartitions carrying the very same
// request bytes as unknown fields (same size on the wire, answered at once off the queue) —
// the server's gRPC ceiling with no bench-only service on the node.
// Closed loop (--rate 0: each caller sends as soon as its answer arrives: saturation) or open
// loop at --rate requests/s (latency counted from the intended send time).
// Prints one line: "requests_per_s R streams_per_s S p50_ms A p90_ms B p99_ms C max_ms D errors E
// cpu_s U" (U: this process's user + system CPU seconds over the load).
// Usage: grpc_load --target HOST:PORT --method exceeds|trivial [--seconds S] [--callers C]
//        [--rate R] [--tenants T] [--streams-per-tenant N] [--per-request K] [--new-fraction F]
#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "loadgen/latency_histogram.h"
#include "loadgen/universe.h"
#include "proto/limits.grpc.pb.h"

using namespace limits;
using Steady = std::chrono::steady_clock;

namespace {

struct Options {
  std::string target;
  std::string method = "exceeds";
  double seconds = 10;
  int callers = 8;
  double rate = 0;
  uint32_t tenants = 100;
  uint64_t streams_per_tenant = 10'000;
  uint32_t per_request = 100;
  double new_fraction = 0.05;
};

// A pool of distinct requests, built once so the callers spend no time making them.
std::vector<proto::ExceedsLimitsRequest> MakeRequests(const Options& o, size_t n) {
  loadgen::UniverseOptions uo;  // loadgen's defaults (seed 1, "tenant-", 100 bytes): its streams
  uo.tenants = o.tenants;
  uo.streams_per_tenant = o.streams_per_tenant;
  loadgen::Universe universe(uo);
  loadgen::SplitMix64 rng{42};
  std::vector<proto::ExceedsLimitsRequest> out(n);
  const auto fresh = static_cast<uint32_t>(o.new_fraction * o.per_request);
  uint64_t next_new = o.streams_per_tenant;  // indexes past the produced ones: never seen by the node
  for (size_t r = 0; r < n; ++r) {
    const auto t = static_cast<uint32_t>(r % o.tenants);
    out[r].set_tenant(universe.Tenant(t));
    const uint64_t start = rng() % o.streams_per_tenant;
    for (uint32_t i = 0; i < o.per_request; ++i) {
      const uint64_t index = i < fresh ? next_new++ : (start + i) % o.streams_per_tenant;
      auto* s = out[r].add_streams();
      s->set_streamhash(universe.StreamHash(t, index));
      s->set_totalsize(universe.bytes_per_stream());
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--target") o.target = v;
    else if (k == "--method") o.method = v;
    else if (k == "--seconds") o.seconds = std::stod(v);
    else if (k == "--callers") o.callers = std::stoi(v);
    else if (k == "--rate") o.rate = std::stod(v);
    else if (k == "--tenants") o.tenants = static_cast<uint32_t>(std::stoul(v));
    else if (k == "--streams-per-tenant") o.streams_per_tenant = std::stoull(v);
    else if (k == "--per-request") o.per_request = static_cast<uint32_t>(std::stoul(v));
    else if (k == "--new-fraction") o.new_fraction = std::stod(v);
    else {
      std::fprintf(stderr, "grpc_load: unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (o.target.empty() || (o.method != "exceeds" && o.method != "trivial")) {
    std::fprintf(stderr, "usage: grpc_load --target HOST:PORT --method exceeds|trivial [options]\n");
    return 2;
  }
  std::vector<proto::ExceedsLimitsRequest> exceeds = MakeRequests(o, 4096);
  // Each call's new streams are new to the node (not only on the pool's first pass): the
  // first `fresh` streams of a request get an index no call used before. Each caller owns the
  // requests it sends (below), so it rewrites them in place.
  loadgen::UniverseOptions uo;
  uo.tenants = o.tenants;
  uo.streams_per_tenant = o.streams_per_tenant;
  const loadgen::Universe universe(uo);
  const auto fresh = static_cast<int>(o.new_fraction * o.per_request);
  std::vector<proto::GetAssignedPartitionsRequest> trivial(exceeds.size());
  for (size_t i = 0; i < exceeds.size(); ++i) {
    // Parsed as GetAssignedPartitionsRequest, the fields are unknown ones, kept and re-sent.
    trivial[i].ParseFromString(exceeds[i].SerializeAsString());
  }
  const bool is_trivial = o.method == "trivial";

  loadgen::LatencyHistogram latency;
  std::atomic<uint64_t> ok{0}, errors{0};
  const auto t0 = Steady::now() + std::chrono::milliseconds(200);  // every caller connected first
  const auto end = t0 + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<std::thread> callers;
  for (int c = 0; c < o.callers; ++c) {
    callers.emplace_back([&, c] {
      // A channel per caller: one HTTP/2 connection each, as many frontends would open.
      grpc::ChannelArguments args;
      args.SetInt("grpc.channel_id", c);  // distinct args: no subchannel sharing
      auto stub = proto::IngestLimits::NewStub(grpc::CreateCustomChannel(o.target, grpc::InsecureChannelCredentials(), args));
      proto::ExceedsLimitsResponse er;
      proto::GetAssignedPartitionsResponse tr;
      std::this_thread::sleep_until(t0);
      for (uint64_t n = 0;; ++n) {
        const uint64_t seq = n * static_cast<uint64_t>(o.callers) + static_cast<uint64_t>(c);
        auto intended = Steady::now();
        if (o.rate > 0) {
          intended = t0 + std::chrono::duration_cast<Steady::duration>(std::chrono::duration<double>(static_cast<double>(seq) / o.rate));
          if (intended >= end) break;
          std::this_thread::sleep_until(intended);
        } else if (intended >= end) {
          break;
        }
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        const size_t per_caller = exceeds.size() / static_cast<size_t>(o.callers);
        const size_t i = static_cast<size_t>(c) + static_cast<size_t>(o.callers) * (n % per_caller);
        if (!is_trivial && n >= per_caller) {  // the pool's first pass already has its own new streams
          const auto t = static_cast<uint32_t>(i % o.tenants);
          for (int k = 0; k < fresh; ++k) {
            const uint64_t index = o.streams_per_tenant + 1'000'000'000ull * static_cast<uint64_t>(c + 1) + n * fresh + k;
            exceeds[i].mutable_streams(k)->set_streamhash(universe.StreamHash(t, index));
          }
        }
        const grpc::Status st = is_trivial ? stub->GetAssignedPartitions(&ctx, trivial[i], &tr)
                                           : stub->ExceedsLimits(&ctx, exceeds[i], &er);
        const auto done = Steady::now();
        if (done > end && o.rate <= 0) break;  // a call that straddles the end is not counted
        latency.Record(static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(done - intended).count()));
        (st.ok() ? ok : errors).fetch_add(1, std::memory_order_relaxed);
        if (!st.ok() && errors.load() == 1) std::fprintf(stderr, "grpc_load: %s\n", st.error_message().c_str());
      }
    });
  }
  auto cpu_seconds = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
    return s(u.ru_utime) + s(u.ru_stime);
  };
  std::this_thread::sleep_until(t0);  // the callers have built their channels
  const double cpu_at_start = cpu_seconds();
  for (auto& t : callers) t.join();
  const double cpu = cpu_seconds() - cpu_at_start;
  const double seconds = std::chrono::duration<double>(end - t0).count();
  const double rps = static_cast<double>(ok.load()) / seconds;
  std::printf("requests_per_s %.0f streams_per_s %.0f p50_ms %.3f p90_ms %.3f p99_ms %.3f max_ms %.3f errors %llu cpu_s %.3f\n",
              rps, rps * o.per_request, static_cast<double>(latency.Percentile(0.5)) / 1000,
              static_cast<double>(latency.Percentile(0.9)) / 1000, static_cast<double>(latency.Percentile(0.99)) / 1000,
              static_cast<double>(latency.max()) / 1000, static_cast<unsigned long long>(errors.load()), cpu);
  return 0;
}
