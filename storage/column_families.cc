#include "storage/column_families.h"

#include <charconv>
#include <cstdio>

namespace limits::storage {

std::string PartitionCfName(int32_t partition) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "p%05d", partition);
  return buf;
}

std::optional<int32_t> ParsePartitionCfName(std::string_view name) {
  if (name.size() != 6 || name[0] != 'p') return std::nullopt;
  int32_t p = -1;
  auto [end, ec] = std::from_chars(name.data() + 1, name.data() + name.size(), p);
  if (ec != std::errc() || end != name.data() + name.size() || p < 0) return std::nullopt;
  return p;
}

}  // namespace limits::storage
