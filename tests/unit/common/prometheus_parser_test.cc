// The strict exposition-format parser the scrape test relies on must itself reject bad input.
#include "testing/prometheus_parser.h"

#include <gtest/gtest.h>

namespace limits::testing {
namespace {

TEST(PrometheusParserTest, AcceptsWellFormedFamilies) {
  const ParsedMetrics m = ParsePrometheusText(
      "# HELP a_total help text\n# TYPE a_total counter\na_total{tenant=\"x\\\"y\"} 3\n"
      "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 3.5\nh_count 2\n"
      "# TYPE g gauge\ng -1.5e3 1700000000000\n");
  EXPECT_TRUE(m.problems.empty()) << m.problems.front();
  EXPECT_EQ(m.Value("a_total", {{"tenant", "x\"y"}}), 3);
  EXPECT_EQ(m.Value("g"), -1500);
  EXPECT_EQ(m.types.at("h"), "histogram");
}

TEST(PrometheusParserTest, RejectsWhatPrometheusWouldReject) {
  for (const char* bad : {
           "a 1\n",                                                     // no TYPE
           "# TYPE a counter\na -1\n",                                  // negative counter
           "# TYPE a gauge\na{1x=\"v\"} 1\n",                           // bad label name
           "# TYPE a gauge\na{x=\"v} 1\n",                              // unterminated
           "# TYPE a gauge\na one\n",                                   // bad value
           "# TYPE a gauge\n# TYPE a gauge\na 1\n",                     // second TYPE
           "# TYPE a gauge\na 1\n# TYPE a gauge\n",                     // TYPE after samples
           "# TYPE a flavour\na 1\n",                                   // unknown type
           "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",          // no +Inf
           "# TYPE h histogram\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
           "# TYPE h histogram\nh_bucket{le=\"+Inf\"} 1\n",             // no _sum/_count
           "# TYPE a gauge\na{x=\"\\q\"} 1\n",                          // bad escape
       }) {
    EXPECT_FALSE(ParsePrometheusText(bad).problems.empty()) << bad;
  }
}

}  // namespace
}  // namespace limits::testing
