// grpc_bench: ExceedsLimits throughput and latency through the whole serving path — gRPC on
// loopback, admission, the store's group commit, producing — against a node on the embedded
// mock cluster. Client and server share this machine's cores; the figures are a floor.
// Usage: grpc_bench [--seconds S] [--threads T] [--streams-per-request N] [--tenants K]
#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "common/log.h"
#include "config/load_config.h"
#include "node/node.h"
#include "proto/limits.grpc.pb.h"

using namespace limits;
using Steady = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int seconds = 10, threads = 2, per_request = 100, tenants = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--streams-per-request")) per_request = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--tenants")) tenants = std::atoi(argv[i + 1]);
  }
  log::Configure(log::Level::kWarn, log::Format::kLogfmt);
  const std::string dir = std::filesystem::temp_directory_path().string() + "/grpc_bench";
  std::filesystem::remove_all(dir);
  config::Config c = *config::ParseConfig("", "bench",
                                          {"store.path=" + dir, "server.grpc_listen=127.0.0.1:0",
                                           "server.http_listen=127.0.0.1:0", "limits.defaults.max_global_streams_per_user=0",
                                           "limits.defaults.ingestion_rate_mb=0"});
  auto node = Node::Start(c);
  if (!node.ok()) {
    std::fprintf(stderr, "%s\n", node.status().ToString().c_str());
    return 1;
  }
  while ((*node)->partitions().Serving()->Count() < 64) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const std::string target = "127.0.0.1:" + std::to_string((*node)->grpc_port());
  std::printf("grpc_bench: %d client threads, %d streams/request, %d tenants, %d s, node on %s (64 partitions)\n",
              threads, per_request, tenants, seconds, target.c_str());

  std::atomic<bool> stop{false};
  std::atomic<uint64_t> requests{0}, errors{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(threads));
  std::vector<std::thread> clients;
  for (int t = 0; t < threads; ++t) {
    clients.emplace_back([&, t] {
      auto stub = proto::IngestLimits::NewStub(grpc::CreateChannel(target, grpc::InsecureChannelCredentials()));
      std::mt19937_64 rng(static_cast<uint64_t>(t) + 1);
      proto::ExceedsLimitsRequest req;
      proto::ExceedsLimitsResponse resp;
      while (!stop.load(std::memory_order_relaxed)) {
        req.Clear();
        req.set_tenant("tenant-" + std::to_string(rng() % static_cast<uint64_t>(tenants)));
        for (int i = 0; i < per_request; ++i) {
          auto* s = req.add_streams();
          // 10 000 streams per tenant: after warm-up nearly every stream is known.
          s->set_streamhash(rng() % 10'000);
          s->set_totalsize(1000);
        }
        grpc::ClientContext ctx;
        const auto t0 = Steady::now();
        grpc::Status st = stub->ExceedsLimits(&ctx, req, &resp);
        latencies[static_cast<size_t>(t)].push_back(std::chrono::duration<double, std::milli>(Steady::now() - t0).count());
        (st.ok() ? requests : errors).fetch_add(1);
      }
    });
  }
  const auto t0 = Steady::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));  // the measurement period
  stop = true;
  for (auto& th : clients) th.join();
  const double elapsed = std::chrono::duration<double>(Steady::now() - t0).count();
  std::vector<double> all;
  for (auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  auto pct = [&](double p) { return all.empty() ? 0.0 : all[static_cast<size_t>(p * static_cast<double>(all.size() - 1))]; };
  std::printf("  %.0f requests/s, %.0f streams checked/s, %llu errors\n", static_cast<double>(requests.load()) / elapsed,
              static_cast<double>(requests.load()) * per_request / elapsed, static_cast<unsigned long long>(errors.load()));
  std::printf("  latency ms: p50 %.2f  p90 %.2f  p99 %.2f  max %.2f\n", pct(0.5), pct(0.9), pct(0.99), pct(1.0));
  std::printf("  streams held: %llu; records produced: %llu\n",
              static_cast<unsigned long long>((*node)->store().TotalStreams()),
              static_cast<unsigned long long>((*node)->producer().stats().produced.load()));
  (*node)->Stop();
  std::filesystem::remove_all(dir);
  return 0;
}
