// limitsctl loadgen end to end: the binary against a node on the mock cluster. The produce
// load's records are read back from the topic (schema, key, partition, timestamps) and counted
// by the node; the ExceedsLimits load's figures are checked against the node's limit, exactly,
// by replaying the same deterministic requests. Then bad flags, a wrong topic, no node, Ctrl-C.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <librdkafka/rdkafkacpp.h>

#include <map>
#include <regex>
#include <sstream>

#include "kafka/record_codec.h"
#include "loadgen/stream_picker.h"
#include "loadgen/universe.h"
#include "node/node.h"
#include "proto/limits.pb.h"
#include "testing/node_partitions.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;
using testing::RunProgram;
using testing::RunResult;

constexpr int32_t kPartitions = 8;
constexpr uint64_t kLimit = 100;

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The number after the first "key": in a JSON line (our lines have no key twice per object).
uint64_t Num(const std::string& line, const std::string& key) {
  std::smatch m;
  if (!std::regex_search(line, m, std::regex("\"" + key + "\":([0-9]+)"))) {
    ADD_FAILURE() << "no " << key << " in " << line;
    return 0;
  }
  return std::stoull(m[1]);
}

int64_t WallMillis() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A node on the mock cluster. One test runs every check against it: a node's first group join
// on the mock takes ~5 s, and ctest runs each test in a process of its own.
class LoadgenNodeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config::Config c = kafka_.NodeConfig(dir_.Sub("node"), "zone-a", "node-a");
    c.limits.tenants["lim-0"].max_global_streams_per_user = kLimit;
    // The mock's first join waits session.timeout - 1 s: 3 s is the shortest it serves.
    c.kafka.properties["session.timeout.ms"] = "3000";
    auto node = Node::Start(c);
    ASSERT_TRUE(node.ok()) << node.status().ToString();
    node_ = std::move(*node);
    ASSERT_TRUE(testing::WaitFor([&] { return testing::AllReady(*node_, kPartitions); }, 60s));
  }
  void TearDown() override {
    if (node_) node_->Stop();
  }

  RunResult Loadgen(std::vector<std::string> args) const {
    args.insert(args.begin(), {LIMITSCTL, "--json", "loadgen"});
    return RunProgram(args);
  }
  std::string Grpc() const { return "127.0.0.1:" + std::to_string(node_->grpc_port()); }

  void CheckProduce();
  void CheckExceedsLimits();
  void CheckTextWithUpdateRates();

  testing::TempDir dir_;
  testing::TestKafka kafka_{kPartitions};
  std::unique_ptr<Node> node_;
};

// A record of the topic as the test looks at it.
struct ReadRecord {
  int32_t partition = -1;
  std::string key;
  int64_t timestamp_ms = 0;
  bool create_time = false;
  bool decoded = false;
  kafka::DecodedRecord value;
};

// Every record of the topic, from the start, until `want` are read (or 20 s pass), with
// librdkafka's simple consumer (no group). Copied out of its messages: a handle is not
// destroyed before its messages.
std::vector<ReadRecord> ReadTopic(const std::string& bootstrap, size_t want) {
  std::unique_ptr<RdKafka::Conf> conf(RdKafka::Conf::create(RdKafka::Conf::CONF_GLOBAL));
  std::string err;
  conf->set("bootstrap.servers", bootstrap, err);
  std::unique_ptr<RdKafka::Consumer> consumer(RdKafka::Consumer::create(conf.get(), err));
  std::unique_ptr<RdKafka::Topic> topic(RdKafka::Topic::create(consumer.get(), testing::kTopic, nullptr, err));
  std::unique_ptr<RdKafka::Queue> queue(RdKafka::Queue::create(consumer.get()));
  for (int32_t p = 0; p < kPartitions; ++p) {
    consumer->start(topic.get(), p, RdKafka::Topic::OFFSET_BEGINNING, queue.get());
  }
  std::vector<ReadRecord> out;
  testing::WaitFor(
      [&] {
        // Everything available now (WaitFor pauses between calls).
        while (out.size() < want) {
          std::unique_ptr<RdKafka::Message> m(consumer->consume(queue.get(), 100));
          if (m->err() != RdKafka::ERR_NO_ERROR) break;
          ReadRecord& r = out.emplace_back();
          r.partition = m->partition();
          if (m->key()) r.key = *m->key();
          r.timestamp_ms = m->timestamp().timestamp;
          r.create_time = m->timestamp().type == RdKafka::MessageTimestamp::MSG_TIMESTAMP_CREATE_TIME;
          r.decoded = kafka::DecodeRecord(*m, &r.value);
        }
        return out.size() >= want;
      },
      20s);
  for (int32_t p = 0; p < kPartitions; ++p) consumer->stop(topic.get(), p);
  return out;
}

// Loki-schema records, keyed by tenant, partitioned by stream hash, timestamps spread.
void LoadgenNodeTest::CheckProduce() {
  constexpr int64_t kSpreadMs = 600'000;
  const int64_t before = WallMillis();
  const RunResult r = Loadgen({"--brokers", kafka_.bootstrap(), "--tenants=3", "--tenant-prefix", "prod-",
                               "--streams", "40", "--policies", ",gold", "--bytes", "123", "--zone", "zone-lg",
                               "--produce-rate", "300", "--records", "600", "--spread", "10m", "--linger", "5ms"});
  const int64_t after = WallMillis();
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("producing to ingest-limits-metadata (8 partitions)"));
  const auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  const std::string& summary = lines.back();
  EXPECT_THAT(summary, HasSubstr(R"("ended_by":"records")"));
  EXPECT_EQ(Num(summary, "records"), 600u);
  EXPECT_EQ(Num(summary, "delivered"), 600u);
  EXPECT_EQ(Num(summary, "delivery_failed"), 0u);
  uint64_t per_second = 0;  // one line a second, adding up to the total
  for (size_t i = 0; i + 1 < lines.size(); ++i) per_second += Num(lines[i], "records");
  EXPECT_EQ(per_second, 600u);
  EXPECT_GE(lines.size(), 3u) << "600 records at 300/s take two seconds";

  // What the records must be: the universe loadgen walked.
  loadgen::UniverseOptions uo;
  uo.tenants = 3;
  uo.tenant_prefix = "prod-";
  uo.streams_per_tenant = 40;
  uo.policies = {"", "gold"};
  const loadgen::Universe universe(uo);
  std::map<uint64_t, std::pair<std::string, std::string>> want;  // hash -> tenant, policy
  for (uint32_t t = 0; t < 3; ++t) {
    for (uint64_t i = 0; i < 40; ++i) want[universe.StreamHash(t, i)] = {universe.Tenant(t), universe.Policy(i)};
  }
  const auto records = ReadTopic(kafka_.bootstrap(), 600);
  ASSERT_EQ(records.size(), 600u);
  std::map<int32_t, int64_t> last_ts;
  std::map<uint64_t, int> seen;
  for (const ReadRecord& m : records) {
    ASSERT_TRUE(m.decoded);
    const kafka::DecodedRecord& d = m.value;
    ASSERT_TRUE(want.count(d.stream_hash)) << d.stream_hash;
    EXPECT_EQ(d.tenant, want[d.stream_hash].first);
    EXPECT_EQ(d.policy, want[d.stream_hash].second);
    EXPECT_EQ(d.zone, "zone-lg");
    EXPECT_EQ(d.total_size, 123u);
    EXPECT_FALSE(d.instance) << "loadgen writes no instance header";
    EXPECT_EQ(m.key, d.tenant);
    EXPECT_EQ(m.partition, static_cast<int32_t>(d.stream_hash % kPartitions));
    const int64_t ts = m.timestamp_ms;
    EXPECT_TRUE(m.create_time);
    EXPECT_GE(ts, before - kSpreadMs);
    EXPECT_LE(ts, after);
    EXPECT_GE(ts, last_ts[m.partition]) << "timestamps rise along a partition";
    last_ts[m.partition] = ts;
    ++seen[d.stream_hash];
  }
  EXPECT_EQ(seen.size(), 120u);  // 3 tenants x 40 streams, 600 records: each stream 5 times
  for (const auto& [hash, n] : seen) EXPECT_EQ(n, 5);
  // Spread: the first records are about ten minutes old, the last about now.
  int64_t oldest = INT64_MAX;
  for (const ReadRecord& m : records) oldest = std::min(oldest, m.timestamp_ms);
  EXPECT_LT(oldest, before - kSpreadMs * 9 / 10);

  // The node applies them as another zone's records: every stream counted.
  ASSERT_TRUE(testing::WaitFor([&] { return node_->store().TotalStreams() == 120; }, 10s))
      << node_->store().TotalStreams();
}

// The node accepts the tenant's first kLimit streams and rejects every other with reason 2.
// With one caller the requests reach the node in the order loadgen builds them, so the same
// StreamPicker, replayed, says exactly how many of each there must be.
void LoadgenNodeTest::CheckExceedsLimits() {
  const RunResult r = Loadgen({"--grpc=" + Grpc(), "--tenant-prefix=lim-", "--streams=400", "--request-rate=40",
                               "--concurrency=1", "--duration=2s"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_THAT(r.err, HasSubstr("(8 ready partitions)"));
  const auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;  // two seconds, then the summary
  const std::string& summary = lines.back();
  EXPECT_THAT(summary, HasSubstr(R"("ended_by":"duration")"));
  const uint64_t requests = Num(summary, "requests");
  EXPECT_GE(requests, 60u);
  EXPECT_LE(requests, 81u);
  EXPECT_EQ(Num(summary, "errors"), 0u);

  loadgen::UniverseOptions uo;
  uo.tenant_prefix = "lim-";
  uo.streams_per_tenant = 400;
  const loadgen::Universe universe(uo);
  loadgen::StreamPicker picker(universe, 0.1, 100);
  uint64_t streams = 0, rejected = 0;
  loadgen::PickedRequest p;
  for (uint64_t i = 0; i < requests; ++i) {
    picker.NextRequest(&p);
    streams += p.streams.size();
    for (uint64_t s : p.streams) rejected += s >= kLimit;  // the first kLimit sent are the accepted ones
  }
  EXPECT_EQ(Num(summary, "streams"), streams);
  EXPECT_EQ(Num(summary, "accepted"), streams - rejected);
  EXPECT_EQ(Num(summary, "max_streams"), rejected);
  EXPECT_EQ(Num(summary, "failed"), 0u);
  EXPECT_EQ(Num(summary, "rate_limited"), 0u);
  EXPECT_GT(Num(lines[0], "max_streams"), 0u) << "rejections start in the first second";
  EXPECT_EQ(Num(lines[0], "max_streams") + Num(lines[1], "max_streams"), rejected);
  EXPECT_THAT(lines[0], HasSubstr(R"("latency_ms":{"p50":)"));
}

// The text table, with the UpdateRates columns.
void LoadgenNodeTest::CheckTextWithUpdateRates() {
  const RunResult r = RunProgram({LIMITSCTL, "loadgen", "--grpc", Grpc(), "--tenant-prefix", "upd-", "--duration", "1s",
                                  "--update-rate", "20"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 4u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("REQUESTS/S  ERRORS  STREAMS/S  ACCEPTED/S  REJECTED/S: 1_FAILED  2_MAX_STREAMS"));
  EXPECT_THAT(lines[0], HasSubstr("UPDATES/S"));
  EXPECT_EQ(lines[1].size(), lines[0].size());
  EXPECT_THAT(r.out, HasSubstr("summary: 1.0 s (ended by duration)"));
  // 20 due in the second; the 21st, due at its very end, may go out before the load stops.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("UpdateRates: +2[01] requests \\(2[01]/s\\), 0 errors"));
}

TEST_F(LoadgenNodeTest, ProducesRecordsAndDrivesExceedsLimits) {
  {
    SCOPED_TRACE("produce");
    CheckProduce();
  }
  {
    SCOPED_TRACE("ExceedsLimits");
    CheckExceedsLimits();
  }
  {
    SCOPED_TRACE("text output, UpdateRates");
    CheckTextWithUpdateRates();
  }
}

// The mock cluster alone: what fails before any load, and Ctrl-C.
class LoadgenKafkaTest : public ::testing::Test {
 protected:
  testing::TestKafka kafka_{kPartitions};
};

TEST_F(LoadgenKafkaTest, CtrlCEndsWithTheSummary) {
  // timeout(1) sends SIGINT as a terminal's Ctrl-C would, and passes the exit code on.
  const RunResult r = RunProgram({"/usr/bin/timeout", "--preserve-status", "-s", "INT", "1.5", LIMITSCTL, "--json",
                                  "loadgen", "--brokers", kafka_.bootstrap(), "--produce-rate", "1000"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto lines = Lines(r.out);
  ASSERT_GE(lines.size(), 2u) << r.out;
  EXPECT_THAT(lines.back(), HasSubstr(R"({"summary":true,)"));
  EXPECT_THAT(lines.back(), HasSubstr(R"("ended_by":"signal")"));
  const uint64_t records = Num(lines.back(), "records");
  EXPECT_GT(records, 500u);
  EXPECT_EQ(Num(lines.back(), "delivered"), records) << "flushed before the summary";
}

TEST_F(LoadgenKafkaTest, WrongTopicOrNoNodeFailsBeforeAnyLoad) {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), {LIMITSCTL, "loadgen"});
    return RunProgram(args);
  };
  RunResult r = run({"--brokers", kafka_.bootstrap(), "--partitions", "5", "--duration", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("topic \"ingest-limits-metadata\" has 8 partitions, not 5"));
  r = run({"--brokers", kafka_.bootstrap(), "--topic", "no-such-topic", "--duration", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("topic \"no-such-topic\" does not exist"));
  r = run({"--grpc", "127.0.0.1:1", "--timeout", "300ms", "--duration", "1s"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot connect to 127.0.0.1:1 within 300ms"));
}

TEST(LoadgenCliTest, BadFlagsExitTwoNamingTheFlag) {
  auto run = [](std::vector<std::string> args) {
    args.insert(args.begin(), LIMITSCTL);
    return RunProgram(args);
  };
  RunResult r = run({"loadgen", "--grpc=127.0.0.1:9", "--tenants=0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("limitsctl loadgen: --tenants: expected a whole number 1..1048576, got \"0\""));
  r = run({"loadgen", "--grpc", "127.0.0.1:9", "--new-fraction", "2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--new-fraction: expected a fraction 0..1"));
  r = run({"loadgen", "--streams", "10"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("nothing to do: give --brokers"));
  r = run({"loadgen", "--grpc", "127.0.0.1:9", "--frobnicate", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown option --frobnicate"));
  r = run({"loadgen", "--grpc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--grpc needs a value"));
  r = run({"loadgen", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.out, HasSubstr("--new-fraction F"));
  EXPECT_THAT(r.out, Not(HasSubstr("RocksDB secondary")));
  r = run({"--help"});
  EXPECT_THAT(r.out, HasSubstr("loadgen"));
}

}  // namespace
}  // namespace limits
