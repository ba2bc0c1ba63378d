// The node's HTTP API besides /ready, /live and /metrics:
//   GET /ingest-limits/usage/{tenant}  Loki's usage document: active streams over the ready
//       partitions, by policy, and the rate — bytes in the rate window / the rate window
//       (Loki divides by the active window: 24x too low with the defaults). With [zone], also
//       "zone": each of the tenant's stream buckets (policy "" is the tenant's own) with its
//       limit, its home, its state here (unknown, cold, hot), this node's headroom, and, on
//       the home, the zone-wide ledger (streams counted, headroom held, free, learning).
//   GET /partitions  every partition held on disk or assigned: state, assignment, checkpoint,
//       the log end at assignment (end_offset_at_assignment: where the replay stops), replay
//       progress, revocation, streams, disk bytes.
#pragma once

#include "http/http_server.h"
#include "limits/decision/limits_provider.h"
#include "limits/lifecycle/partition_manager.h"
#include "limits/usage/usage_store.h"
#include "limits/zone/zone_agent.h"
#include "storage/db.h"

namespace limits {

// `agent` and `limits`: with [zone], else null.
http::Response UsageResponse(const http::Request& request, UsageStore& store, PartitionManager& partitions,
                             zone::ZoneAgent* agent = nullptr, LimitsProvider* limits = nullptr);
http::Response PartitionsResponse(const http::Request& request, UsageStore& store, PartitionManager& partitions,
                                  storage::Db& db);

}  // namespace limits
