// Report: prints scenario results side by side (one column per broker and start) with issue
// 9's target beside each figure, and whether it is met.
#pragma once

#include <vector>

#include "scenario.h"

namespace limits::bench {

void PrintReport(const ScenarioOptions& o, const std::vector<ScenarioResult>& results);
// The --memory run: RSS per stream after a warm restart at its stream count.
void PrintMemoryReport(const ScenarioOptions& o, const ScenarioResult& r);

}  // namespace limits::bench
