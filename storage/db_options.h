// RocksDB options for limitsd's database, built in one place so the node and limitsctl open
// it identically (same TTL filter, same shared memory budgets). Internal to storage/.
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/options.h>

#include <memory>

#include "storage/db.h"
#include "storage/ttl_filter.h"

namespace limits::storage {

struct RocksOptions {
  rocksdb::DBOptions db;
  rocksdb::ColumnFamilyOptions partition_cf;  // stream rows: TTL filter, compression
  rocksdb::ColumnFamilyOptions meta_cf;       // checkpoints, format version (also "default")
  std::shared_ptr<rocksdb::Cache> block_cache;  // shared by every column family
};

RocksOptions MakeDbOptions(const DbOptions& options, std::shared_ptr<TtlFilterStats> ttl_stats);

}  // namespace limits::storage
