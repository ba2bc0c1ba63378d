#include "storage/db_options.h"

#include <rocksdb/cache.h>
#include <rocksdb/memtablerep.h>
#include <rocksdb/table.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>

namespace limits::storage {
namespace {
constexpr uint64_t kMiB = 1ull << 20;
}

RocksOptions MakeDbOptions(const DbOptions& options, std::shared_ptr<TtlFilterStats> ttl_stats) {
  RocksOptions out;

  // One block cache and one memtable budget for every column family: memory is bounded by
  // configuration, not by the partition count.
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  out.block_cache = cache;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = cache;
  table.cache_index_and_filter_blocks = true;
  table.block_size = 16 * 1024;
  table.format_version = 5;
  auto table_factory = std::shared_ptr<rocksdb::TableFactory>(rocksdb::NewBlockBasedTableFactory(table));

  rocksdb::DBOptions& db = out.db;
  db.create_if_missing = true;
  db.create_missing_column_families = true;
  db.write_buffer_manager = std::make_shared<rocksdb::WriteBufferManager>(options.write_buffer_bytes, cache);
  // A crash restart replays the WAL at memtable-insert speed; bounding it bounds restart time.
  db.max_total_wal_size = std::max<uint64_t>(2 * options.write_buffer_bytes, 16 * kMiB);
  db.max_background_jobs = 2;
  db.bytes_per_sync = 1 * kMiB;
  db.keep_log_file_num = 5;
  db.max_log_file_size = 16 * kMiB;
  db.avoid_unnecessary_blocking_io = true;
  db.allow_concurrent_memtable_write = false;  // required by the vector memtable; one writer anyway
  // The manager, once over budget, flushes one column family per write, and a flush batch
  // touches most of the 64: a cold replay held 79 MiB of memtables under a 64 MiB budget and
  // kept them. Flushing every column family together keeps the budget a bound.
  db.atomic_flush = true;

  rocksdb::ColumnFamilyOptions& cf = out.partition_cf;
  cf.table_factory = table_factory;
  // A single busy partition may use half the shared budget; the manager flushes beyond it.
  cf.write_buffer_size = std::max<uint64_t>(options.write_buffer_bytes / 2, 1 * kMiB);
  cf.max_write_buffer_number = 3;
  // Memtable arenas allocate in blocks of write_buffer_size/8 by default: 64 idle column
  // families would pin 64 such blocks. Small blocks keep an idle partition cheap, and keep
  // the first block of each of 64 fresh memtables from filling the budget on its own.
  cf.arena_block_size = 64 * 1024;
  cf.level_compaction_dynamic_level_bytes = true;
  // Rows are written, scanned at open and compacted, but never point-read while the node
  // runs: an append-only vector memtable (sorted once, at flush) removes the skiplist
  // inserts that bound RocksDB's write path (store_bench: about 2.5x the records/s).
  cf.memtable_factory = std::make_shared<rocksdb::VectorRepFactory>();
  cf.compression = rocksdb::kLZ4Compression;
  cf.bottommost_compression = rocksdb::kZSTD;
  cf.compaction_filter_factory =
      std::make_shared<TtlFilterFactory>(*options.clock, options.active_window_s, std::move(ttl_stats));
  // Sends every file through the TTL filter at least this often, even with no writes.
  cf.periodic_compaction_seconds = static_cast<uint64_t>(std::max<int64_t>(2 * options.active_window_s, 3600));

  rocksdb::ColumnFamilyOptions& meta = out.meta_cf;
  meta.table_factory = table_factory;
  meta.write_buffer_size = 4 * kMiB;
  meta.arena_block_size = 64 * 1024;
  return out;
}

}  // namespace limits::storage
