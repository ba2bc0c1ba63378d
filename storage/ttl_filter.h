// The active-window TTL as a RocksDB compaction filter: a stream row whose last-seen time
// fell out of the window is dropped when compaction (or flush) rewrites it. Lazy by nature,
// so readers still check the window; EvictExpired() is the eager path.
// Internal to storage/: exposes rocksdb types.
#pragma once

#include <rocksdb/compaction_filter.h>

#include <atomic>
#include <cstdint>
#include <memory>

#include "common/clock.h"

namespace limits::storage {

struct TtlFilterStats {
  std::atomic<uint64_t> dropped{0};       // expired rows removed
  std::atomic<uint64_t> undecodable{0};   // rows kept because their value could not be read
};

class TtlFilterFactory final : public rocksdb::CompactionFilterFactory {
 public:
  // `clock` must outlive the factory (and so the DB).
  TtlFilterFactory(const Clock& clock, int64_t active_window_s, std::shared_ptr<TtlFilterStats> stats);

  std::unique_ptr<rocksdb::CompactionFilter> CreateCompactionFilter(
      const rocksdb::CompactionFilter::Context& context) override;
  bool ShouldFilterTableFileCreation(rocksdb::TableFileCreationReason reason) const override;
  const char* Name() const override { return "limits.TtlFilterFactory"; }

 private:
  const Clock& clock_;
  const int64_t active_window_s_;
  const std::shared_ptr<TtlFilterStats> stats_;
};

}  // namespace limits::storage
