// memory_flood: what a client can make a node hold (issue 24, item 4). Starts limitsd on its
// embedded mock cluster, then floods it over gRPC the two ways the issue measured —
// UpdateRates with ever new hashes for one tenant, ExceedsLimits with ever new tenants — and a
// third, UpdateRates with ever new tenants whose keys each land in a partition of their own
// (run it alone, --hashes 0 --tenants 0: the second fills max_tenants), and prints the node's RSS before and after each flood, bytes per item sent, what the node holds
// (limitsd_rate_keys, limitsd_tenants) and what its bounds refused (limitsd_bound_refusals_total).
// A figure printer, not a test.
// Usage: memory_flood --limitsd PATH [--dir DIR] [--hashes 3000000] [--tenants 300000] [--spread-tenants 100000]
//        [--set key=value ...] (extra limitsd settings, e.g. limits.max_rate_keys=100000000
//        limits.max_tenants=16777216 to see the unbounded cost)
#include <grpcpp/grpcpp.h>
#include <signal.h>

#include <atomic>
#include <map>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "child.h"
#include "node_run.h"
#include "proto/limits.grpc.pb.h"
#include "testing/http_client.h"
#include "testing/prometheus_parser.h"

using namespace limits;

namespace {

struct Options {
  std::string limitsd;
  std::string dir = "/tmp/memory_flood";
  uint64_t hashes = 3'000'000;
  uint64_t tenants = 300'000;
  uint64_t spread_tenants = 100'000;
  std::vector<std::string> sets;
};

double Mib(int64_t bytes) { return static_cast<double>(bytes) / (1 << 20); }

// The node's RSS once it stops moving (the flood's last requests are answered by then).
int64_t SettledRss(pid_t pid) {
  int64_t last = bench::ProcStatusBytes(pid, "VmRSS");
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    const int64_t now = bench::ProcStatusBytes(pid, "VmRSS");
    if (now == last) break;
    last = now;
  }
  return last;
}

double Metric(int http_port, const std::string& name, const std::map<std::string, std::string>& labels = {}) {
  testing::HttpResult r = testing::HttpGet(http_port, "/metrics");
  return testing::ParsePrometheusText(r.body).Value(name, labels);
}

void Report(const char* what, uint64_t items, int64_t before, int64_t after, int http_port) {
  if (items == 0) return;
  std::printf("%s: %llu sent; RSS %.1f -> %.1f MiB (+%.1f MiB, %.1f B per item sent)\n", what,
              static_cast<unsigned long long>(items), Mib(before), Mib(after), Mib(after - before),
              static_cast<double>(after - before) / static_cast<double>(items));
  std::printf("  holds: rate_keys %.0f, tenants %.0f; refused: max_rate_keys_per_tenant %.0f, max_rate_keys %.0f, "
              "max_tenants %.0f\n",
              Metric(http_port, "limitsd_rate_keys"), Metric(http_port, "limitsd_tenants"),
              Metric(http_port, "limitsd_bound_refusals_total", {{"bound", "max_rate_keys_per_tenant"}}),
              Metric(http_port, "limitsd_bound_refusals_total", {{"bound", "max_rate_keys"}}),
              Metric(http_port, "limitsd_bound_refusals_total", {{"bound", "max_tenants"}}));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--limitsd") o.limitsd = v;
    else if (k == "--dir") o.dir = v;
    else if (k == "--hashes") o.hashes = std::stoull(v);
    else if (k == "--tenants") o.tenants = std::stoull(v);
    else if (k == "--spread-tenants") o.spread_tenants = std::stoull(v);
    else if (k == "--set") o.sets.push_back(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", k.c_str());
      return 2;
    }
  }
  if (o.limitsd.empty()) {
    std::fprintf(stderr, "usage: memory_flood --limitsd PATH [--dir DIR] [--hashes N] [--tenants N] [--spread-tenants N] [--set k=v]...\n");
    return 2;
  }
  std::filesystem::remove_all(o.dir);
  std::filesystem::create_directories(o.dir);
  std::vector<std::string> sets = {"store.path=" + o.dir + "/db", "server.http_listen=127.0.0.1:0",
                                   "server.grpc_listen=127.0.0.1:0"};
  sets.insert(sets.end(), o.sets.begin(), o.sets.end());
  bench::NodeRun node(o.limitsd, sets, o.dir + "/limitsd.log");
  if (Result<bench::NodeFigures> ready = node.WaitReady(64); !ready.ok()) {
    std::fprintf(stderr, "%s\n", ready.status().ToString().c_str());
    return 3;
  }
  const pid_t pid = node.child().pid();
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(node.GrpcPort()), grpc::InsecureChannelCredentials());
  auto stub = proto::IngestLimits::NewStub(channel);
  std::printf("memory_flood: limitsd %s, embedded mock, 64 partitions; settings:", o.limitsd.c_str());
  for (const auto& s : o.sets) std::printf(" %s", s.c_str());
  std::printf("\n");

  // 1. UpdateRates, one tenant, ever new hashes (segmentation keys), 1000 per call.
  int64_t before = SettledRss(pid);
  uint64_t errors = 0;
  for (uint64_t sent = 0; sent < o.hashes;) {
    proto::UpdateRatesRequest req;
    req.set_tenant("flood-rates");
    for (uint64_t i = 0; i < 1000 && sent < o.hashes; ++i, ++sent) {
      auto* s = req.add_streams();
      s->set_streamhash(sent * 0x9e3779b97f4a7c15ULL + 1);
      s->set_totalsize(100);
    }
    grpc::ClientContext ctx;
    proto::UpdateRatesResponse resp;
    if (!stub->UpdateRates(&ctx, req, &resp).ok()) ++errors;
  }
  Report("UpdateRates with distinct hashes", o.hashes, before, SettledRss(pid), node.HttpPort());
  if (errors) std::printf("  %llu calls failed\n", static_cast<unsigned long long>(errors));

  // 2. ExceedsLimits, ever new tenants, one new stream each, 100 tenants' calls in flight.
  before = SettledRss(pid);
  errors = 0;
  uint64_t rejected = 0;
  constexpr int kCallers = 8;
  std::vector<std::thread> callers;
  std::atomic<uint64_t> next{0}, failed{0}, refused{0};
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (uint64_t t = next++; t < o.tenants; t = next++) {
        proto::ExceedsLimitsRequest req;
        req.set_tenant("flood-tenant-" + std::to_string(t));
        auto* s = req.add_streams();
        s->set_streamhash(t * 0x9e3779b97f4a7c15ULL + 7);
        s->set_totalsize(100);
        grpc::ClientContext ctx;
        proto::ExceedsLimitsResponse resp;
        if (!stub->ExceedsLimits(&ctx, req, &resp).ok()) ++failed;
        refused += static_cast<uint64_t>(resp.results_size());
      }
    });
  }
  for (auto& t : callers) t.join();
  errors = failed;
  rejected = refused;
  Report("ExceedsLimits with distinct tenants", o.tenants, before, SettledRss(pid), node.HttpPort());
  if (o.tenants > 0) {
    std::printf("  streams rejected %llu, calls failed %llu\n", static_cast<unsigned long long>(rejected),
                static_cast<unsigned long long>(errors));
  }

  // 3. UpdateRates, ever new tenants, each 10 hashes in 10 partitions of its own: every key
  // costs a tenant's state in a partition, the most a rate key can cost.
  before = SettledRss(pid);
  std::atomic<uint64_t> next_tenant{0}, spread_failed{0};
  callers.clear();
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      for (uint64_t t = next_tenant++; t < o.spread_tenants; t = next_tenant++) {
        proto::UpdateRatesRequest req;
        req.set_tenant("spread-tenant-" + std::to_string(t));
        for (uint64_t k = 0; k < 10; ++k) {
          auto* s = req.add_streams();
          s->set_streamhash(((t * 10 + k) % 64) + 64 * (t * 0x9e3779b97f4a7c15ULL >> 8));  // partition (t*10+k) % 64
          s->set_totalsize(100);
        }
        grpc::ClientContext ctx;
        proto::UpdateRatesResponse resp;
        if (!stub->UpdateRates(&ctx, req, &resp).ok()) ++spread_failed;
      }
    });
  }
  for (auto& t : callers) t.join();
  Report("UpdateRates, distinct tenants, 10 hashes each in 10 partitions", o.spread_tenants * 10, before,
         SettledRss(pid), node.HttpPort());
  if (o.spread_tenants > 0) std::printf("  calls failed %llu\n", static_cast<unsigned long long>(spread_failed.load()));
  node.child().Kill(SIGTERM);
  return 0;
}
