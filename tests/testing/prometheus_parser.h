// A strict parser of the Prometheus text exposition format (0.0.4), for tests: every line is
// a HELP, a TYPE or a sample; names and labels are well-formed; a family's TYPE precedes its
// samples and appears once; histograms have ordered buckets ending in +Inf with _sum and
// _count; values parse. Returns the problems found (none: valid) and the samples.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace limits::testing {

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct ParsedMetrics {
  std::vector<std::string> problems;
  std::vector<Sample> samples;
  std::map<std::string, std::string> types;  // family -> type

  // The value of the first sample with this name and these labels (a subset); NaN when none.
  double Value(const std::string& name, const std::map<std::string, std::string>& labels = {}) const;
};

ParsedMetrics ParsePrometheusText(const std::string& text);

}  // namespace limits::testing
