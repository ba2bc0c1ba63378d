// The node against librdkafka's mock cluster, real RocksDB in temp dirs, HTTP on loopback:
// cold start, restarts (graceful and SIGKILL), two nodes in a group, two zones, same-zone
// handoff, revoke/re-assign inside and outside the retention, offset look-up failure,
// corrupt records. Timings follow MOCK-KAFKA.md: a first assignment takes ~3 s, every later
// rebalance ~session.timeout (6 s here).
#include <signal.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <mutex>
#include <set>

#include "common/log.h"
#include "kafka/record_codec.h"
#include "limits/decision/admission.h"
#include "node/node.h"
#include "proto/limits.grpc.pb.h"
#include "testing/http_client.h"
#include "testing/limitsd_process.h"
#include "testing/node_log.h"
#include "testing/node_partitions.h"
#include "testing/raw_produce.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::HttpGet;
using testing::TempDir;
using testing::TestKafka;
using testing::WaitFor;

constexpr int32_t kPartitions = 4;

int64_t NowMs() { return Clock::System().NowMillis(); }

// Streams hashed into `partition`: hash = n * partitions + partition.
uint64_t HashIn(int32_t partition, uint64_t n) { return n * kPartitions + static_cast<uint64_t>(partition); }

using testing::AllReady;
using testing::AssignedPartitions;
using testing::ReadyPartitions;

class NodeTest : public ::testing::Test {
 protected:
  std::unique_ptr<Node> Start(const std::string& name, const std::string& zone = "zone-a",
                              const std::function<void(config::Config&)>& tweak = nullptr, NodeOptions options = {}) {
    config::Config c = kafka_.NodeConfig(dir_.Sub(name), zone, name);
    if (tweak) tweak(c);
    Result<std::unique_ptr<Node>> node = Node::Start(c, Clock::System(), options);
    EXPECT_TRUE(node.ok()) << node.status().ToString();
    return node.ok() ? std::move(*node) : nullptr;
  }

  uint64_t Streams(Node& node, const std::string& tenant, const PartitionSet& partitions) {
    return node.store().UsageOf(tenant, partitions).active_streams;
  }

  TempDir dir_;
  TestKafka kafka_{kPartitions};
  const PartitionSet all_ = PartitionSet::All(kPartitions);
};

// 1. Cold start: only the records inside the active window are consumed and applied.
TEST_F(NodeTest, ColdStartReplaysOnlyTheActiveWindow) {
  const int64_t now = NowMs();
  for (int32_t p = 0; p < kPartitions; ++p) {
    for (uint64_t i = 0; i < 50; ++i) kafka_.Produce("tenant-a", HashIn(p, 1000 + i), now - 3 * 3600'000 + int64_t(i));
    for (uint64_t i = 0; i < 30; ++i) kafka_.Produce("tenant-a", HashIn(p, i), now - 1800'000 + int64_t(i) * 1000);
  }
  kafka_.Flush();
  auto node = Start("a", "zone-a", [](config::Config& c) {
    c.windows.active = 1h;
    c.windows.wait_assign = 60s;
  });
  ASSERT_TRUE(node);
  const testing::HttpResult early = HttpGet(node->http_port(), "/ready");
  EXPECT_EQ(early.status, 503) << early.body;
  EXPECT_EQ(HttpGet(node->http_port(), "/live").status, 200);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(HttpGet(node->http_port(), "/ready").status, 200);
  // The window's start was found by the binary search (the mock answers -1 to time
  // look-ups): nothing older was even fetched.
  EXPECT_EQ(node->consumer().stats().fetched.load(), 4u * 30);
  EXPECT_EQ(node->consumer().stats().applied.load(), 4u * 30);
  EXPECT_EQ(Streams(*node, "tenant-a", all_), 4u * 30);
  for (const PartitionInfo& info : node->partitions().Snapshot()) {
    EXPECT_EQ(info.end_offset, 80) << info.partition;
    EXPECT_EQ(info.replay.start_offset, 50) << info.partition;
  }
}

// 2. Restart after a graceful stop replays only what was produced after the checkpoint.
TEST_F(NodeTest, GracefulRestartReplaysOnlyNewRecords) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now - 60'000);
  kafka_.Flush();
  {
    auto node = Start("a");
    ASSERT_TRUE(node);
    ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
    EXPECT_EQ(Streams(*node, "t", all_), 40u);
    node->Stop();
  }
  for (uint64_t i = 40; i < 65; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(node->consumer().stats().fetched.load(), 25u);  // the delta, not the window
  EXPECT_EQ(Streams(*node, "t", all_), 65u);
}

// A limitsd process (the real binary), for what needs a process boundary: SIGKILL.
class NodeProcess : public testing::LimitsdProcess {
 public:
  NodeProcess(const TestKafka& kafka, const std::string& dir, const std::string& log_path)
      : testing::LimitsdProcess(LIMITSD, kafka.NodeConfig(dir, "zone-a", "killed"), log_path) {}
  bool ReadyWithAllPartitions() const { return ReadyWith(kPartitions); }
};

// 2b. Restart after SIGKILL: the checkpoint on disk decides where replay resumes.
TEST_F(NodeTest, RestartAfterSigkillReplaysOnlyAfterTheCheckpoint) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now - 60'000);
  kafka_.Flush();
  const std::string dir = dir_.Sub("killed");
  const std::string db = dir + "/db";
  {
    NodeProcess node(kafka_, dir, dir_.Sub("first.log"));
    ASSERT_TRUE(WaitFor([&] { return node.ReadyWithAllPartitions(); }, 60s)) << node.Log();
    // Wait for the checkpoints on disk (read beside the running node) to cover everything.
    ASSERT_TRUE(WaitFor(
        [&] {
          testing::RunResult r = testing::RunProgram({LIMITSCTL, "--db", db, "--json", "partitions"});
          size_t covered = 0;
          for (int32_t p = 0; p < kPartitions; ++p) {
            if (r.out.find("\"partition\": " + std::to_string(p) + ",\n      \"state\": \"held\",\n      \"checkpoint\": {\n        \"next_offset\": 10,") != std::string::npos) {
              ++covered;
            }
          }
          return covered == kPartitions;
        },
        30s));
    node.Kill(SIGKILL);
  }
  for (uint64_t i = 40; i < 65; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  NodeProcess node(kafka_, dir, dir_.Sub("second.log"));
  // The killed member holds the partitions until its session times out.
  ASSERT_TRUE(WaitFor([&] { return node.ReadyWithAllPartitions(); }, 90s)) << node.Log();
  const auto [planned, replayed] = node.Planned();
  EXPECT_EQ(planned, kPartitions);
  EXPECT_EQ(replayed, 25);  // the records after the checkpoints, not the 65 of the window
  node.Kill(SIGTERM);
  testing::RunResult tenants = testing::RunProgram({LIMITSCTL, "--db", db, "--json", "tenants"});
  EXPECT_THAT(tenants.out, ::testing::HasSubstr("\"total_streams\": 65"));
}

// Requests write nothing to disk (the consumer's next flush does): streams accepted through
// gRPC and SIGKILLed right after their records reached the topic come back on restart from
// those records, which only the producing process itself skips.
TEST_F(NodeTest, StreamsAcceptedJustBeforeASigkillComeBackFromTheTopic) {
  const std::string dir = dir_.Sub("killed");
  constexpr uint64_t kAccepted = 200;
  {
    NodeProcess node(kafka_, dir, dir_.Sub("first.log"));
    ASSERT_TRUE(WaitFor([&] { return node.ReadyWithAllPartitions(); }, 60s)) << node.Log();
    auto stub = proto::IngestLimits::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(node.GrpcPort()), grpc::InsecureChannelCredentials()));
    proto::ExceedsLimitsRequest req;
    req.set_tenant("t");
    for (uint64_t i = 0; i < kAccepted; ++i) req.add_streams()->set_streamhash(i);
    proto::ExceedsLimitsResponse resp;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->ExceedsLimits(&ctx, req, &resp).ok());
    ASSERT_EQ(resp.results_size(), 0);  // all accepted
    ASSERT_TRUE(WaitFor(
        [&] {
          int64_t produced = 0;
          for (int32_t p = 0; p < kPartitions; ++p) produced += kafka_.EndOffset(p);
          return produced == int64_t{kAccepted};
        },
        30s));
    node.Kill(SIGKILL);
  }
  NodeProcess node(kafka_, dir, dir_.Sub("second.log"));
  ASSERT_TRUE(WaitFor([&] { return node.ReadyWithAllPartitions(); }, 90s)) << node.Log();
  node.Kill(SIGTERM);
  testing::RunResult tenants = testing::RunProgram({LIMITSCTL, "--db", dir + "/db", "--json", "tenants"});
  EXPECT_THAT(tenants.out, ::testing::HasSubstr("\"total_streams\": 200")) << tenants.out;
}

// A request's refresh of a known stream is not written by the periodic flush (its row follows
// when the stream is next produced), but the revocation of a graceful stop writes it.
TEST_F(NodeTest, ARefreshReachesDiskAtAGracefulStop) {
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  const std::vector<StreamUpdate> stream = {{.stream_hash = HashIn(0, 7), .bytes = 1, .policy = ""}};
  std::vector<Rejection> rejected;
  ASSERT_TRUE(node->checker().ExceedsLimits("t", stream, &rejected).ok());  // new: written
  const std::string db = dir_.Sub("a") + "/db";
  auto last_seen_on_disk = [&] {
    testing::RunResult r = testing::RunProgram({LIMITSCTL, "--db", db, "--json", "streams", "--tenant", "t"});
    const size_t at = r.out.find("\"last_seen_s\": ");
    return at == std::string::npos ? int64_t{0} : std::stoll(r.out.substr(at + 15));
  };
  ASSERT_TRUE(WaitFor([&] { return last_seen_on_disk() > 0; }, 30s));
  const int64_t first = last_seen_on_disk();
  ASSERT_TRUE(WaitFor([&] { return NowMs() / 1000 >= first + 2; }, 10s));  // a later second
  ASSERT_TRUE(node->checker().ExceedsLimits("t", stream, &rejected).ok());  // known: a refresh
  ASSERT_TRUE(rejected.empty());
  const int64_t refreshed = NowMs() / 1000;
  // Two flush intervals later the row still has the first second...
  const uint64_t flushes = node->consumer().stats().flushes.load();
  ASSERT_TRUE(WaitFor([&] { return node->consumer().stats().flushes.load() >= flushes + 2; }, 10s));
  EXPECT_EQ(last_seen_on_disk(), first);
  // ...and the stop's revocation writes the refresh.
  node->Stop();
  EXPECT_GE(last_seen_on_disk(), refreshed - 1);
  EXPECT_GT(last_seen_on_disk(), first);
}

// 3. Two nodes in one group split the partitions; when one leaves, the other takes them and
// ends with the counts a single node would have.
TEST_F(NodeTest, TwoNodesSplitPartitionsAndHandOverOnStop) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 80; ++i) kafka_.Produce(i % 2 ? "t1" : "t2", i, now - 1000);
  kafka_.Flush();
  auto a = Start("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions); }, 60s));
  auto b = Start("b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor(
      [&] {
        auto pa = ReadyPartitions(*a), pb = ReadyPartitions(*b);
        if (pa.empty() || pb.empty() || pa.size() + pb.size() != kPartitions) return false;
        for (int32_t p : pb) {
          if (pa.count(p)) return false;
        }
        return AssignedPartitions(*a) == pa && AssignedPartitions(*b) == pb;
      },
      90s));
  // Each node holds the streams of its own partitions, B by replaying them.
  PartitionSet of_b;
  for (int32_t p : ReadyPartitions(*b)) of_b.Add(p);
  EXPECT_EQ(Streams(*b, "t1", of_b) + Streams(*b, "t2", of_b), 20u * of_b.Count());
  // More records while the partitions are split.
  for (uint64_t i = 80; i < 120; ++i) kafka_.Produce(i % 2 ? "t1" : "t2", i, now);
  kafka_.Flush();
  b->Stop();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t1", all_) == 60; }, 90s));
  EXPECT_EQ(Streams(*a, "t1", all_), 60u);
  EXPECT_EQ(Streams(*a, "t2", all_), 60u);
}

// 4. Two zones: a stream accepted in zone A is visible in zone B; each node discards its
// own records instead of applying them twice.
TEST_F(NodeTest, StreamsAcceptedInOneZoneReachTheOther) {
  auto a = Start("a", "zone-a");
  auto b = Start("b", "zone-b");
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && AllReady(*b, kPartitions); }, 60s));
  std::vector<StreamUpdate> streams;
  for (uint64_t h = 0; h < 8; ++h) streams.push_back({.stream_hash = h, .bytes = 500, .policy = ""});
  UpdateCondResult out;
  const std::shared_ptr<const PartitionSet> serving = a->partitions().Serving();
  Admission quota(TenantLimits{}, serving->Count(), static_cast<uint32_t>(kPartitions));
  ASSERT_TRUE(a->store().UpdateCond("t", streams, quota, *serving, &out).ok());
  ASSERT_EQ(out.to_produce.size(), 8u);
  for (uint32_t i : out.to_produce) a->producer().Produce("t", streams[i].stream_hash, streams[i].bytes, "");
  ASSERT_TRUE(WaitFor([&] { return Streams(*b, "t", all_) == 8; }, 30s));
  ASSERT_TRUE(WaitFor([&] { return a->consumer().stats().discarded.load() == 8; }, 30s));
  EXPECT_EQ(b->consumer().stats().discarded.load(), 0u);
  // B counts the bytes its records carry; A, whose UpdateCond counts none, skipped its own
  // records rather than applying them a second time.
  EXPECT_EQ(a->store().UsageOf("t", all_).rate_window_bytes, 0u);
  EXPECT_EQ(b->store().UsageOf("t", all_).rate_window_bytes, 8u * 500);
}

// 5. Same-zone handoff: records the previous owner (same zone, other instance) produced after
// this node's end-offset snapshot are applied; its own are discarded; records without the
// instance header fall back to the zone. Item 2: records of this instance's *previous run*
// (same pod name, another process) are applied too — only this very process's are skipped.
TEST_F(NodeTest, Item2_OnlyThisProcesssOwnRecordsAreDiscarded) {
  auto b = Start("node-b", "zone-a");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*b, kPartitions); }, 60s));
  ASSERT_EQ(b->run_tag().rfind("node-b/", 0), 0u) << b->run_tag();
  const int64_t now = NowMs();
  for (uint64_t h = 0; h < 4; ++h) kafka_.Produce("t", h, now, "zone-a", "node-a/1");    // late records of the old owner
  for (uint64_t h = 4; h < 8; ++h) kafka_.Produce("t", h, now, "zone-a", b->run_tag());  // its own
  for (uint64_t h = 8; h < 12; ++h) kafka_.Produce("t", h, now, "zone-a");               // no header: by zone
  for (uint64_t h = 12; h < 16; ++h) kafka_.Produce("t", h, now, "zone-c");              // another zone
  for (uint64_t h = 16; h < 20; ++h) kafka_.Produce("t", h, now, "zone-a", "node-b/0123456789abcdef");  // its previous run
  for (uint64_t h = 20; h < 24; ++h) kafka_.Produce("t", h, now, "zone-a", "node-b");    // an older version's header
  kafka_.Flush();
  ASSERT_TRUE(WaitFor([&] { return b->consumer().stats().fetched.load() == 24; }, 30s));
  ASSERT_TRUE(WaitFor([&] { return Streams(*b, "t", all_) == 16; }, 10s));
  EXPECT_EQ(b->consumer().stats().discarded.load(), 8u);
  for (uint64_t h : {0u, 3u, 12u, 15u, 16u, 19u, 20u, 23u}) {
    EXPECT_EQ(b->store().ActiveStreams(static_cast<int32_t>(h % kPartitions), "t", ""), 4u);
  }
}

// 6a. Revoked and re-assigned inside the retention: nothing is dropped, and only the delta
// is replayed.
TEST_F(NodeTest, ReassignmentInsideTheRetentionReplaysOnlyTheDelta) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  auto a = Start("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions); }, 60s));
  auto b = Start("b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return !ReadyPartitions(*b).empty() && AssignedPartitions(*a).size() < kPartitions; }, 90s));
  const std::set<int32_t> kept = AssignedPartitions(*a);
  const size_t moved = kPartitions - kept.size();
  EXPECT_EQ(a->store().Partitions().size(), size_t{kPartitions});  // revoked data kept
  for (uint64_t i = 40; i < 60; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  b->Stop();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t", all_) == 60; }, 90s));
  // 40 at first, the 20 new ones once each: the moved partitions resumed at their checkpoint.
  EXPECT_EQ(a->consumer().stats().fetched.load(), 60u) << moved << " partitions moved";
  for (const PartitionInfo& info : a->partitions().Snapshot()) {
    if (kept.count(info.partition)) continue;
    EXPECT_EQ(info.replay.start_offset, 10) << "partition " << info.partition;  // its checkpoint, not 0
    EXPECT_EQ(info.replay.target_offset, 14) << "partition " << info.partition;
  }
}

// 6b. Outside the retention the revoked partitions' data is dropped, and a re-assignment
// replays the window.
TEST_F(NodeTest, ReassignmentAfterTheRetentionReplaysTheWindow) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  auto retention = [](config::Config& c) { c.windows.revoked_retention = 1s; };
  auto a = Start("a", "zone-a", retention);
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions); }, 60s));
  auto b = Start("b", "zone-a", retention);
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return !ReadyPartitions(*b).empty() && AssignedPartitions(*a).size() < kPartitions; }, 90s));
  const std::set<int32_t> kept = AssignedPartitions(*a);
  std::set<int32_t> moved;
  for (int32_t p = 0; p < kPartitions; ++p) {
    if (!kept.count(p)) moved.insert(p);
  }
  // The moved partitions' column families go once the retention has passed. (The mock's
  // rebalance may also report A's whole assignment lost for a few seconds, longer than this
  // retention: then every partition is dropped and replayed, which is the rule too.)
  ASSERT_TRUE(WaitFor(
      [&] {
        for (int32_t p : a->store().Partitions()) {
          if (moved.count(p)) return false;
        }
        return true;
      },
      30s));
  b->Stop();
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions) && Streams(*a, "t", all_) == 40; }, 90s));
  EXPECT_EQ(a->store().Partitions().size(), size_t{kPartitions});
  // Re-assigned without data, each moved partition replayed its whole window (offsets 0-9),
  // not from the checkpoint it once had (10).
  for (int32_t p : moved) {
    std::optional<PartitionInfo> info = a->partitions().Get(p);
    ASSERT_TRUE(info.has_value());
    EXPECT_EQ(info->replay.start_offset, 0) << "partition " << p;
    EXPECT_EQ(info->replay.target_offset, 9) << "partition " << p;
  }
}

// 7. Item 1: failed offset look-ups never serve a partition without its data. Two injected
// ListOffsets errors at start-up: the look-ups retry, and a tenant at 900 of its 1000
// streams is admitted exactly 100 of 300 new ones.
TEST_F(NodeTest, Item1_FailedLookupsNeverServeAPartitionWithoutItsData) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 900; ++i) kafka_.Produce("t", i, now - 1000);
  kafka_.Flush();
  std::vector<rd_kafka_resp_err_t> errors(2, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION);
  rd_kafka_mock_push_request_errors_array(kafka_.mock(), 2, errors.size(), errors.data());  // ApiKey 2: ListOffsets
  auto node = Start("a", "zone-a", [](config::Config& c) {
    c.limits.defaults.max_global_streams_per_user = 1000;
    c.limits.defaults.ingestion_rate_mb = 0;  // not rate limited
  });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  for (const PartitionInfo& info : node->partitions().Snapshot()) EXPECT_FALSE(info.lookup_failed) << info.partition;
  EXPECT_EQ(Streams(*node, "t", all_), 900u);
  std::vector<StreamUpdate> fresh;
  for (uint64_t i = 0; i < 300; ++i) fresh.push_back({.stream_hash = 10'000 + i, .bytes = 10, .policy = ""});
  std::vector<Rejection> rejected;
  ASSERT_TRUE(node->checker().ExceedsLimits("t", fresh, &rejected).ok());
  EXPECT_EQ(rejected.size(), 200u);  // 100 of 300 admitted
  EXPECT_EQ(Streams(*node, "t", all_), 1000u);
}

// Item 1: look-ups that never answer keep partitions unserved (reason 1) until
// windows.lookup_give_up; then they are served, replaying in the background, and counted.
TEST_F(NodeTest, Item1_OnlyTheGiveUpServesAPartitionWhoseOffsetsAreUnknown) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 8; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  std::vector<rd_kafka_resp_err_t> errors(5000, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  rd_kafka_mock_push_request_errors_array(kafka_.mock(), 2, errors.size(), errors.data());
  auto node = Start("a", "zone-a", [](config::Config& c) { c.windows.lookup_give_up = 8s; });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AssignedPartitions(*node).size() == kPartitions; }, 30s));
  EXPECT_TRUE(ReadyPartitions(*node).empty());
  EXPECT_EQ(HttpGet(node->http_port(), "/ready").status, 503);
  EXPECT_EQ(HttpGet(node->http_port(), "/live").status, 200);
  std::vector<Rejection> rejected;
  ASSERT_TRUE(node->checker().ExceedsLimits("t", std::vector<StreamUpdate>{{.stream_hash = 1, .bytes = 0, .policy = ""}}, &rejected).ok());
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].reason, kReasonFailed);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  for (const PartitionInfo& info : node->partitions().Snapshot()) EXPECT_TRUE(info.lookup_failed);
  EXPECT_EQ(node->lifecycler().stats().give_ups.load(), uint64_t{kPartitions});
  EXPECT_NE(HttpGet(node->http_port(), "/metrics").body.find("limitsd_lookup_give_ups_total 4"), std::string::npos);
  rd_kafka_mock_clear_request_errors(kafka_.mock(), 2);
  // Replay of what is there still happens: all 8 records, from the beginning.
  ASSERT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 8; }, 60s));
}

// Item 1 with a slow leader instead of errors: partition 0's leader answers after 1.5 s,
// longer than a look-up's first timeout (1 s here; 5 s by default). The other partitions do not wait for it; partition 0
// is not served (reason 1) until its retried look-up answered and its replay finished; then
// the tenant at 900 of 1000 streams is admitted exactly 100 of 300 new ones.
TEST_F(NodeTest, Item1_ASlowLeaderKeepsOnlyItsPartitionUnservedUntilItsDataIsIn) {
  const int64_t now = NowMs();
  rd_kafka_mock_coordinator_set(kafka_.mock(), "group", "limitsd-zone-a", 1);
  for (int32_t p = 0; p < kPartitions; ++p) {
    rd_kafka_mock_partition_set_leader(kafka_.mock(), testing::kTopic, p, p == 0 ? 2 : 1);
  }
  for (uint64_t i = 0; i < 900; ++i) kafka_.Produce("t", i, now - 1000);
  kafka_.Flush();
  rd_kafka_mock_broker_set_rtt(kafka_.mock(), 2, 1500);
  const auto started = std::chrono::steady_clock::now();
  auto node = Start("a", "zone-a", [](config::Config& c) {
    c.limits.defaults.max_global_streams_per_user = 1000;
    c.limits.defaults.ingestion_rate_mb = 0;  // not rate limited
  }, NodeOptions{.lookup_timeout = 1s});
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return ReadyPartitions(*node) == std::set<int32_t>{1, 2, 3}; }, 60s));
  const double others_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::vector<Rejection> rejected;
  ASSERT_TRUE(node->checker().ExceedsLimits(
      "t", std::vector<StreamUpdate>{{.stream_hash = HashIn(0, 5000), .bytes = 1, .policy = ""}}, &rejected).ok());
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].reason, kReasonFailed);  // partition 0: not served yet
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 90s));
  const double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  rd_kafka_mock_broker_set_rtt(kafka_.mock(), 2, 0);
  std::optional<PartitionInfo> slow = node->partitions().Get(0);
  ASSERT_TRUE(slow.has_value());
  EXPECT_FALSE(slow->lookup_failed);
  EXPECT_EQ(Streams(*node, "t", all_), 900u);
  std::vector<StreamUpdate> fresh;
  for (uint64_t i = 0; i < 300; ++i) fresh.push_back({.stream_hash = 10'000 + i, .bytes = 10, .policy = ""});
  rejected.clear();
  ASSERT_TRUE(node->checker().ExceedsLimits("t", fresh, &rejected).ok());
  EXPECT_EQ(rejected.size(), 200u);  // 100 of 300 admitted
  std::printf("slow leader (1.5 s RTT, 1 s first timeout): partitions 1-3 ready after %.1f s, partition 0 after %.1f s with its data; "
              "%zu of 300 new streams admitted at 900/1000\n",
              others_s, all_s, 300 - rejected.size());
}

// Item 10: a transaction's commit marker at the end of a partition takes the offset end - 1,
// but no record is ever delivered at it: the replay completes when the position reaches the
// end (the end-of-log event), not when a record at end - 1 arrives.
TEST_F(NodeTest, Item10_AControlRecordAtTheEndDoesNotKeepAPartitionReplaying) {
  const int64_t now = NowMs();
  const std::string leader = kafka_.bootstrap().substr(0, kafka_.bootstrap().find(','));  // broker 1
  for (int32_t p = 0; p < kPartitions; ++p) rd_kafka_mock_partition_set_leader(kafka_.mock(), testing::kTopic, p, 1);
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now - 1000);
  kafka_.Flush();
  for (int32_t p = 0; p < kPartitions; ++p) {
    Status s = testing::ProduceControlRecord(leader, testing::kTopic, p, /*commit=*/true, now);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  ASSERT_EQ(kafka_.EndOffset(0), 11);
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(Streams(*node, "t", all_), 40u);
  for (const PartitionInfo& info : node->partitions().Snapshot()) {
    EXPECT_EQ(info.end_offset, 11) << info.partition;
    EXPECT_FALSE(info.lookup_failed);
  }
}

// Item 12: limitsctl verify passes on every state a healthy node produces: fresh (nothing
// produced yet), after a replay, after a revocation, live beside the node and stopped.
TEST_F(NodeTest, Item12_VerifyPassesOnEveryStateOfAHealthyNode) {
  auto verify = [&](const std::string& name, const std::string& when) {
    testing::RunResult r = testing::RunProgram({LIMITSCTL, "--db", dir_.Sub(name) + "/db", "verify"});
    EXPECT_EQ(r.exit_code, 0) << when << ": " << r.out << r.err;
  };
  auto a = Start("a");
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions); }, 60s));
  verify("a", "fresh, live");
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  ASSERT_TRUE(WaitFor([&] { return Streams(*a, "t", all_) == 40; }, 30s));
  auto b = Start("b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return !ReadyPartitions(*b).empty() && AssignedPartitions(*a).size() < kPartitions; }, 90s));
  verify("a", "after a revocation, live");
  verify("b", "after a replay, live");
  b->Stop();
  a->Stop();
  verify("a", "stopped");
  verify("b", "stopped");
}

// Item 5: a record on a partition other than its hash's is counted as misrouted and not
// applied, so no stream is counted twice (once where it arrived, once where ExceedsLimits looks).
TEST_F(NodeTest, Item5_RecordsOnTheWrongPartitionAreCountedNotApplied) {
  const int64_t now = NowMs();
  kafka_.Produce("t", HashIn(1, 7), now);                                            // where it belongs
  kafka_.ProduceRaw(2, kafka::EncodeRecordValue("zone-x", "t", HashIn(1, 7), 100, ""), now);  // misrouted copy
  kafka_.ProduceRaw(3, kafka::EncodeRecordValue("zone-x", "t", HashIn(1, 8), 100, ""), now);  // misrouted only
  kafka_.Flush();
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  ASSERT_TRUE(WaitFor([&] { return node->consumer().stats().misrouted.load() == 2; }, 10s));
  EXPECT_EQ(Streams(*node, "t", all_), 1u);
  EXPECT_EQ(Streams(*node, "t", PartitionSet{1}), 1u);
  EXPECT_NE(HttpGet(node->http_port(), "/metrics").body.find("limitsd_records_misrouted_total 2"), std::string::npos);
}

// Issue 10 item 3: readiness is latched after the first ready, as Loki's: partitions handed
// back while the node replays them leave /ready at 200, and limitsd_partitions_not_ready
// tells the truth.
TEST_F(NodeTest, ReadinessIsLatchedAfterTheFirstReadyAndTheGaugeKeepsTheTruth) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("t", i, now);
  kafka_.Flush();
  // Consumed records wait 3 s before they are applied: a replay is observable.
  auto a = Start("a", "zone-a", nullptr, NodeOptions{.apply_interval = 3s});
  ASSERT_TRUE(a);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*a, kPartitions); }, 60s));
  auto b = Start("b");
  ASSERT_TRUE(b);
  ASSERT_TRUE(WaitFor([&] { return AssignedPartitions(*a).size() < kPartitions && !ReadyPartitions(*b).empty(); }, 90s));
  for (uint64_t i = 40; i < 80; ++i) kafka_.Produce("t", i, now);  // what a replays when they come back
  kafka_.Flush();
  b->Stop();
  bool latched = false, gauge = false;
  ASSERT_TRUE(WaitFor(
      [&] {
        const testing::HttpResult r = HttpGet(a->http_port(), "/ready");
        if (r.status != 200) return true;  // fails the check below
        if (r.body.find("latched") == std::string::npos) return false;
        latched = true;
        gauge = HttpGet(a->http_port(), "/metrics").body.find("limitsd_partitions_not_ready 0") == std::string::npos;
        return true;
      },
      90s));
  EXPECT_TRUE(latched);
  EXPECT_TRUE(gauge);
  EXPECT_EQ(HttpGet(a->http_port(), "/ready").status, 200);
}

// Issue 13 item 6: a start logs a summary per rebalance, not lines per partition: with 64
// partitions replaying, the info lines from start to ready are a handful, and the replay's
// progress is one line for all partitions (each partition's at debug).
TEST(QuietStartTest, OneSummaryPerRebalanceNotLinesPerPartition) {
  TempDir dir;
  TestKafka kafka(64);
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 640; ++i) kafka.Produce("t", i, now);
  kafka.Flush();
  std::mutex mu;
  std::vector<std::string> lines;
  log::SetSinkForTest([&](std::string_view line) {
    std::lock_guard lock(mu);
    lines.emplace_back(line);
  });
  {
    // Records wait 2 s before they are applied, so the replay outlasts a few progress lines.
    Result<std::unique_ptr<Node>> node =
        Node::Start(kafka.NodeConfig(dir.Sub("n"), "zone-a", "n"), Clock::System(),
                    NodeOptions{.apply_interval = 2s, .progress_interval = 300ms});
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    ASSERT_TRUE(WaitFor([&] { return AllReady(**node, 64); }, 90s));
    (*node)->Stop();
  }
  log::SetSinkForTest(nullptr);
  size_t info = 0, planned = 0, progress = 0;
  for (const std::string& l : lines) {
    if (l.find("\"level\":\"info\"") == std::string::npos) continue;
    ++info;
    if (l.find("\"msg\":\"assignment planned\"") != std::string::npos) ++planned;
    if (l.find("\"msg\":\"replaying\"") != std::string::npos) {
      ++progress;
      EXPECT_THAT(l, ::testing::HasSubstr("\"partitions\":")) << l;
      EXPECT_THAT(l, ::testing::Not(::testing::HasSubstr("\"partition\":"))) << l;
    }
  }
  EXPECT_EQ(planned, 1u);
  EXPECT_GE(progress, 1u);
  // Start, stop and one rebalance: about a dozen lines plus the progress lines, however many
  // partitions (the old per-partition progress alone was 64 lines per interval).
  EXPECT_LE(info - progress, 25u);
  std::printf("issue 13 item 6: %zu info lines from start to stop with 64 partitions (%zu of them progress)\n", info,
              progress);
}

// Issue 24 item 6: kafka.topic changed, the same store. The checkpoints are offsets in the old
// topic and the rows its streams: both are dropped at start (the database records its topic)
// and the new topic's window is replayed — not resumed at the old topic's offsets.
TEST_F(NodeTest, ChangingTheTopicDropsThePreviousTopicsDataAndReplaysTheNewOne) {
  const int64_t now = NowMs();
  for (uint64_t i = 0; i < 40; ++i) kafka_.Produce("on-a", i, now);  // offsets 0-9 of each partition
  kafka_.Flush();
  {
    auto node = Start("a");
    ASSERT_TRUE(node);
    ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "on-a", all_) == 40; }, 60s));
    node->Stop();
  }
  ASSERT_EQ(rd_kafka_mock_topic_create(kafka_.mock(), "other-topic", kPartitions, 1), RD_KAFKA_RESP_ERR_NO_ERROR);
  TestKafka other(kafka_.bootstrap(), "other-topic", kPartitions);
  for (uint64_t i = 0; i < 80; ++i) other.Produce("on-b", i, now);  // offsets 0-19 of each partition
  other.Flush();
  auto node = Start("a", "zone-a", [](config::Config& c) { c.kafka.topic = "other-topic"; });
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "on-b", all_) == 80; }, 60s));
  EXPECT_EQ(Streams(*node, "on-a", all_), 0u);
  EXPECT_EQ(node->consumer().stats().fetched.load(), 80u);  // from offset 0, not the old checkpoints' 10
  for (const PartitionInfo& info : node->partitions().Snapshot()) EXPECT_EQ(info.replay.start_offset, 0) << info.partition;
  node->Stop();
  // Back on the first topic: its data was dropped too (the database holds one topic's).
  node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions) && Streams(*node, "on-a", all_) == 40; }, 60s));
  EXPECT_EQ(Streams(*node, "on-b", all_), 0u);
}

// 8. A corrupt record is counted, skipped, and consumption continues past it.
TEST_F(NodeTest, CorruptRecordsAreCountedAndSkipped) {
  const int64_t now = NowMs();
  kafka_.Produce("t", HashIn(0, 1), now);
  kafka_.ProduceRaw(0, "\xff\xfe not a protobuf", now);
  kafka_.ProduceRaw(0, "", now);
  kafka_.Produce("t", HashIn(0, 2), now);
  kafka_.Flush();
  auto node = Start("a");
  ASSERT_TRUE(node);
  ASSERT_TRUE(WaitFor([&] { return AllReady(*node, kPartitions); }, 60s));
  EXPECT_EQ(node->consumer().stats().invalid.load(), 2u);
  EXPECT_EQ(Streams(*node, "t", all_), 2u);
  ASSERT_TRUE(WaitFor([&] { return node->store().CheckpointOf(0) && node->store().CheckpointOf(0)->next_offset == 4; }, 10s));
  kafka_.Produce("t", HashIn(0, 3), now);
  kafka_.Flush();
  ASSERT_TRUE(WaitFor([&] { return Streams(*node, "t", all_) == 3; }, 30s));
}

}  // namespace
}  // namespace limits
