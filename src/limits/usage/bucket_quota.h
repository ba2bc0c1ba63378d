// BucketQuota: the places one request may take in each of a tenant's stream buckets — what
// UsageStore::UpdateCond asks before it admits a stream (a new one, or one changing bucket).
// The store knows streams and counts; a quota knows limits: which bucket a policy counts in,
// whether that bucket is limited, and how many places are left once the store has counted
// the tenant's active streams into it, partition by partition. Admission
// (decision/admission.h: a global limit as this node's pool share) is the one in use; the
// zone's (a bucket's cold floors are per partition: zone/partition_floors.h) will be another.
// Lifecycle: one per UpdateCond call (counting adds to it). Not thread-safe: UpdateCond uses
// it under the tenant's admission stripe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "limits/usage/tenant_streams.h"

namespace limits {

class BucketQuota {
 public:
  virtual ~BucketQuota() = default;

  // The bucket a stream of ingestion policy `policy` ("" = none) counts in.
  virtual size_t BucketOf(std::string_view policy) const = 0;
  // Whether the policy has a bucket of its own: the store must then always keep its name
  // (policy_names.h), even when the tenant's policy table is full.
  virtual bool OwnBucket(std::string_view policy) const = 0;
  // Whether the bucket has a limit at all; admissions into an unlimited one need no count.
  virtual bool Limited(size_t bucket) const = 0;

  // Adds the active streams (last seen at or after `cutoff_s`) of the tenant in `partition`
  // to the buckets' usage. The store calls it for every partition of the pool that holds the
  // tenant before it asks for a place in a limited bucket, and not at all when no stream of
  // the request needs one.
  virtual void CountPartition(int32_t partition, TenantStreams& ts, int64_t cutoff_s) = 0;
  // Takes one place in the bucket for a stream of `partition` if there is one (always, when
  // the bucket is unlimited).
  virtual bool TryAdmit(size_t bucket, int32_t partition) = 0;
  // Gives back the place of a counted stream of `partition` that left the bucket.
  virtual void Release(size_t bucket, int32_t partition) = 0;

 protected:
  BucketQuota() = default;
  BucketQuota(const BucketQuota&) = default;
  BucketQuota& operator=(const BucketQuota&) = default;
};

}  // namespace limits
