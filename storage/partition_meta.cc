#include "storage/partition_meta.h"

#include "storage/codec.h"

namespace limits::storage {
namespace {
constexpr uint8_t kVersion = 1;
constexpr size_t kSize = 1 + 8 + 8;
}  // namespace

std::string MetaKey(std::string_view prefix, int32_t partition) {
  std::string key(prefix);
  const auto p = static_cast<uint32_t>(partition);
  for (int i = 3; i >= 0; --i) key.push_back(static_cast<char>(p >> (8 * i)));
  return key;
}

bool ParseMetaKey(std::string_view key, std::string_view prefix, int32_t* partition) {
  if (key.size() != prefix.size() + 4 || key.substr(0, prefix.size()) != prefix) return false;
  uint32_t p = 0;
  for (size_t i = prefix.size(); i < key.size(); ++i) p = (p << 8) | static_cast<uint8_t>(key[i]);
  if (p > 0x7fffffff) return false;
  *partition = static_cast<int32_t>(p);
  return true;
}

std::string PartitionMetaKey(int32_t partition) { return MetaKey(kPartitionMetaKeyPrefix, partition); }

std::string EncodePartitionMeta(const PartitionMeta& meta) {
  std::string out;
  out.push_back(static_cast<char>(kVersion));
  PutFixed64(&out, static_cast<uint64_t>(meta.revoked_at_ms));
  PutFixed64(&out, static_cast<uint64_t>(meta.evict_after_ms));
  return out;
}

Result<PartitionMeta> DecodePartitionMeta(std::string_view value) {
  if (value.size() != kSize || static_cast<uint8_t>(value[0]) != kVersion) {
    return Status::Corruption("partition meta of " + std::to_string(value.size()) + " bytes, version " +
                              (value.empty() ? std::string("none") : std::to_string(static_cast<uint8_t>(value[0]))));
  }
  return PartitionMeta{static_cast<int64_t>(GetFixed64(value.data() + 1)),
                       static_cast<int64_t>(GetFixed64(value.data() + 9))};
}

}  // namespace limits::storage
