// BucketKey: one limited bucket of a tenant — its own (policy "") or a policy's with a stream
// limit of its own — and where it lives in the zone: the home that keeps its ledger, chosen by
// rendezvous hashing over the zone's members (a member that leaves moves only its own buckets;
// one that joins takes only the buckets it now wins), and the rotation of its cold floors.
// The hash is FNV-1a, fixed here: every node of the zone, whatever its build, must agree.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace limits::zone {

struct BucketKey {
  std::string tenant;
  std::string policy;  // "" = the tenant's own bucket

  friend bool operator==(const BucketKey&, const BucketKey&) = default;
  friend auto operator<=>(const BucketKey&, const BucketKey&) = default;
};

namespace bucket_hash {
inline uint64_t Fnv1a(uint64_t h, std::string_view bytes) {
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}
// Length-prefixed fields, so that ("ab", "c") and ("a", "bc") differ.
inline uint64_t Field(uint64_t h, std::string_view field) {
  char n[8];
  for (int i = 0; i < 8; ++i) n[i] = static_cast<char>((static_cast<uint64_t>(field.size()) >> (8 * i)) & 0xff);
  return Fnv1a(Fnv1a(h, std::string_view(n, sizeof n)), field);
}
inline constexpr uint64_t kBasis = 0xcbf29ce484222325ull;
}  // namespace bucket_hash

inline uint64_t HashOf(const BucketKey& key) {
  return bucket_hash::Field(bucket_hash::Field(bucket_hash::kBasis, key.tenant), key.policy);
}

// The low bits of the incarnations of a node's homes (NextIncarnation, home_ledger.h), from
// its ring id: two nodes' homes started in one millisecond number apart.
inline uint16_t IncarnationTiebreak(std::string_view node_id) {
  const uint64_t h = bucket_hash::Field(bucket_hash::kBasis, node_id);
  return static_cast<uint16_t>(h ^ (h >> 16) ^ (h >> 32) ^ (h >> 48));
}

// The member that wins the bucket: the highest hash of (member, bucket); ties go to the
// smaller name. Empty when there are no members. A copy, not a view: callers pass lists
// made for the call.
inline std::string HomeOf(const BucketKey& key, std::span<const std::string> members) {
  const uint64_t k = HashOf(key);
  std::string_view best;
  uint64_t best_score = 0;
  for (const std::string& m : members) {
    uint64_t score = bucket_hash::Field(k, m);
    score ^= score >> 33;  // FNV's high bits mix poorly: finish like splitmix64
    score *= 0xff51afd7ed558ccdull;
    score ^= score >> 33;
    if (best.empty() || score > best_score || (score == best_score && m < best)) {
      best = m;
      best_score = score;
    }
  }
  return std::string(best);
}

}  // namespace limits::zone
