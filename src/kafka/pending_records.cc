#include "kafka/pending_records.h"

#include <algorithm>
#include <cstring>

namespace limits::kafka {

void PendingRecords::Add(const RecordView& r, int64_t timestamp_ms, int64_t offset) {
  records_.push_back(Record{.tenant = Copy(r.tenant),
                            .stream_hash = r.stream_hash,
                            .bytes = r.total_size,
                            .policy = Copy(r.policy),
                            .timestamp_ms = timestamp_ms,
                            .offset = offset});
}

std::string_view PendingRecords::Copy(std::string_view s) {
  if (s.empty()) return {};
  if (chunks_.empty() || chunk_size_ - used_ < s.size()) {
    // A name longer than a chunk gets a chunk of its own size.
    chunk_size_ = std::max(kChunkBytes, s.size());
    chunks_.push_back(std::make_unique<char[]>(chunk_size_));
    used_ = 0;
  }
  char* at = chunks_.back().get() + used_;
  std::memcpy(at, s.data(), s.size());
  used_ += s.size();
  return {at, s.size()};
}

void PendingRecords::Clear() {
  records_.clear();
  if (records_.capacity() > kKeptRecords) {
    std::vector<Record>().swap(records_);
    records_.reserve(kKeptRecords);
  }
  // Keep the first chunk (an oversized one is used as an ordinary one); the next Copy starts
  // at its beginning.
  if (!chunks_.empty()) {
    chunks_.resize(1);
    chunk_size_ = kChunkBytes;
  }
  used_ = 0;
}

}  // namespace limits::kafka
