// FlagCursor: walks a command line whose flags come in both forms, "--name value" and
// "--name=value" (as Kubernetes manifests and Dockerfiles write them). Shared by limitsd and
// limitsctl so both binaries accept exactly the same spellings. Not thread-safe; one per main().
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace limits {

class FlagCursor {
 public:
  FlagCursor(int argc, char** argv);
  explicit FlagCursor(std::vector<std::string> args) : args_(std::move(args)) {}

  // Moves to the next argument; false past the last one.
  bool Next();
  // The current argument; for "--name=value" only "--name".
  const std::string& arg() const { return arg_; }
  // "--name" or "--name=..." (a lone "--" or "-x" is not a flag).
  bool is_flag() const { return is_flag_; }
  // The current flag's value: the text after '=', else the next argument (consumed, even when it
  // starts with "--": `--db --json` means a database called "--json"). nullopt at the end.
  std::optional<std::string> Value();
  // For a flag whose value may be left out (`--check-config [FILE]`): the text after '=', else
  // the next argument unless it is itself a flag; nullopt when there is none.
  std::optional<std::string> OptionalValue();
  // True when a flag that takes no value was given one ("--json=yes").
  bool has_inline_value() const { return inline_value_.has_value(); }

 private:
  std::vector<std::string> args_;
  size_t next_ = 0;
  std::string arg_;
  bool is_flag_ = false;
  std::optional<std::string> inline_value_;
};

}  // namespace limits
