// Feeds: any bytes as the TOML configuration file (config::ParseConfig, what LoadConfig does
// with the file's text) and, when they mention "tenants", as the TOML overrides file
// (config::ParseOverrides, also re-read while the node runs): toml11's parser runs at ~500
// inputs/s instrumented, so each input is parsed once where a second parse could matter.
// Checks: nothing crashes, leaks or escapes as an exception (toml11 throws; the loader must
// turn everything into a Status); a refusal is InvalidArgument with a message.
// Found here: Debian's toml11 3.7.1 reads out of bounds when a literal string ('...') holds
// invalid UTF-8; the loader now refuses text that is not UTF-8 before toml11 sees it, and the
// crashing input is in the corpus (crash-literal-string-invalid-utf8).
// fuzz.sh options: -max_len=1024
#include <cstdint>
#include <string>

#include "config/load_config.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = limits::fuzz::AsView(data, size);
  limits::Result<limits::config::Config> config = limits::config::ParseConfig(text, "fuzz.toml");
  if (!config.ok()) {
    FUZZ_CHECK(config.status().code() == limits::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!config.status().message().empty());
  }
  if (text.find("tenants") == std::string_view::npos) return 0;
  auto overrides = limits::config::ParseOverrides(text, "overrides.toml");
  if (!overrides.ok()) {
    FUZZ_CHECK(overrides.status().code() == limits::StatusCode::kInvalidArgument);
    FUZZ_CHECK(!overrides.status().message().empty());
  }
  return 0;
}
