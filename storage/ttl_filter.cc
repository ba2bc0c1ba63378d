#include "storage/ttl_filter.h"

#include "storage/codec.h"

namespace limits::storage {
namespace {

// One filter per compaction job, with the cutoff fixed when the job starts: no locks.
class TtlFilter final : public rocksdb::CompactionFilter {
 public:
  TtlFilter(int64_t cutoff_s, TtlFilterStats* stats) : cutoff_s_(cutoff_s), stats_(stats) {}

  bool Filter(int /*level*/, const rocksdb::Slice& /*key*/, const rocksdb::Slice& value,
              std::string* /*new_value*/, bool* /*value_changed*/) const override {
    try {
      std::optional<uint32_t> last_seen = PeekLastSeen(std::string_view(value.data(), value.size()));
      if (!last_seen) {
        stats_->undecodable.fetch_add(1, std::memory_order_relaxed);
        return false;
      }
      if (static_cast<int64_t>(*last_seen) >= cutoff_s_) return false;
      stats_->dropped.fetch_add(1, std::memory_order_relaxed);
      return true;
    } catch (...) {  // RocksDB is not exception-safe: nothing may escape.
      return false;
    }
  }

  const char* Name() const override { return "limits.TtlFilter"; }

 private:
  const int64_t cutoff_s_;
  TtlFilterStats* const stats_;
};

}  // namespace

TtlFilterFactory::TtlFilterFactory(const Clock& clock, int64_t active_window_s, std::shared_ptr<TtlFilterStats> stats)
    : clock_(clock), active_window_s_(active_window_s), stats_(std::move(stats)) {}

std::unique_ptr<rocksdb::CompactionFilter> TtlFilterFactory::CreateCompactionFilter(
    const rocksdb::CompactionFilter::Context& /*context*/) {
  const int64_t now_s = clock_.NowMillis() / 1000;
  return std::make_unique<TtlFilter>(now_s - active_window_s_, stats_.get());
}

bool TtlFilterFactory::ShouldFilterTableFileCreation(rocksdb::TableFileCreationReason reason) const {
  return reason == rocksdb::TableFileCreationReason::kCompaction ||
         reason == rocksdb::TableFileCreationReason::kFlush;
}

}  // namespace limits::storage
