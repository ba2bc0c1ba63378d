#include "common/flag_cursor.h"

#include <utility>

namespace limits {
namespace {

bool LooksLikeFlag(const std::string& a) { return a.size() > 2 && a.rfind("--", 0) == 0; }

}  // namespace

FlagCursor::FlagCursor(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) args_.emplace_back(argv[i]);
}

bool FlagCursor::Next() {
  if (next_ >= args_.size()) return false;
  arg_ = args_[next_++];
  inline_value_.reset();
  is_flag_ = LooksLikeFlag(arg_);
  if (is_flag_) {
    // Only the first '=' separates: --set=kafka.brokers=host:9092 is --set "kafka.brokers=host:9092".
    if (const size_t eq = arg_.find('='); eq != std::string::npos) {
      inline_value_ = arg_.substr(eq + 1);
      arg_.resize(eq);
    }
  }
  return true;
}

std::optional<std::string> FlagCursor::Value() {
  if (inline_value_) return std::exchange(inline_value_, std::nullopt);
  if (next_ >= args_.size()) return std::nullopt;
  return args_[next_++];
}

std::optional<std::string> FlagCursor::OptionalValue() {
  if (inline_value_) return std::exchange(inline_value_, std::nullopt);
  if (next_ >= args_.size() || LooksLikeFlag(args_[next_])) return std::nullopt;
  return args_[next_++];
}

}  // namespace limits
