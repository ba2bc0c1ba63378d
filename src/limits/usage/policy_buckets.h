// PolicyBuckets: which of a tenant's stream buckets each ingestion policy counts in. Bucket 0
// is the tenant's own (no policy, or a policy without a stream limit of its own); each policy
// with a limit of its own gets the next one. A BucketQuota's map from policies to its places.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace limits {

class PolicyBuckets {
 public:
  static constexpr size_t kDefaultBucket = 0;

  // Gives `policy` a bucket of its own; returns its index.
  size_t Add(std::string policy) {
    own_.emplace_back(std::move(policy), own_.size() + 1);
    return own_.size();
  }
  size_t BucketOf(std::string_view policy) const {
    for (const auto& [name, bucket] : own_) {
      if (name == policy) return bucket;
    }
    return kDefaultBucket;
  }
  // Buckets in all, the default one included.
  size_t size() const { return own_.size() + 1; }

 private:
  std::vector<std::pair<std::string, size_t>> own_;  // a handful: a scan beats a map
};

}  // namespace limits
