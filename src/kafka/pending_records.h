#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kafka/record_codec.h"
#include "limits/usage/usage_store.h"

namespace limits::kafka {

// The records consumed from one partition and not yet applied to the store. Tenant and policy
// are copied into chunks that never move, so the store reads the records in place; Clear()
// keeps a bounded capacity, so a replay's burst (a whole 1 MB batch for one partition) is not
// held for the rest of the partition's life — 64 partitions used to keep ~40 MiB that way.
class PendingRecords {
 public:
  void Add(const RecordView& r, int64_t timestamp_ms, int64_t offset);
  std::span<const Record> records() const { return records_; }
  size_t size() const { return records_.size(); }
  bool empty() const { return records_.empty(); }
  // Forgets the records; keeps one chunk and up to kKeptRecords slots for the next ones.
  void Clear();

  static constexpr size_t kChunkBytes = 16 * 1024;
  static constexpr size_t kKeptRecords = 256;

 private:
  std::string_view Copy(std::string_view s);

  std::vector<Record> records_;
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_size_ = 0;  // of chunks_.back()
  size_t used_ = 0;        // bytes used of chunks_.back()
};

}  // namespace limits::kafka
