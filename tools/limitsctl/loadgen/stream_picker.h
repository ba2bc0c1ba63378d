// StreamPicker: which streams each request of the ExceedsLimits load carries. Request r of a
// tenant carries `new_fraction` of its streams new — the tenant's next streams never sent
// before, floor((r+1)·f·n) − floor(r·f·n) of them, so the fraction is exact over requests —
// and the rest known: a run of distinct streams already sent, from a random place. Before any
// stream is known, and once every stream of the tenant has been sent, the other kind fills
// the request; it is shorter only when the tenant has fewer streams than a request holds.
// Requests go to the tenants in turn. Deterministic for a universe (its seed) and a call order
// per tenant. Thread-safe (one mutex; the work under it is the request's stream indexes).
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "loadgen/universe.h"

namespace limits::loadgen {

struct PickedRequest {
  uint32_t tenant = 0;
  std::vector<uint64_t> streams;  // stream indexes of the tenant (Universe::StreamHash)
  uint32_t fresh = 0;             // how many of them were never sent before
};

class StreamPicker {
 public:
  StreamPicker(const Universe& universe, double new_fraction, uint32_t streams_per_request);

  // The next ExceedsLimits request (tenants in turn).
  void NextRequest(PickedRequest* out);
  // An UpdateRates request: known streams only (the tenant's first streams before any is known).
  void NextKnown(PickedRequest* out);

  // Streams of `tenant` sent so far (the known ones are indexes below this).
  uint64_t Sent(uint32_t tenant) const;

 private:
  struct TenantState {
    uint64_t requests = 0;  // requests built for this tenant
    uint64_t sent = 0;      // streams [0, sent) have been sent
    SplitMix64 rng;         // where a request's known run starts
    SplitMix64 update_rng;  // the same for UpdateRates, so neither load shifts the other
  };
  static void AppendKnown(SplitMix64& rng, uint64_t n, uint64_t known, std::vector<uint64_t>* out);

  const Universe& universe_;
  const double new_fraction_;
  const uint32_t per_request_;
  mutable std::mutex mu_;
  std::vector<TenantState> tenants_;  // GUARDED_BY(mu_)
  uint64_t next_tenant_ = 0;          // GUARDED_BY(mu_)
  uint64_t next_update_tenant_ = 0;   // GUARDED_BY(mu_)
};

}  // namespace limits::loadgen
