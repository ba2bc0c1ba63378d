// The deterministic workload of the crash test, shared by the child that writes it and the
// parent that checks what survived: the record at (partition, offset) is always the same,
// so the rows a checkpoint covers can be recomputed exactly.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "limits/usage/usage_store.h"

namespace limits::crash {

inline constexpr int32_t kPartitions = 4;
inline constexpr int64_t kNowMs = 1'700'000'000'000;
inline constexpr int64_t kFirstRecordMs = kNowMs - 600'000;  // one ms per offset after this

inline const std::string kTenants[] = {"t0", "t1", "t2"};
inline const std::string kPolicies[] = {"", "gold"};

inline Record RecordAt(int32_t partition, int64_t offset) {
  const auto o = static_cast<uint64_t>(offset);
  return Record{.tenant = kTenants[o % 3],
                .stream_hash = ((o * 7919) % 50) * kPartitions + static_cast<uint64_t>(partition),
                .bytes = o % 97 + 1,
                .policy = kPolicies[(o / 3) % 2],
                .timestamp_ms = kFirstRecordMs + offset,
                .offset = offset};
}

struct ExpectedRow {
  std::string policy;
  uint32_t last_seen_s = 0;
  uint64_t bytes = 0;
  friend bool operator==(const ExpectedRow&, const ExpectedRow&) = default;
};

// (tenant, hash) -> row after applying offsets [0, next_offset) of `partition`.
inline std::map<std::pair<std::string, uint64_t>, ExpectedRow> Model(int32_t partition, int64_t next_offset) {
  std::map<std::pair<std::string, uint64_t>, ExpectedRow> rows;
  for (int64_t o = 0; o < next_offset; ++o) {
    const Record r = RecordAt(partition, o);
    ExpectedRow& row = rows[{std::string(r.tenant), r.stream_hash}];
    const auto seen = static_cast<uint32_t>(r.timestamp_ms / 1000);
    if (seen >= row.last_seen_s) {
      row.last_seen_s = seen;
      row.policy = std::string(r.policy);
    }
    row.bytes += r.bytes;
  }
  return rows;
}

}  // namespace limits::crash
