#include "limits/lifecycle/record_filter.h"

#include <cinttypes>
#include <cstdio>
#include <random>

namespace limits {

std::string MakeRunTag(std::string_view instance_id) {
  std::random_device rd;
  const uint64_t id = (uint64_t{rd()} << 32) ^ rd();
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, id);
  std::string tag(instance_id);
  tag.append("/").append(hex);
  return tag;
}

}  // namespace limits
