// store_bench: figures of the usage store on this machine. Not a test: it prints what it
// measured. For each stream count it reports
//   - Apply records/s, 64 partitions, realistic records (tenants of skewed size, 10% with an
//     ingestion policy, time-ordered rounds in which every stream appears once), for two
//     flush cadences: Apply() per 1000-record poll, and ApplyBuffered() + Flush() per 1M records;
//   - UpdateCond checks/s from 2 threads, 100-stream requests, 98% known streams;
//   - resident bytes per stream (process RSS delta after loading);
//   - on-disk bytes per stream after a full compaction;
//   - open time and RSS of a fresh process opening the database (the warm restart).
// Usage: store_bench [--streams N[,N...]] [--records-per-stream R] [--dir DIR]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "limits/decision/admission.h"
#include "limits/usage/usage_store.h"
#include "storage/db.h"

using namespace limits;
using Clock_ = std::chrono::steady_clock;

namespace {

constexpr int32_t kPartitions = 64;
constexpr int kTenants = 100;

double Seconds(Clock_::time_point since) { return std::chrono::duration<double>(Clock_::now() - since).count(); }

uint64_t RssBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
}

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown";
}

struct Stream {
  uint32_t tenant;
  uint64_t hash;
  bool gold;
};

// Tenant sizes follow a Zipf-like curve: a few tenants hold most streams.
std::vector<Stream> MakeStreams(uint64_t n, std::mt19937_64& rng) {
  std::vector<double> weight(kTenants);
  double total = 0;
  for (int t = 0; t < kTenants; ++t) total += weight[static_cast<size_t>(t)] = 1.0 / (t + 1);
  std::discrete_distribution<int> pick(weight.begin(), weight.end());
  std::vector<Stream> streams(n);
  for (auto& s : streams) s = {static_cast<uint32_t>(pick(rng)), rng(), rng() % 10 == 0};
  return streams;
}

std::vector<std::string> TenantNames() {
  std::vector<std::string> names;
  for (int t = 0; t < kTenants; ++t) names.push_back("tenant-" + std::to_string(t));
  return names;
}

struct Opened {
  std::unique_ptr<storage::Db> db;
  std::unique_ptr<UsageStore> store;
  double open_s = 0;
};

Opened Open(const std::string& dir) {
  Opened o;
  const auto t0 = Clock_::now();
  storage::DbOptions dbo;
  dbo.path = dir;
  auto db = storage::Db::Open(dbo);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  o.db = std::move(*db);
  UsageStoreOptions so;
  so.num_partitions = kPartitions;
  auto store = UsageStore::Open(*o.db, so);
  if (!store.ok()) {
    std::fprintf(stderr, "open store: %s\n", store.status().ToString().c_str());
    std::exit(1);
  }
  o.store = std::move(*store);
  o.open_s = Seconds(t0);
  return o;
}

// Feeds `rounds` time-ordered rounds of records (each stream once per round, shuffled) the
// way the consumer does: 1000-record polls split by partition. flush_every == 0 means
// Apply() per poll; otherwise ApplyBuffered() and Flush() every flush_every records.
double Feed(UsageStore& store, const std::vector<Stream>& streams, int rounds, uint64_t flush_every,
            std::vector<int64_t>& offsets, std::mt19937_64& rng) {
  static const std::vector<std::string> names = TenantNames();
  const int64_t now_ms = Clock::System().NowMillis();
  std::vector<uint32_t> order(streams.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::vector<std::vector<Record>> polls(kPartitions);
  uint64_t since_flush = 0, total = 0;
  double elapsed = 0;
  for (int r = 0; r < rounds; ++r) {
    std::shuffle(order.begin(), order.end(), rng);
    // Build the round's records outside the timed part.
    const int64_t round_ms = now_ms - (rounds - r) * 60'000;
    std::vector<std::pair<int32_t, Record>> records;
    records.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
      const Stream& s = streams[order[i]];
      const auto p = static_cast<int32_t>(s.hash % kPartitions);
      records.push_back({p, Record{.tenant = names[s.tenant], .stream_hash = s.hash, .bytes = 1000 + s.hash % 9000,
                                   .policy = s.gold ? "gold" : "", .timestamp_ms = round_ms + static_cast<int64_t>(i % 60000),
                                   .offset = offsets[static_cast<size_t>(p)]++}});
    }
    const auto t0 = Clock_::now();
    for (size_t i = 0; i < records.size(); i += 1000) {
      for (auto& poll : polls) poll.clear();
      for (size_t j = i; j < std::min(records.size(), i + 1000); ++j) {
        polls[static_cast<size_t>(records[j].first)].push_back(records[j].second);
      }
      for (int32_t p = 0; p < kPartitions; ++p) {
        auto& poll = polls[static_cast<size_t>(p)];
        if (poll.empty()) continue;
        const int64_t next = poll.back().offset + 1;
        Status s = flush_every == 0 ? store.Apply(p, poll, next) : store.ApplyBuffered(p, poll, next);
        if (!s.ok()) {
          std::fprintf(stderr, "apply: %s\n", s.ToString().c_str());
          std::exit(1);
        }
      }
      since_flush += std::min<size_t>(1000, records.size() - i);
      if (flush_every != 0 && since_flush >= flush_every) {
        if (!store.Flush().ok()) std::exit(1);
        since_flush = 0;
      }
    }
    if (!store.Flush().ok()) std::exit(1);
    elapsed += Seconds(t0);
    total += records.size();
  }
  return static_cast<double>(total) / elapsed;
}

void UpdateCondBench(UsageStore& store, const std::vector<Stream>& streams) {
  static const std::vector<std::string> names = TenantNames();
  const PartitionSet all = PartitionSet::All(kPartitions);
  TenantLimits limits;
  limits.max_global_streams_per_user = 0;
  std::atomic<uint64_t> checks{0}, requests{0};
  std::atomic<bool> stop{false};
  auto worker = [&](uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<StreamUpdate> req(100);
    UpdateCondResult out;
    while (!stop.load(std::memory_order_relaxed)) {
      const uint32_t tenant = streams[rng() % streams.size()].tenant;
      for (auto& u : req) {
        // 98% known streams (any tenant's hash works as "known" for its partition's cost).
        const Stream& s = streams[rng() % streams.size()];
        u = {.stream_hash = rng() % 50 == 0 ? rng() : s.hash, .bytes = 2000, .policy = s.gold ? "gold" : ""};
      }
      Admission quota(limits, all.Count(), static_cast<uint32_t>(kPartitions));  // per request, as the checker
      if (!store.UpdateCond(names[tenant], req, quota, all, &out).ok()) std::exit(1);
      checks += req.size();
      ++requests;
    }
  };
  const auto t0 = Clock_::now();
  std::thread a(worker, 1), b(worker, 2);
  std::this_thread::sleep_for(std::chrono::seconds(3));  // the measurement period
  stop = true;
  a.join();
  b.join();
  const double s = Seconds(t0);
  std::printf("  UpdateCond, 2 threads, 100 streams/request: %.0f checks/s (%.0f requests/s)\n",
              static_cast<double>(checks.load()) / s, static_cast<double>(requests.load()) / s);
}

uint64_t DiskBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") total += e.file_size();
  }
  return total;
}

int Reopen(const std::string& dir, uint64_t streams) {
  const uint64_t rss0 = RssBytes();
  Opened o = Open(dir);
  const uint64_t loaded = o.store->TotalStreams();
  std::printf("  reopen in a fresh process: %.2f s for %llu streams; RSS %.1f MiB (+%.1f B/stream)\n", o.open_s,
              static_cast<unsigned long long>(loaded), static_cast<double>(RssBytes()) / (1 << 20),
              static_cast<double>(RssBytes() - rss0) / static_cast<double>(streams));
  return loaded == streams ? 0 : 1;
}

void Run(uint64_t n, int rounds, const std::string& base) {
  const std::string dir = base + "/bench-" + std::to_string(n);
  std::filesystem::remove_all(dir);
  std::mt19937_64 rng(n);
  const std::vector<Stream> streams = MakeStreams(n, rng);
  std::printf("\n%llu streams, %d records per stream (%llu records), %d partitions, %d tenants\n",
              static_cast<unsigned long long>(n), rounds, static_cast<unsigned long long>(n * rounds), kPartitions,
              kTenants);
  const uint64_t rss0 = RssBytes();
  Opened o = Open(dir);
  std::vector<int64_t> offsets(kPartitions, 0);
  // The first round creates every stream (pure inserts); later rounds update them.
  const auto t0 = Clock_::now();
  Feed(*o.store, streams, 1, 1'000'000, offsets, rng);
  std::printf("  initial load (1 record per stream, buffered, flush per 1M): %.0f records/s\n",
              static_cast<double>(n) / Seconds(t0));
  const uint64_t rss_loaded = RssBytes();
  std::printf("  resident: %.1f B/stream (RSS %.1f MiB; includes RocksDB memtables and block cache in use)\n",
              static_cast<double>(rss_loaded - rss0) / static_cast<double>(n), static_cast<double>(rss_loaded) / (1 << 20));
  if (rounds > 1) {
    const double buffered = Feed(*o.store, streams, rounds - 1, 1'000'000, offsets, rng);
    std::printf("  replay rounds, ApplyBuffered + Flush per 1M records: %.0f records/s\n", buffered);
    if (n <= 1'000'000) {
      const double per_call = Feed(*o.store, streams, 1, 0, offsets, rng);
      std::printf("  replay round, Apply (rows + checkpoint written) per 1000-record poll: %.0f records/s\n", per_call);
    }
  }
  UpdateCondBench(*o.store, streams);
  const auto tc = Clock_::now();
  if (!o.db->Compact().ok()) std::exit(1);
  std::printf("  full compaction %.1f s; on disk %.1f B/stream (%.1f MiB SST)\n", Seconds(tc),
              static_cast<double>(DiskBytes(dir)) / static_cast<double>(o.store->TotalStreams()),
              static_cast<double>(DiskBytes(dir)) / (1 << 20));
  const uint64_t total = o.store->TotalStreams();
  o.store.reset();
  o.db.reset();
  // A fresh process measures the warm restart without this one's heap.
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) std::exit(1);
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string streams_arg = std::to_string(total);
    execl(self, self, "--reopen", dir.c_str(), streams_arg.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::strcmp(argv[1], "--reopen") == 0) return Reopen(argv[2], std::stoull(argv[3]));
  std::vector<uint64_t> counts = {1'000'000, 10'000'000};
  int rounds = 5;
  std::string dir = std::filesystem::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--streams") {
      counts.clear();
      for (size_t pos = 0; pos < value.size();) {
        const size_t comma = value.find(',', pos);
        counts.push_back(std::stoull(value.substr(pos, comma - pos)));
        pos = comma == std::string::npos ? value.size() : comma + 1;
      }
    } else if (flag == "--records-per-stream") {
      rounds = std::stoi(value);
    } else if (flag == "--dir") {
      dir = value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  log::Configure(log::Level::kWarn, log::Format::kLogfmt);
  std::printf("store_bench on %s, %u hardware threads; RocksDB dir under %s\n", CpuModel().c_str(),
              std::thread::hardware_concurrency(), dir.c_str());
  for (uint64_t n : counts) Run(n, rounds, dir);
  return 0;
}
