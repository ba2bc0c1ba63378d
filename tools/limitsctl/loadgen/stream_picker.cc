#include "loadgen/stream_picker.h"

#include <algorithm>
#include <cmath>

namespace limits::loadgen {
namespace {

// New streams in request r when a fraction f of n streams per request are new: the integer
// steps of r·f·n, so that any run of requests carries round(f·n·requests) new streams ±1.
uint64_t FreshInRequest(uint64_t r, double f, uint32_t n) {
  const long double per = static_cast<long double>(f) * n;
  return static_cast<uint64_t>(std::floor((r + 1) * per) - std::floor(r * per));
}

}  // namespace

StreamPicker::StreamPicker(const Universe& universe, double new_fraction, uint32_t streams_per_request)
    : universe_(universe), new_fraction_(new_fraction), per_request_(streams_per_request) {
  tenants_.resize(universe.tenants());
  for (uint32_t t = 0; t < universe.tenants(); ++t) {
    tenants_[t].rng.state = Mix64(universe.StreamHash(t, 0) ^ 1);
    tenants_[t].update_rng.state = Mix64(universe.StreamHash(t, 0) ^ 2);
  }
}

void StreamPicker::AppendKnown(SplitMix64& rng, uint64_t n, uint64_t known, std::vector<uint64_t>* out) {
  if (n == 0) return;
  const uint64_t from = rng() % known;
  for (uint64_t j = 0; j < n; ++j) out->push_back((from + j) % known);
}

void StreamPicker::NextRequest(PickedRequest* out) {
  std::lock_guard lock(mu_);
  out->tenant = static_cast<uint32_t>(next_tenant_++ % tenants_.size());
  out->streams.clear();
  TenantState& ts = tenants_[out->tenant];
  const uint64_t universe = universe_.streams_per_tenant();
  const uint64_t known = ts.sent;
  const uint64_t unsent = universe - known;
  uint64_t fresh = std::min(FreshInRequest(ts.requests++, new_fraction_, per_request_), unsent);
  const uint64_t old = std::min<uint64_t>(per_request_ - fresh, known);
  fresh = std::min<uint64_t>(per_request_ - old, unsent);  // no known streams yet: new ones fill in
  AppendKnown(ts.rng, old, known, &out->streams);
  for (uint64_t j = 0; j < fresh; ++j) out->streams.push_back(known + j);
  ts.sent += fresh;
  out->fresh = static_cast<uint32_t>(fresh);
}

void StreamPicker::NextKnown(PickedRequest* out) {
  std::lock_guard lock(mu_);
  out->tenant = static_cast<uint32_t>(next_update_tenant_++ % tenants_.size());
  out->streams.clear();
  out->fresh = 0;
  TenantState& ts = tenants_[out->tenant];
  if (ts.sent == 0) {
    const uint64_t n = std::min<uint64_t>(per_request_, universe_.streams_per_tenant());
    for (uint64_t j = 0; j < n; ++j) out->streams.push_back(j);
    return;
  }
  AppendKnown(ts.update_rng, std::min<uint64_t>(per_request_, ts.sent), ts.sent, &out->streams);
}

uint64_t StreamPicker::Sent(uint32_t tenant) const {
  std::lock_guard lock(mu_);
  return tenants_[tenant].sent;
}

}  // namespace limits::loadgen
