// KafkaOffsetSource against the mock cluster, whose ListOffsets-by-time always answers -1:
// bounds and probes must be exact, and the look-up built on them must find the window start
// exactly without trusting that -1.
#include "kafka/kafka_offset_source.h"

#include <gtest/gtest.h>

#include <thread>

#include "limits/lifecycle/assignment_lookup.h"
#include "testing/test_kafka.h"

namespace limits {
namespace {

using namespace std::chrono_literals;

constexpr int64_t kBase = 1'700'000'000'000;

class OffsetSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto source = kafka::KafkaOffsetSource::Create(
        {.brokers = kafka_.bootstrap(), .topic = testing::kTopic, .client_id = "test", .properties = {}});
    ASSERT_TRUE(source.ok()) << source.status().ToString();
    source_ = std::move(*source);
  }

  // The look-up of a fresh partition with the window starting at `cutoff_ms`.
  LookupResult Lookup(int32_t p, int64_t cutoff_ms) {
    AssignmentLookup::Input input;
    input.partition = p;
    input.cutoff_ms = cutoff_ms;
    input.started_ms = kBase;
    AssignmentLookup lookup(input, {});
    for (int i = 0; i < 100 && lookup.Step(*source_, kBase).kind != AssignmentLookup::Next::kDone; ++i) {
    }
    return lookup.result();
  }

  testing::TestKafka kafka_{4};
  std::unique_ptr<kafka::KafkaOffsetSource> source_;
};

TEST_F(OffsetSourceTest, BoundsProbesAndTheMocksTimeIndex) {
  for (int64_t i = 0; i < 100; ++i) kafka_.Produce("t", 0, kBase + i * 1000);
  kafka_.Flush();
  Result<LogBounds> b = source_->Bounds(0, 5s);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->start, 0);
  EXPECT_EQ(b->end, 100);
  Result<Probe> mid = source_->ProbeAt(0, 42, 5s);
  ASSERT_TRUE(mid.ok()) << mid.status().ToString();
  EXPECT_EQ(mid->kind, Probe::Kind::kRecord);
  EXPECT_EQ(mid->offset, 42);
  EXPECT_EQ(mid->timestamp_ms, kBase + 42'000);
  // The fetch brought the records after 42 too; the probe must not keep them.
  EXPECT_EQ(source_->HeldRecords(0), 0u);
  Result<Probe> at_end = source_->ProbeAt(0, 100, 5s);
  ASSERT_TRUE(at_end.ok()) << at_end.status().ToString();
  EXPECT_EQ(at_end->kind, Probe::Kind::kNothing);
  // The mock answers "none" for every time: the look-up must not believe it.
  Result<std::optional<int64_t>> t = source_->OffsetForTime(0, kBase + 10'000, 5s);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
  Result<LogBounds> empty = source_->Bounds(3, 5s);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->end, 0);
}

TEST_F(OffsetSourceTest, FindsTheFirstRecordInsideTheWindowOnEveryPartitionConcurrently) {
  // Partition p holds 1000 records one second apart, starting p * 100 s after kBase.
  for (int32_t p = 0; p < 3; ++p) {
    for (int64_t i = 0; i < 1000; ++i) kafka_.Produce("t", uint64_t(i) * 4 + uint64_t(p), kBase + p * 100'000 + i * 1000);
  }
  kafka_.Flush();
  const int64_t cutoff = kBase + 400'500;  // between two records of each partition
  std::vector<LookupResult> results(4);
  std::vector<std::thread> threads;
  for (int32_t p = 0; p < 4; ++p) threads.emplace_back([&, p] { results[p] = Lookup(p, cutoff); });
  for (auto& t : threads) t.join();
  for (int32_t p = 0; p < 3; ++p) {
    EXPECT_EQ(results[p].end_offset, 1000);
    // Records at or after kBase + 400.5 s: i >= 401 - p * 100.
    EXPECT_EQ(results[p].resume_offset, 401 - p * 100) << "partition " << p << " " << results[p].last_error;
    EXPECT_EQ(results[p].source, ResumeSource::kSearch);
  }
  EXPECT_EQ(results[3].end_offset, 0);  // empty partition
  EXPECT_EQ(results[3].resume_offset, 0);
}

TEST_F(OffsetSourceTest, WindowEdgesAreExact) {
  for (int64_t i = 0; i < 10; ++i) kafka_.Produce("t", 0, kBase + i * 1000);
  kafka_.Flush();
  EXPECT_EQ(Lookup(0, kBase).resume_offset, 0);          // everything inside: one probe
  EXPECT_EQ(Lookup(0, kBase).source, ResumeSource::kLowProbe);
  EXPECT_EQ(Lookup(0, kBase + 9000).resume_offset, 9);   // only the newest
  EXPECT_EQ(Lookup(0, kBase + 9001).resume_offset, 10);  // nothing: the end
  EXPECT_EQ(Lookup(0, kBase + 9001).source, ResumeSource::kLogEnd);
  EXPECT_EQ(Lookup(0, kBase + 3000).resume_offset, 3);   // exactly on a record
}

TEST_F(OffsetSourceTest, BrokerErrorsFailTheCallAndClearAfterwards) {
  kafka_.Produce("t", 0, kBase);
  kafka_.Flush();
  std::vector<rd_kafka_resp_err_t> errors(20, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  rd_kafka_mock_push_request_errors_array(kafka_.mock(), 2, errors.size(), errors.data());
  Result<LogBounds> failed = source_->Bounds(0, 2s);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("authorization"), std::string::npos) << failed.status().ToString();
  rd_kafka_mock_clear_request_errors(kafka_.mock(), 2);
  EXPECT_TRUE(source_->Bounds(0, 5s).ok());
}

// Issue 8 item 1: with one of the two ListOffsets failing, the bounds are an error or exact,
// never one bound reported as both (librdkafka's query_watermark_offsets did that: a partition
// of 225 records looked empty and was served without them, about one start in four under load).
TEST_F(OffsetSourceTest, Item1_ABoundsCallWithAFailedListOffsetsIsAnErrorOrExact) {
  for (uint64_t i = 0; i < 30; ++i) kafka_.Produce("t", i * 4, kBase);  // partition 0 of 4
  kafka_.Flush();
  int failed = 0;
  for (int round = 0; round < 100; ++round) {
    const rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION;
    rd_kafka_mock_push_request_errors_array(kafka_.mock(), 2, 1, &error);  // ApiKey 2: ListOffsets
    Result<LogBounds> b = source_->Bounds(0, 5s);
    if (!b.ok()) {
      ++failed;
      continue;
    }
    ASSERT_EQ(b->start, 0) << "round " << round;
    ASSERT_EQ(b->end, 30) << "round " << round;
  }
  rd_kafka_mock_clear_request_errors(kafka_.mock(), 2);
  EXPECT_GT(failed, 0);  // the injected errors did reach the calls
}

TEST_F(OffsetSourceTest, AProbeOfAnUnreachablePartitionTimesOutAlone) {
  for (int32_t p = 0; p < 2; ++p) kafka_.Produce("t", static_cast<uint64_t>(p), kBase);
  kafka_.Flush();
  rd_kafka_mock_partition_set_leader(kafka_.mock(), testing::kTopic, 1, -1);  // no leader for partition 1
  Result<Probe> stuck = Status::Unavailable("not run");
  std::thread slow([&] { stuck = source_->ProbeAt(1, 0, 1500ms); });
  Result<Probe> fine = source_->ProbeAt(0, 0, 5s);
  slow.join();
  ASSERT_TRUE(fine.ok()) << fine.status().ToString();
  EXPECT_EQ(fine->kind, Probe::Kind::kRecord);
  EXPECT_FALSE(stuck.ok());
}

}  // namespace
}  // namespace limits
