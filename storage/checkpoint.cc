#include "storage/checkpoint.h"

#include "storage/codec.h"
#include "storage/partition_meta.h"

namespace limits::storage {
namespace {
constexpr uint8_t kCheckpointVersion = 1;
constexpr size_t kCheckpointSize = 1 + 8 + 8;
}  // namespace

std::string CheckpointKey(int32_t partition) { return MetaKey(kCheckpointKeyPrefix, partition); }

std::string EncodeCheckpoint(const Checkpoint& cp) {
  std::string out;
  out.reserve(kCheckpointSize);
  out.push_back(static_cast<char>(kCheckpointVersion));
  PutFixed64(&out, static_cast<uint64_t>(cp.next_offset));
  PutFixed64(&out, static_cast<uint64_t>(cp.newest_record_ms));
  return out;
}

Result<Checkpoint> DecodeCheckpoint(std::string_view value) {
  if (value.empty()) return Status::Corruption("empty checkpoint");
  if (static_cast<uint8_t>(value[0]) != kCheckpointVersion) {
    return Status::Corruption("checkpoint has unknown version " + std::to_string(static_cast<uint8_t>(value[0])));
  }
  if (value.size() != kCheckpointSize) {
    return Status::Corruption("checkpoint of " + std::to_string(value.size()) + " bytes, expected " +
                              std::to_string(kCheckpointSize));
  }
  Checkpoint cp;
  cp.next_offset = static_cast<int64_t>(GetFixed64(value.data() + 1));
  cp.newest_record_ms = static_cast<int64_t>(GetFixed64(value.data() + 9));
  if (cp.next_offset < 0) return Status::Corruption("checkpoint has negative offset " + std::to_string(cp.next_offset));
  return cp;
}

}  // namespace limits::storage
