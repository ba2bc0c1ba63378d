// Feeds: any bytes as Loki's runtime-config YAML (the overrides file, a ConfigMap shared with
// Loki, re-read while the node runs) to config::ParseLokiOverrides.
// Checks: nothing crashes, leaks or escapes as an exception (yaml-cpp throws); a refusal is
// InvalidArgument with a message; every tenant parsed has a name.
// Inputs are capped at 1 KiB: yaml-cpp's parse time grows faster than the input, so at libFuzzer's
// default 4 KiB the run fell to ~550 inputs/s, where 1 KiB already holds every construct
// (anchors, flow and block nesting, multi-documents) the parser has.
// fuzz.sh options: -max_len=1024
#include <cstdint>
#include <string>

#include "config/loki_overrides.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto overrides = limits::config::ParseLokiOverrides(limits::fuzz::AsView(data, size), "runtime.yaml");
  if (!overrides.ok()) {
    FUZZ_CHECK(overrides.status().code() == limits::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!overrides.status().message().empty());
    return 0;
  }
  for (const auto& [tenant, limits] : *overrides) FUZZ_CHECK(!tenant.empty());
  return 0;
}
