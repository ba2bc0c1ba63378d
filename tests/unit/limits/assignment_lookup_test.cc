#include "limits/lifecycle/assignment_lookup.h"

#include <gtest/gtest.h>

#include <vector>

#include "testing/fake_log.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using testing::EvenLog;
using testing::FakeLog;

constexpr int64_t kNow = 1'700'000'000'000;
constexpr int64_t kCutoff = kNow - 3600'000;  // a one-hour window

AssignmentLookup::Input Input(int32_t p, std::optional<storage::Checkpoint> cp = std::nullopt, bool has_data = false) {
  return {.partition = p, .checkpoint = cp, .has_data = has_data, .cutoff_ms = kCutoff, .started_ms = kNow};
}

// Steps to completion, without waiting out retry delays; returns the steps taken.
int RunToEnd(AssignmentLookup& lookup, FakeLog& log, int64_t now_ms = kNow) {
  int steps = 0;
  while (lookup.Step(log, now_ms).kind != AssignmentLookup::Next::kDone) {
    if (++steps > 1000) break;
  }
  return steps + 1;
}

TEST(AssignmentLookupTest, WarmCheckpointInsideTheWindowResumesThereWithOnlyTheBounds) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 1000, kCutoff - 500'000, 1000);  // the window starts at offset 500
  AssignmentLookup lookup(Input(0, storage::Checkpoint{800, kCutoff + 299'000}, true), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 800);
  EXPECT_EQ(lookup.result().source, ResumeSource::kCheckpoint);
  EXPECT_EQ(lookup.result().end_offset, 1000);
  EXPECT_EQ(log.time_calls[0] + log.probes[0], 0);  // O(1): no search, no probe
  EXPECT_FALSE(lookup.result().drop_data);
}

TEST(AssignmentLookupTest, ACaughtUpCheckpointIsReadyAtOnce) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 100, kCutoff - 500'000, 1000);  // all older than the window
  AssignmentLookup lookup(Input(0, storage::Checkpoint{100, kCutoff - 400'000}, true), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 100);
  EXPECT_EQ(lookup.result().source, ResumeSource::kCaughtUp);
  EXPECT_EQ(log.probes[0], 0);
}

TEST(AssignmentLookupTest, ColdStartWithTheLogStartInsideTheWindowTakesOneProbe) {
  FakeLog log;
  log.logs[0] = EvenLog(40, 1000, kCutoff + 1000, 1000);
  AssignmentLookup lookup(Input(0), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 40);
  EXPECT_EQ(lookup.result().source, ResumeSource::kLowProbe);
  EXPECT_EQ(lookup.result().edge_probes, 1);
  EXPECT_EQ(lookup.result().search_probes, 0);
}

TEST(AssignmentLookupTest, ColdStartWithEverythingOlderTakesTwoProbes) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 1000, kCutoff - 2000'000, 1000);
  AssignmentLookup lookup(Input(0), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 1000);
  EXPECT_EQ(lookup.result().source, ResumeSource::kLogEnd);
  EXPECT_EQ(lookup.result().edge_probes, 2);
}

TEST(AssignmentLookupTest, AWindowStartingInsideTheLogIsFoundExactlyByBinarySearch) {
  for (int64_t first_inside : {1, 2, 3, 333, 998, 999}) {
    FakeLog log;
    // Record i is at kCutoff + (i - first_inside) * 1000 - 500: inside from first_inside on.
    log.logs[0] = EvenLog(0, 1000, kCutoff - first_inside * 1000 + 500, 1000);
    AssignmentLookup lookup(Input(0), {});
    RunToEnd(lookup, log);
    EXPECT_EQ(lookup.result().resume_offset, first_inside) << first_inside;
    EXPECT_EQ(lookup.result().source, ResumeSource::kSearch);
    EXPECT_LE(lookup.result().search_probes, 11);  // ceil(log2(1000)) + 1
  }
}

TEST(AssignmentLookupTest, GapsAndControlRecordsDoNotMisplaceTheWindowStart) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 200, kCutoff - 100'500, 1000);  // first inside: offset 101
  for (int64_t o = 90; o < 130; ++o) log.logs[0].ts[static_cast<size_t>(o)] = -1;  // no records 90..129
  AssignmentLookup lookup(Input(0), {});
  RunToEnd(lookup, log);
  // Resuming anywhere in [90, 130] reads offset 130 first, the first record inside.
  EXPECT_GE(lookup.result().resume_offset, 90);
  EXPECT_LE(lookup.result().resume_offset, 130);
}

TEST(AssignmentLookupTest, OnlyControlRecordsAtTheEndReplayFromTheLowerBound) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 100, kCutoff - 200'000, 1000);
  log.logs[0].ts.resize(103, -1);  // transaction markers after the last record
  AssignmentLookup lookup(Input(0, storage::Checkpoint{50, kCutoff - 150'000}, true), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().end_offset, 103);
  EXPECT_GE(lookup.result().resume_offset, 50);
  EXPECT_LE(lookup.result().resume_offset, 103);
}

TEST(AssignmentLookupTest, TheBrokersTimeIndexAnswersWithoutProbes) {
  FakeLog log;
  log.time_index = true;
  log.logs[0] = EvenLog(0, 1000, kCutoff - 250'500, 1000);
  AssignmentLookup lookup(Input(0), {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 251);
  EXPECT_EQ(lookup.result().source, ResumeSource::kTimeIndex);
  EXPECT_TRUE(lookup.time_index_answered());
  EXPECT_EQ(log.probes[0], 0);
}

TEST(AssignmentLookupTest, ATrustedTimeIndexNoneMeansNothingToReplay) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 10, kCutoff - 50'000, 1000);
  AssignmentLookup::Input in = Input(0);
  in.trust_time_index_none = true;
  AssignmentLookup lookup(in, {});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().resume_offset, 10);
  EXPECT_EQ(log.probes[0], 0);
}

TEST(AssignmentLookupTest, Item3_ACheckpointBeyondTheLogEndDropsTheDataAndFindsTheWindow) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 50, kCutoff + 1000, 1000);
  AssignmentLookup lookup(Input(0, storage::Checkpoint{900, kCutoff + 5000}, true), {});
  RunToEnd(lookup, log);
  EXPECT_TRUE(lookup.result().drop_data);
  EXPECT_EQ(lookup.result().drop_reason, "checkpoint beyond the log end");
  EXPECT_EQ(lookup.result().resume_offset, 0);
}

TEST(AssignmentLookupTest, DataWithoutACheckpointIsDropped) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 50, kCutoff + 1000, 1000);
  AssignmentLookup lookup(Input(0, std::nullopt, true), {});
  RunToEnd(lookup, log);
  EXPECT_TRUE(lookup.result().drop_data);
  EXPECT_EQ(lookup.result().resume_offset, 0);
}

TEST(AssignmentLookupTest, Item11_ACheckpointBelowTheLogStartKeepsTheRowsAndResumesAtTheStart) {
  FakeLog log;
  log.logs[0] = EvenLog(120, 80, kCutoff + 1000, 1000);  // retention deleted 100..119 unseen
  AssignmentLookup lookup(Input(0, storage::Checkpoint{100, kCutoff + 500}, true), {});
  RunToEnd(lookup, log);
  EXPECT_FALSE(lookup.result().drop_data);
  EXPECT_TRUE(lookup.result().checkpoint_below_start);
  EXPECT_EQ(lookup.result().resume_offset, 120);
}

TEST(AssignmentLookupTest, Item1_FailedBoundsAreRetriedWithGrowingBackoffUntilTheyAnswer) {
  FakeLog log;
  log.logs[0] = EvenLog(0, 100, kCutoff + 1000, 1000);
  log.fail_bounds[0] = 2;
  AssignmentLookup lookup(Input(0), {.backoff = 100ms, .max_backoff = 1s});
  AssignmentLookup::Next n = lookup.Step(log, kNow);
  ASSERT_EQ(n.kind, AssignmentLookup::Next::kRetryAfter);
  EXPECT_EQ(n.delay, 100ms);
  n = lookup.Step(log, kNow + 100);
  ASSERT_EQ(n.kind, AssignmentLookup::Next::kRetryAfter);
  EXPECT_EQ(n.delay, 200ms);
  RunToEnd(lookup, log, kNow + 300);
  EXPECT_EQ(lookup.result().source, ResumeSource::kLowProbe);  // a real plan, not a give-up
  EXPECT_EQ(lookup.result().resume_offset, 0);
  EXPECT_EQ(lookup.result().retries, 2);
}

TEST(AssignmentLookupTest, Item1_BoundsThatNeverAnswerGiveUpOnlyAfterTheDeadline) {
  FakeLog log;
  log.fail_bounds[0] = -1;
  AssignmentLookup lookup(Input(0, storage::Checkpoint{70, kCutoff}, true), {.give_up = 120s});
  EXPECT_EQ(lookup.Step(log, kNow + 119'999).kind, AssignmentLookup::Next::kRetryAfter);
  EXPECT_EQ(lookup.Step(log, kNow + 120'000).kind, AssignmentLookup::Next::kDone);
  EXPECT_EQ(lookup.result().source, ResumeSource::kGaveUp);
  EXPECT_EQ(lookup.result().resume_offset, 70);
  EXPECT_EQ(lookup.result().end_offset, -1);
  EXPECT_NE(lookup.result().last_error.find("injected"), std::string::npos);
}

TEST(AssignmentLookupTest, Item1_WhenOnlyTheWindowStartFailsItReplaysFromMaxOfCheckpointAndStart) {
  FakeLog log;
  log.logs[0] = EvenLog(10, 1000, kCutoff - 500'500, 1000);
  log.fail_probes[0] = -1;
  AssignmentLookup lookup(Input(0, storage::Checkpoint{300, kCutoff - 800'000}, true), {.window_attempts = 3});
  RunToEnd(lookup, log);
  EXPECT_EQ(lookup.result().source, ResumeSource::kFallback);
  EXPECT_EQ(lookup.result().resume_offset, 300);
  EXPECT_EQ(lookup.result().end_offset, 1010);
  EXPECT_EQ(log.probes[0], 3);
}

// A slow leader (answers after 6 s) fails each step's first 5 s attempt; the retry waits
// twice as long and gets the answer, instead of falling back to a longer replay.
TEST(AssignmentLookupTest, Item1_WindowStepTimeoutsGrowSoASlowLeaderAnswersTheRetry) {
  class SlowLeader final : public OffsetSource {
   public:
    Result<LogBounds> Bounds(int32_t, std::chrono::milliseconds t) override {
      if (t < 6s) return Status::Unavailable("timed out");
      return LogBounds{0, 100};
    }
    Result<std::optional<int64_t>> OffsetForTime(int32_t, int64_t, std::chrono::milliseconds t) override {
      time_timeouts.push_back(t);
      if (t < 6s) return Status::Unavailable("timed out");
      return std::optional<int64_t>();  // "none", as the mock answers
    }
    Result<Probe> ProbeAt(int32_t, int64_t at, std::chrono::milliseconds t) override {
      probe_timeouts.push_back(t);
      if (t < 6s) return Status::Unavailable("timed out");
      return Probe{.kind = Probe::Kind::kRecord, .offset = at, .timestamp_ms = kNow};
    }
    std::vector<std::chrono::milliseconds> time_timeouts, probe_timeouts;
  } source;
  AssignmentLookup lookup(Input(0), {.timeout = 5s, .probe_timeout = 5s});
  for (int i = 0; i < 20 && lookup.Step(source, kNow).kind != AssignmentLookup::Next::kDone; ++i) {
  }
  EXPECT_EQ(lookup.result().source, ResumeSource::kLowProbe);
  EXPECT_EQ(lookup.result().resume_offset, 0);
  EXPECT_EQ(source.time_timeouts, (std::vector<std::chrono::milliseconds>{5s, 10s}));
  EXPECT_EQ(source.probe_timeouts, (std::vector<std::chrono::milliseconds>{5s, 10s}));
}

TEST(AssignmentLookupTest, ImplausibleBoundsAreRetriedNotTrusted) {
  class Backwards final : public OffsetSource {
   public:
    Result<LogBounds> Bounds(int32_t, std::chrono::milliseconds) override { return LogBounds{50, 10}; }
    Result<std::optional<int64_t>> OffsetForTime(int32_t, int64_t, std::chrono::milliseconds) override {
      return std::optional<int64_t>();
    }
    Result<Probe> ProbeAt(int32_t, int64_t, std::chrono::milliseconds) override { return Probe{}; }
  } source;
  AssignmentLookup lookup(Input(0), {});
  EXPECT_EQ(lookup.Step(source, kNow).kind, AssignmentLookup::Next::kRetryAfter);
  EXPECT_NE(lookup.result().last_error.find("implausible"), std::string::npos);
}

}  // namespace
}  // namespace limits
