#include "loadgen/universe.h"

#include <algorithm>

namespace limits::loadgen {

uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

Universe::Universe(UniverseOptions options) : options_(std::move(options)) {
  names_.reserve(options_.tenants);
  for (uint32_t t = 0; t < options_.tenants; ++t) names_.push_back(options_.tenant_prefix + std::to_string(t));
}

uint64_t Universe::StreamHash(uint32_t t, uint64_t i) const {
  // (t, i) packs into distinct integers (t < 2^20, i < 2^40); adding a constant and Mix64 are
  // both bijections, so distinct streams never share a hash within a universe.
  const uint64_t packed = (static_cast<uint64_t>(t) << 40) | i;
  return Mix64(packed + Mix64(options_.seed) * 0x9e3779b97f4a7c15ULL);
}

const std::string& Universe::Policy(uint64_t i) const {
  if (options_.policies.empty()) return no_policy_;
  return options_.policies[i % options_.policies.size()];
}

Universe::Slot Universe::RecordAt(uint64_t n) const {
  return {static_cast<uint32_t>(n % options_.tenants), (n / options_.tenants) % options_.streams_per_tenant};
}

int64_t SpreadTimestampMs(int64_t now_ms, int64_t spread_ms, double progress) {
  progress = std::clamp(progress, 0.0, 1.0);
  return now_ms - static_cast<int64_t>(static_cast<double>(spread_ms) * (1.0 - progress));
}

}  // namespace limits::loadgen
