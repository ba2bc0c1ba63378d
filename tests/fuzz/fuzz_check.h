// What the fuzz targets share: FUZZ_CHECK (an invariant that holds whatever the input, checked
// in every build type: a failure prints and aborts, which libFuzzer reports as a crash and
// saves the input), and quiet libraries (our log, protobuf's) so that runs are fast.
#pragma once

#include <google/protobuf/stubs/logging.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/log.h"

#define FUZZ_CHECK(cond)                                                             \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

namespace limits::fuzz {

// Errors only from our log; protobuf's complaints (invalid UTF-8 in a string field) dropped.
inline void QuietLogs() {
  log::Configure(log::Level::kError, log::Format::kLogfmt);
  google::protobuf::SetLogHandler(nullptr);
}

// True when `part` lies inside `whole` (a view the decoder returned into its input).
inline bool Within(std::string_view part, std::string_view whole) {
  if (part.empty()) return true;
  const char* b = whole.data();
  return part.data() >= b && part.data() + part.size() <= b + whole.size();
}

inline std::string_view AsView(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace limits::fuzz
