// The crash loop's view of limitsd: the process (started, waited for until it serves every
// partition, stopped gracefully with a deadline) and what it holds — a tenant's count from the
// usage endpoint, and its streams in the database (limitsctl, after the node stopped).
// Start and stop from the main thread only (Child's PR_SET_PDEATHSIG follows that thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "child.h"
#include "common/result.h"

namespace limits::bench {

struct NodeProcess {
  std::unique_ptr<Child> child;
  std::string log;
  int http = 0, grpc = 0;  // once serving
};

// Starts `limitsd` with `sets` (--set each), its output in `log`, and waits up to `timeout`
// for GET /ready to report all `partitions` ready. Unavailable, with the end of the log, when
// it exits or does not get there (the process is left to the caller, who may kill it).
Status StartNode(const std::string& limitsd, const std::vector<std::string>& sets, int32_t partitions,
                 std::chrono::milliseconds timeout, const std::string& log, NodeProcess* node);

// SIGTERM, then up to `timeout` for the graceful stop; false when it had to be SIGKILLed.
bool StopNode(NodeProcess* node, std::chrono::milliseconds timeout);

// The tenant's active streams as the node counts them (GET /ingest-limits/usage/{tenant}); -1
// when the request fails.
int64_t CountedStreams(int http_port, const std::string& tenant);

// The tenant's active streams in the database at `db` (limitsctl streams --json --limit 0).
Result<std::unordered_set<uint64_t>> HeldStreams(const std::string& limitsctl, const std::string& db,
                                                 const std::string& tenant);

}  // namespace limits::bench
