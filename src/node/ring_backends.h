// The ring's KV backends this binary has, by `[ring] store` name. A backend is one factory
// line in ring_backends.cc; the node builds the lifecycler on whatever KvClient it returns.
#pragma once

#include <functional>
#include <memory>
#include <prometheus/registry.h>

#include "common/result.h"
#include "config/config.h"
#include "ring/kv_client.h"

namespace limits {

// Builds a backend from the whole configuration (its keys live in [ring]); it may register
// metrics. The client must not need the network to be built: the KV store may be down.
using RingKvFactory =
    std::function<Result<std::unique_ptr<ring::KvClient>>(const config::Config&, prometheus::Registry&)>;

// The KvClient for config.ring.store; kInvalidArgument naming ring.store when this binary
// has no such backend.
Result<std::unique_ptr<ring::KvClient>> MakeRingKv(const config::Config& config, prometheus::Registry& registry);

}  // namespace limits
