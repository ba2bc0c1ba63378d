// crash_loop: are admissions durable across SIGKILL on a real Kafka broker (issue 24, items 5
// and 8)? Starts a real broker (scripts/kafka-dev.sh, testing::RealKafka) and limitsd on it, runs
// two loads with reference models (crash_loop_loads.h) — ExceedsLimits over gRPC for tenants
// with a stream limit, and another zone's records produced straight to the topic — and
// SIGKILLs limitsd at random moments (some right after an answer that admitted new streams),
// restarting it each time on the same data directory, instance id and group. At the end it
// compares what the node holds with the models and prints one summary line; exit 1 on any loss.
// A program that prints figures, not a test: run it through scripts/crash-loop.sh.
#include <grpcpp/grpcpp.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <random>
#include <thread>

#include "common/flag_cursor.h"
#include "crash_loop_loads.h"
#include "crash_loop_node.h"
#include "proto/limits.grpc.pb.h"
#include "testing/real_kafka.h"

using namespace limits;
using namespace limits::bench;
using Steady = std::chrono::steady_clock;

namespace {

constexpr char kUsage[] = R"(usage: crash_loop [options]

Starts a real Kafka broker (scripts/kafka-dev.sh) and limitsd on it, runs an ExceedsLimits
load (limited tenants, a model of every stream answered accepted) and a produce load (another
zone's tenants, a model of every delivered record), SIGKILLs limitsd at random moments and
restarts it on the same data directory, instance id and group, then checks what the node
holds against the models. Prints one line per kill, a table per tenant and a summary line;
exit 0 when nothing was lost, 1 on any loss, 2 on bad usage, 3 when the broker or limitsd
could not be run (a limitsd that does not serve again within --ready-timeout).

Kills
  --kills N              SIGKILLs, at least (default 32)
  --duration S           run at least S seconds, killing on (default 0: until --kills)
  --min-delay S          shortest pause between serving again and the next kill, s (0.2)
  --max-delay S          longest, s (3)
  --right-after F        fraction of kills sent right after an answer that admitted new
                         streams, instead of after a random pause (0.3)
  --ready-timeout S      how long a restarted limitsd may take to serve all partitions (60)
ExceedsLimits load (the limited tenants)
  --tenants N            tenants "limited-0".. (8)
  --limit L              their stream limit, limits.defaults.max_global_streams_per_user (500)
  --rate R               calls per second over all callers while the node serves (40)
  --callers C            concurrent callers, a connection each (4)
  --per-request K        streams per call (50)
  --new-per-request N    of which never sent before; the rest are admitted ones (2)
  --live N               admitted streams still pushed: the N newest of the tenant (100); older
                         ones are no longer sent (churn), so a lost one is not re-admitted
Produce load (another zone's tenants, records straight to the topic)
  --produce-tenants N    tenants "other-zone-0".. (4)
  --produce-rate R       records per second (1000)
  --produce-new F        fraction of records naming a new stream (0.5)
Node and run
  --limitsd PATH         the limitsd under test (default: bin/limitsd of this build)
  --limitsctl PATH       (default: bin/limitsctl of this build)
  --partitions N         the topic's partitions, kafka.num_partitions (64)
  --seed N               streams and kill moments (1)
  --dir D                logs and the node's database (default /tmp/crash_loop.PID; kept)
  --node-set KEY=VALUE   one more --set for limitsd (repeatable)

The model: "admitted" = every stream answered accepted; "maybe" = the streams of calls that
failed or were cut by a kill (never answered accepted); produced = every stream of a record the
broker acknowledged. Counted (the kill lines and the summary):
  lost_at_restart admitted before a kill but missing from the node's count right after the
                  restart, before the load resumes (new ones per kill, summed): the durability
                  gap itself, including losses healed later by a re-push while there was room
  lost            admitted streams the node no longer holds at the end: read from the database
                  after the final graceful stop (limitsctl streams), before anything is sent
                  again, so a lost stream cannot be silently re-admitted first
  over_limit      distinct streams ever answered accepted beyond L, per tenant (what a lost
                  stream whose place was taken produces)
  rejected_after_admit  distinct admitted streams later answered reason 2 (forgotten, no room)
  double_counted  the node's count (GET /ingest-limits/usage) above the distinct streams it
                  holds; unexpected: held streams neither admitted nor maybe admitted
  produced_lost   streams of delivered records the node does not hold
  resend_rejected admitted streams rejected when sent again to the node restarted at the end
Any of them above 0 makes the exit status 1.
)";

struct Options {
  std::string limitsd, limitsctl, dir;
  int kills = 32;
  double duration_s = 0;
  double min_delay_s = 0.2, max_delay_s = 3;
  double right_after = 0.3;
  double ready_timeout_s = 60;
  int32_t partitions = 64;
  uint64_t seed = 1;
  uint64_t limit = 500;
  ExceedsOptions exceeds;
  ProduceOptions produce;
  std::vector<std::string> node_sets;
};

std::atomic<bool> g_interrupted{false};

extern "C" void OnSignal(int) {
  if (g_interrupted.exchange(true)) _exit(130);  // a second signal: now (children die with us)
}

// This program's directory (build/tests/bench), for the default binaries of its build.
std::string BuildDir() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "build" : self.parent_path().parent_path().parent_path().string();
}

int ParseOptions(int argc, char** argv, Options* o) {
  FlagCursor f(argc, argv);
  while (f.Next()) {
    const std::string k = f.arg();
    if (k == "--help" || k == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    const std::optional<std::string> v = f.Value();
    if (!f.is_flag() || !v) {
      std::fprintf(stderr, "crash_loop: %s: %s\n", k.c_str(), f.is_flag() ? "needs a value" : "unexpected argument");
      return 2;
    }
    try {
      if (k == "--kills") o->kills = std::stoi(*v);
      else if (k == "--duration") o->duration_s = std::stod(*v);
      else if (k == "--min-delay") o->min_delay_s = std::stod(*v);
      else if (k == "--max-delay") o->max_delay_s = std::stod(*v);
      else if (k == "--right-after") o->right_after = std::stod(*v);
      else if (k == "--ready-timeout") o->ready_timeout_s = std::stod(*v);
      else if (k == "--tenants") o->exceeds.tenants = static_cast<uint32_t>(std::stoul(*v));
      else if (k == "--limit") o->limit = std::stoull(*v);
      else if (k == "--rate") o->exceeds.rate = std::stod(*v);
      else if (k == "--callers") o->exceeds.callers = std::stoi(*v);
      else if (k == "--per-request") o->exceeds.per_request = static_cast<uint32_t>(std::stoul(*v));
      else if (k == "--new-per-request") o->exceeds.new_per_request = static_cast<uint32_t>(std::stoul(*v));
      else if (k == "--live") o->exceeds.live = std::stoull(*v);
      else if (k == "--produce-tenants") o->produce.tenants = static_cast<uint32_t>(std::stoul(*v));
      else if (k == "--produce-rate") o->produce.rate = std::stod(*v);
      else if (k == "--produce-new") o->produce.new_fraction = std::stod(*v);
      else if (k == "--limitsd") o->limitsd = *v;
      else if (k == "--limitsctl") o->limitsctl = *v;
      else if (k == "--partitions") o->partitions = std::stoi(*v);
      else if (k == "--seed") o->seed = std::stoull(*v);
      else if (k == "--dir") o->dir = *v;
      else if (k == "--node-set") o->node_sets.push_back(*v);
      else {
        std::fprintf(stderr, "crash_loop: unknown option %s (--help lists them)\n", k.c_str());
        return 2;
      }
    } catch (const std::exception&) {
      std::fprintf(stderr, "crash_loop: %s %s: not a number\n", k.c_str(), v->c_str());
      return 2;
    }
  }
  if (o->exceeds.tenants == 0 || o->exceeds.callers <= 0 || o->exceeds.per_request == 0 || o->partitions <= 0 ||
      o->min_delay_s < 0 || o->max_delay_s < o->min_delay_s || o->kills < 0 || o->limit == 0) {
    std::fprintf(stderr, "crash_loop: an option is out of range (--help)\n");
    return 2;
  }
  const std::string build = BuildDir();
  if (o->limitsd.empty()) o->limitsd = build + "/bin/limitsd";
  if (o->limitsctl.empty()) o->limitsctl = build + "/bin/limitsctl";
  if (o->dir.empty()) o->dir = "/tmp/crash_loop." + std::to_string(getpid());
  o->exceeds.seed = o->produce.seed = o->seed;
  o->produce.partitions = o->partitions;
  return 0;
}

double Since(Steady::time_point t) { return std::chrono::duration<double>(Steady::now() - t).count(); }

uint64_t CountNotIn(const std::unordered_set<uint64_t>& a, const std::unordered_set<uint64_t>& b) {
  uint64_t n = 0;
  for (uint64_t x : a) n += !b.count(x);
  return n;
}

struct KillRecord {
  double at_s = 0;              // since the loads started
  bool right_after = false;
  double since_answer_ms = -1;  // right after: from the admitting answer to the kill
  double restart_s = 0;         // kill -> serving every partition again
  uint64_t lost_at_restart = 0; // admitted before the kill, not counted after the restart
};

std::string Quantiles(std::vector<double> v) {
  if (v.empty()) return "-";
  std::sort(v.begin(), v.end());
  char buf[96];
  std::snprintf(buf, sizeof buf, "min %.2f  median %.2f  max %.2f", v.front(), v[v.size() / 2], v.back());
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (const int rc = ParseOptions(argc, argv, &o); rc != 0) return rc;
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::filesystem::create_directories(o.dir);
  const std::string db = o.dir + "/db";
  const std::string topic = "ingest-limits-metadata";

  std::printf("crash_loop: limitsd %s\ncrash_loop: dir %s\n", o.limitsd.c_str(), o.dir.c_str());
  std::printf("crash_loop: starting a real Kafka broker (scripts/kafka-dev.sh), topic with %d partitions\n", o.partitions);
  Result<std::unique_ptr<testing::RealKafka>> kafka = testing::RealKafka::Start();
  if (!kafka.ok()) {
    std::fprintf(stderr, "crash_loop: %s\n", kafka.status().ToString().c_str());
    return 3;
  }
  if (Status s = (*kafka)->CreateTopic(topic, o.partitions); !s.ok()) {
    std::fprintf(stderr, "crash_loop: %s\n", s.ToString().c_str());
    return 3;
  }
  const std::vector<std::string> sets = [&] {
    std::vector<std::string> s = {
        "kafka.brokers=" + (*kafka)->bootstrap(),
        "kafka.topic=" + topic,
        "kafka.num_partitions=" + std::to_string(o.partitions),
        "store.path=" + db,
        "node.zone=zone-a",
        "node.instance_id=crash-loop-0",  // the same instance id and group on every restart
        "kafka.consumer_group=limitsd-zone-a",
        "server.http_listen=127.0.0.1:0",
        "server.grpc_listen=127.0.0.1:0",
        "limits.defaults.max_global_streams_per_user=" + std::to_string(o.limit),
        // As the realkafka tests: a real coordinator notices a restarted static member at once.
        "kafka.properties.session.timeout.ms=6000",
        "kafka.properties.heartbeat.interval.ms=300",
        "kafka.properties.reconnect.backoff.max.ms=500",
    };
    s.insert(s.end(), o.node_sets.begin(), o.node_sets.end());
    return s;
  }();

  const auto ready_timeout = std::chrono::milliseconds(static_cast<int64_t>(o.ready_timeout_s * 1000));
  int run = 0;
  auto log_of = [&](int n) { return o.dir + "/limitsd." + std::to_string(n) + ".log"; };
  NodeProcess node;
  if (Status s = StartNode(o.limitsd, sets, o.partitions, ready_timeout, log_of(run++), &node); !s.ok()) {
    std::fprintf(stderr, "crash_loop: the first start failed: %s\n", s.ToString().c_str());
    return 3;
  }
  std::printf("crash_loop: limitsd serves (gRPC %d, HTTP %d); loads start: %u limited tenants (limit %" PRIu64
              "), %.0f calls/s of %u streams (%u new); %u produced tenants at %.0f records/s\n",
              node.grpc, node.http, o.exceeds.tenants, o.limit, o.exceeds.rate, o.exceeds.per_request,
              o.exceeds.new_per_request, o.produce.tenants, o.produce.rate);

  o.produce.brokers = (*kafka)->bootstrap();
  o.produce.topic = topic;
  Result<std::unique_ptr<ProduceModel>> produce = ProduceModel::Start(o.produce);
  if (!produce.ok()) {
    std::fprintf(stderr, "crash_loop: producer: %s\n", produce.status().ToString().c_str());
    return 3;
  }
  ExceedsModel exceeds(o.exceeds);
  exceeds.Serve(node.grpc);

  // The kill loop.
  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> delay(o.min_delay_s, o.max_delay_s);
  std::bernoulli_distribution right_after(std::clamp(o.right_after, 0.0, 1.0));
  std::vector<KillRecord> kills;
  std::vector<uint64_t> missing_before(o.exceeds.tenants, 0);  // per tenant, after the last restart
  const auto t0 = Steady::now();
  std::string failure;
  while (!g_interrupted && (static_cast<int>(kills.size()) < o.kills || Since(t0) < o.duration_s)) {
    KillRecord k;
    const double pause = delay(rng);
    if (right_after(rng)) {
      // A random pause first (the loads run on), then the next answer that admits new streams.
      std::this_thread::sleep_for(std::chrono::duration<double>(pause * std::uniform_real_distribution<double>(0, 1)(rng)));
      std::chrono::microseconds since{0};
      k.right_after = exceeds.WaitForAdmission(std::chrono::seconds(3), &since);
      if (k.right_after) k.since_answer_ms = static_cast<double>(since.count()) / 1000;
    } else {
      std::this_thread::sleep_for(std::chrono::duration<double>(pause));  // the fault's moment, not a sync
    }
    if (g_interrupted) break;
    exceeds.Pause();
    const auto killed_at = Steady::now();
    k.at_s = std::chrono::duration<double>(killed_at - t0).count();
    node.child->Kill(SIGKILL);
    const Status s = StartNode(o.limitsd, sets, o.partitions, ready_timeout, log_of(run++), &node);
    k.restart_s = Since(killed_at);
    kills.push_back(k);
    if (!s.ok()) {
      failure = "kill " + std::to_string(kills.size()) + ": " + s.ToString();
      break;
    }
    // Before the load resumes (nothing can be admitted again yet): every stream admitted before
    // the kill must be counted. Missing ones are lost, whatever happens later (a lost stream
    // pushed again while there is room is admitted again, unnoticed by the final check). What
    // was missing after the previous restart may still be: only increases count as new losses
    // (a lower bound when a re-admission healed some in between).
    const std::vector<size_t> admitted_now = exceeds.AdmittedCounts();
    uint64_t missing = 0, added = 0;
    for (size_t t = 0; t < admitted_now.size(); ++t) {
      const int64_t c = CountedStreams(node.http, exceeds.tenants()[t].name);
      const uint64_t m = c >= 0 && static_cast<size_t>(c) < admitted_now[t] ? admitted_now[t] - static_cast<size_t>(c) : 0;
      missing += m;
      added += m > missing_before[t] ? m - missing_before[t] : 0;
      missing_before[t] = m;
    }
    kills.back().lost_at_restart = added;
    exceeds.Serve(node.grpc);
    char when[64] = "after a random pause";
    if (k.right_after) std::snprintf(when, sizeof when, "%.2f ms after an answer admitting new streams", k.since_answer_ms);
    std::printf("kill %2zu at %6.1f s (%s): serving again %.2f s later; %" PRIu64 " streams admitted, %" PRIu64
                " of them missing from the node's counts (+%" PRIu64 ")\n",
                kills.size(), k.at_s, when, k.restart_s, exceeds.counters().streams_new_admitted.load(),
                missing, added);
  }
  exceeds.Stop();
  produce.value()->Stop(std::chrono::seconds(30));
  if (!failure.empty()) {
    std::fprintf(stderr, "crash_loop: limitsd failed to restart after %s\n", failure.c_str());
    std::printf("kills=%zu restart_failed=1 (logs in %s)\n", kills.size(), o.dir.c_str());
    return 3;
  }
  const double loaded_s = Since(t0);

  // The end: the node has consumed every delivered record once its counts reach the model's
  // (or stop moving); then the counts, a graceful stop, and the database.
  const std::vector<TenantModel>& limited = exceeds.tenants();
  const std::vector<ProducedTenant>& produced = produce.value()->tenants();
  {
    const auto w0 = Steady::now();
    for (const ProducedTenant& t : produced) {
      while (CountedStreams(node.http, t.name) < static_cast<int64_t>(t.delivered.size()) && Since(w0) < 60) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the polling period
      }
    }
  }
  std::map<std::string, int64_t> counted;
  for (const TenantModel& t : limited) counted[t.name] = CountedStreams(node.http, t.name);
  for (const ProducedTenant& t : produced) counted[t.name] = CountedStreams(node.http, t.name);
  const bool graceful = StopNode(&node, std::chrono::seconds(60));
  std::map<std::string, std::unordered_set<uint64_t>> held;
  for (const std::string& name : [&] {
         std::vector<std::string> n;
         for (const auto& t : limited) n.push_back(t.name);
         for (const auto& t : produced) n.push_back(t.name);
         return n;
       }()) {
    Result<std::unordered_set<uint64_t>> h = HeldStreams(o.limitsctl, db, name);
    if (!h.ok()) {
      std::fprintf(stderr, "crash_loop: %s\n", h.status().ToString().c_str());
      return 3;
    }
    held[name] = std::move(*h);
  }

  // Sent again to a restarted node: an admitted stream must be accepted (known).
  std::map<std::string, uint64_t> resend_rejected;
  uint64_t resend_errors = 0;
  if (Status s = StartNode(o.limitsd, sets, o.partitions, ready_timeout, log_of(run++), &node); !s.ok()) {
    std::fprintf(stderr, "crash_loop: the restart for the re-send check failed: %s\n", s.ToString().c_str());
    return 3;
  }
  {
    auto stub = proto::IngestLimits::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(node.grpc), grpc::InsecureChannelCredentials()));
    for (const TenantModel& t : limited) {
      for (size_t from = 0; from < t.admitted_order.size(); from += 1000) {
        proto::ExceedsLimitsRequest req;
        req.set_tenant(t.name);
        for (size_t i = from; i < std::min(from + 1000, t.admitted_order.size()); ++i) {
          proto::StreamMetadata* s = req.add_streams();
          s->set_streamhash(t.admitted_order[i]);
          s->set_totalsize(100);
        }
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
        proto::ExceedsLimitsResponse resp;
        if (!stub->ExceedsLimits(&ctx, req, &resp).ok()) ++resend_errors;
        resend_rejected[t.name] += static_cast<uint64_t>(resp.results_size());
      }
    }
  }
  StopNode(&node, std::chrono::seconds(60));

  // The report.
  uint64_t admitted = 0, maybe = 0, lost = 0, over_limit = 0, double_counted = 0, unexpected = 0,
           rejected_after = 0, resent_rejected = 0, reason1 = 0;
  std::printf("\nlimited tenants (limit %" PRIu64 "):\n", o.limit);
  std::printf("%-12s %8s %6s %6s %8s %5s %10s %14s %10s %20s %15s\n", "TENANT", "ADMITTED", "MAYBE", "HELD",
              "COUNTED", "LOST", "OVER_LIMIT", "DOUBLE_COUNTED", "UNEXPECTED", "REJECTED_AFTER_ADMIT",
              "RESEND_REJECTED");
  for (const TenantModel& t : limited) {
    const auto& h = held[t.name];
    std::unordered_set<uint64_t> either = t.admitted;
    either.insert(t.maybe.begin(), t.maybe.end());
    const uint64_t l = CountNotIn(t.admitted, h);
    const uint64_t over = t.admitted.size() > o.limit ? t.admitted.size() - o.limit : 0;
    const int64_t c = counted[t.name];
    const uint64_t dbl = c > static_cast<int64_t>(h.size()) ? static_cast<uint64_t>(c) - h.size() : 0;
    const uint64_t unx = CountNotIn(h, either);
    std::printf("%-12s %8zu %6zu %6zu %8lld %5" PRIu64 " %10" PRIu64 " %14" PRIu64 " %10" PRIu64 " %20" PRIu64
                " %15" PRIu64 "\n",
                t.name.c_str(), t.admitted.size(), t.maybe.size(), h.size(), static_cast<long long>(c), l, over, dbl,
                unx, t.rejected_after_admit.size(), resend_rejected[t.name]);
    admitted += t.admitted.size();
    maybe += t.maybe.size();
    lost += l;
    over_limit += over;
    double_counted += dbl;
    unexpected += unx;
    rejected_after += t.rejected_after_admit.size();
    resent_rejected += resend_rejected[t.name];
    reason1 += t.reason1;
  }
  uint64_t produced_streams = 0, produced_lost = 0, produced_double = 0, produced_unexpected = 0, produced_maybe = 0;
  std::printf("\nproduced tenants (zone-b's records on the topic):\n");
  std::printf("%-14s %9s %6s %6s %8s %5s %14s %10s\n", "TENANT", "DELIVERED", "MAYBE", "HELD", "COUNTED", "LOST",
              "DOUBLE_COUNTED", "UNEXPECTED");
  for (const ProducedTenant& t : produced) {
    const auto& h = held[t.name];
    std::unordered_set<uint64_t> either = t.delivered;
    either.insert(t.failed.begin(), t.failed.end());
    const uint64_t l = CountNotIn(t.delivered, h);
    const int64_t c = counted[t.name];
    const uint64_t dbl = c > static_cast<int64_t>(h.size()) ? static_cast<uint64_t>(c) - h.size() : 0;
    const uint64_t unx = CountNotIn(h, either);
    std::printf("%-14s %9zu %6zu %6zu %8lld %5" PRIu64 " %14" PRIu64 " %10" PRIu64 "\n", t.name.c_str(),
                t.delivered.size(), t.failed.size(), h.size(), static_cast<long long>(c), l, dbl, unx);
    produced_streams += t.delivered.size();
    produced_maybe += t.failed.size();
    produced_lost += l;
    produced_double += dbl;
    produced_unexpected += unx;
  }
  std::vector<double> restarts, since_answer;
  int right_after_kills = 0;
  uint64_t lost_at_restart = 0;
  for (const KillRecord& k : kills) {
    lost_at_restart += k.lost_at_restart;
    restarts.push_back(k.restart_s);
    if (k.right_after) {
      ++right_after_kills;
      since_answer.push_back(k.since_answer_ms);
    }
  }
  const CallCounters& calls = exceeds.counters();
  std::printf("\nrun: %.1f s of load, %zu kills (%d right after an admitting answer: ms %s), restart to serving s: %s\n",
              loaded_s, kills.size(), right_after_kills, Quantiles(since_answer).c_str(), Quantiles(restarts).c_str());
  std::printf("ExceedsLimits: %" PRIu64 " calls answered, %" PRIu64 " failed or cut; %" PRIu64
              " streams answered accepted, %" PRIu64 " reason 1 (could not be checked)\n",
              calls.ok.load(), calls.failed.load(), calls.streams_accepted.load(), reason1);
  std::printf("produce: %" PRIu64 " records queued, %" PRIu64 " delivered, %" PRIu64 " failed\n",
              produce.value()->queued(), produce.value()->delivered_records(), produce.value()->failed_records());
  if (!graceful) std::printf("note: the final stop was not graceful (SIGKILL after 60 s): the database may lag\n");
  if (resend_errors) std::printf("note: %" PRIu64 " re-send calls failed\n", resend_errors);
  std::printf("logs and database: %s\n\n", o.dir.c_str());
  std::printf("kills=%zu admitted=%" PRIu64 " lost=%" PRIu64 " over_limit=%" PRIu64 " double_counted=%" PRIu64
              " produced_streams=%" PRIu64 " produced_lost=%" PRIu64 " maybe=%" PRIu64 " unexpected=%" PRIu64
              " rejected_after_admit=%" PRIu64 " resend_rejected=%" PRIu64 " lost_at_restart=%" PRIu64
              " produced_double_counted=%" PRIu64 " produced_unexpected=%" PRIu64 "\n",
              kills.size(), admitted, lost, over_limit, double_counted, produced_streams, produced_lost, maybe,
              unexpected, rejected_after, resent_rejected, lost_at_restart, produced_double, produced_unexpected);
  const bool bad = lost || over_limit || lost_at_restart || double_counted || unexpected || rejected_after || resent_rejected ||
                   produced_lost || produced_double || produced_unexpected || resend_errors;
  return bad ? 1 : 0;
}
