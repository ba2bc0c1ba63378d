// Universe: the synthetic tenants and streams a load is made of, the same in every run with
// the same seed. Tenant t is "<prefix><t>"; stream i of tenant t has the hash StreamHash(t, i),
// distinct for every (t, i) of a universe; its ingestion policy is policies[i % n]. The produce
// load walks it in a fixed order (RecordAt). Immutable after construction: thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace limits::loadgen {

inline constexpr uint64_t kMaxTenants = uint64_t{1} << 20;
inline constexpr uint64_t kMaxStreamsPerTenant = uint64_t{1} << 40;

struct UniverseOptions {
  uint64_t seed = 1;
  uint32_t tenants = 1;                 // <= kMaxTenants (a name and a little state each)
  uint64_t streams_per_tenant = 1000;   // <= kMaxStreamsPerTenant
  std::string tenant_prefix = "tenant-";
  std::vector<std::string> policies;    // empty: no policy ("")
  uint64_t bytes_per_stream = 100;      // StreamMetadata.totalSize
};

class Universe {
 public:
  explicit Universe(UniverseOptions options);

  uint32_t tenants() const { return options_.tenants; }
  uint64_t streams_per_tenant() const { return options_.streams_per_tenant; }
  uint64_t bytes_per_stream() const { return options_.bytes_per_stream; }
  const std::string& Tenant(uint32_t t) const { return names_[t]; }
  uint64_t StreamHash(uint32_t t, uint64_t i) const;
  const std::string& Policy(uint64_t i) const;

  // The n-th record of the produce load: tenants take turns (n % tenants), each walking its
  // streams in order and starting over, so every stream recurs once per tenants*streams records.
  struct Slot {
    uint32_t tenant;
    uint64_t stream;
  };
  Slot RecordAt(uint64_t n) const;

 private:
  UniverseOptions options_;
  std::vector<std::string> names_;
  std::string no_policy_;
};

// A bijection of 64-bit integers with good mixing (splitmix64's finaliser).
uint64_t Mix64(uint64_t x);

// splitmix64: a deterministic generator with 8 bytes of state (a tenant each, so not mt19937's 2.5 KB).
struct SplitMix64 {
  uint64_t state = 0;
  uint64_t operator()() { return Mix64(state += 0x9e3779b97f4a7c15ULL); }
};

// The timestamp of a record produced at wall time `now_ms` when the load is `progress` (0..1)
// of the way through: spread over [start - spread, end], rising with progress, so a partition's
// records keep increasing timestamps along its offsets (what the window-start search assumes).
int64_t SpreadTimestampMs(int64_t now_ms, int64_t spread_ms, double progress);

}  // namespace limits::loadgen
