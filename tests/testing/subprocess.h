// Runs a program to completion, capturing its exit code, stdout and stderr (CLI tests).
#pragma once

#include <string>
#include <vector>

namespace limits::testing {

struct RunResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
};

RunResult RunProgram(const std::vector<std::string>& argv);

}  // namespace limits::testing
