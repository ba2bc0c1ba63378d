// TestStore: a RocksDB database in a temp dir with a UsageStore on it, for unit tests.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "limits/usage/usage_store.h"
#include "storage/db.h"
#include "testing/temp_dir.h"

namespace limits::testing {

struct TestStore {
  std::unique_ptr<storage::Db> db;
  std::unique_ptr<UsageStore> store;

  static TestStore Open(const TempDir& dir, const Clock& clock, int32_t partitions, Windows windows = {},
                        uint32_t max_policies_per_tenant = kDefaultMaxPoliciesPerTenant,
                        const std::function<void(UsageStoreOptions&)>& adjust = nullptr) {
    TestStore t;
    storage::DbOptions o;
    o.path = dir.Sub("db");
    o.block_cache_bytes = 8 << 20;
    o.write_buffer_bytes = 8 << 20;
    o.active_window_s = windows.active_s;
    o.clock = &clock;
    auto db = storage::Db::Open(o);
    EXPECT_TRUE(db.ok()) << db.status().ToString();
    if (!db.ok()) return t;
    t.db = std::move(*db);
    UsageStoreOptions so;
    so.num_partitions = partitions;
    so.windows = windows;
    so.max_policies_per_tenant = max_policies_per_tenant;
    so.clock = &clock;
    if (adjust) adjust(so);
    auto store = UsageStore::Open(*t.db, so);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    if (store.ok()) t.store = std::move(*store);
    return t;
  }
};

}  // namespace limits::testing
