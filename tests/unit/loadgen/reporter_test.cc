#include "loadgen/reporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

namespace limits::loadgen {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = Reporter::Clock;

// Captures what a Reporter prints.
class Capture {
 public:
  Capture() : f_(open_memstream(&buf_, &size_)) {}
  ~Capture() {
    std::fclose(f_);
    std::free(buf_);
  }
  FILE* file() { return f_; }
  std::vector<std::string> Lines() {
    std::fflush(f_);
    std::vector<std::string> out;
    std::istringstream in(std::string(buf_, size_));
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

 private:
  char* buf_ = nullptr;
  size_t size_ = 0;
  FILE* f_;
};

void Load(LoadCounters& c, uint64_t requests) {
  c.records_queued += 1000;
  c.records_delivered += 990;
  c.requests += requests;
  c.streams += requests * 100;
  c.rejected[2] += requests * 90;
  c.rejected[3] += 5;
  for (uint64_t i = 0; i < requests; ++i) c.exceeds_latency.Record(1000 + i);
}

TEST(ReporterTest, TextLinesAlignWithTheHeaderAndCountPerSecond) {
  LoadCounters c;
  Capture out;
  const Clock::time_point start = Clock::now();
  Reporter r(c, {.produce = true, .exceeds = true, .updates = true}, false, out.file(), start);
  r.Header();
  Load(c, 100);
  r.Line(start + 1s);
  Load(c, 50);
  r.Line(start + 1500ms);  // a half second: rates double the counts
  r.Summary(start + 1500ms, 3, "signal");
  const auto lines = out.Lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1].size(), lines[0].size()) << lines[0] << "\n" << lines[1];
  EXPECT_EQ(lines[2].size(), lines[0].size());
  std::istringstream first(lines[1]);
  std::vector<std::string> cells;
  for (std::string cell; first >> cell;) cells.push_back(cell);
  // TIME PRODUCED DELIVERED FAILED REQUESTS ERRORS STREAMS ACCEPTED R1 R2 R3 P50 P99 UPDATES U_ERR U_P99
  ASSERT_EQ(cells.size(), 16u) << lines[1];
  EXPECT_EQ(cells[0], "1s");
  EXPECT_EQ(cells[1], "1000");
  EXPECT_EQ(cells[2], "990");
  EXPECT_EQ(cells[4], "100");
  EXPECT_EQ(cells[6], "10000");
  EXPECT_EQ(cells[7], "995");  // 10000 - 9000 - 5
  EXPECT_EQ(cells[9], "9000");
  EXPECT_EQ(cells[10], "5");
  EXPECT_EQ(cells[11], "1.05");  // p50 of 1000..1099 µs, within a bucket
  EXPECT_THAT(lines[2], HasSubstr("1.5s"));
  EXPECT_THAT(lines[2], HasSubstr("  100  "));  // 50 requests in half a second
  const std::string summary = lines[3] + "\n" + lines[4] + "\n" + lines[5];
  EXPECT_THAT(summary, HasSubstr("summary: 1.5 s (ended by signal)"));
  EXPECT_THAT(summary, HasSubstr("2000 records (1333/s), delivered 1980, delivery failed 0, undelivered 3"));
  EXPECT_THAT(summary, HasSubstr("150 requests (100/s), 0 errors; 15000 streams (10000/s): accepted 1490, rejected: "
                                 "0 failed (1), 13500 max streams (2), 10 rate limited (1001)"));
}

TEST(ReporterTest, JsonLinesAndSummary) {
  LoadCounters c;
  Capture out;
  const Clock::time_point start = Clock::now();
  Reporter r(c, {.produce = false, .exceeds = true, .updates = false}, true, out.file(), start);
  r.Header();
  Load(c, 10);
  c.RecordError("ExceedsLimits UNAVAILABLE", "connection refused");
  c.request_errors += 1;
  r.Line(start + 1s);
  r.Summary(start + 1s, 0, "duration");
  const auto lines = out.Lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0],
            R"({"t_s":1,"interval_s":1,"exceeds_limits":{"requests":10,"errors":1,"streams":1000,"accepted":95,)"
            // p50: the 5th of 1000..1009 µs, 1004, is in the bucket [992, 1007].
            R"("rejected":{"failed":0,"max_streams":900,"rate_limited":5,"other":0},)"
            R"("latency_ms":{"p50":1.007,"p99":1.009,"max":1.009}}})");
  EXPECT_THAT(lines[1], HasSubstr(R"({"summary":true,"duration_s":1,"ended_by":"duration","exceeds_limits":)"));
  EXPECT_THAT(lines[1],
              HasSubstr(R"("errors":[{"kind":"ExceedsLimits UNAVAILABLE","count":1,"first":"connection refused"}])"));
}

}  // namespace
}  // namespace limits::loadgen
