// ExceedsLoad: drives a node's IngestLimits service at a target rate — ExceedsLimits requests
// built by a StreamPicker, and UpdateRates requests of known streams when asked — from
// `concurrency` callers per method over a few connections. Open loop (Pacer): a slow answer
// does not lower the offered rate while callers are free; the rate reached is what the lines
// show. Create() connects and asks GetAssignedPartitions, so a wrong address or a node that is
// not ready is reported before any load. Start() spawns the callers; Stop() cancels the calls
// in flight and joins them.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/result.h"
#include "loadgen/counters.h"
#include "loadgen/options.h"
#include "loadgen/pacer.h"
#include "loadgen/stream_picker.h"
#include "loadgen/universe.h"
#include "proto/limits.grpc.pb.h"

namespace limits::loadgen {

class ExceedsLoad {
 public:
  static Result<std::unique_ptr<ExceedsLoad>> Create(const ExceedsOptions& options, const Universe& universe,
                                                     LoadCounters& counters);
  ~ExceedsLoad();

  // Partitions the node reported ready at Create().
  size_t ready_partitions() const { return ready_partitions_; }
  std::string Describe() const;

  void Start(Pacer::Clock::time_point start);
  void Stop();

 private:
  enum class Method { kExceedsLimits, kUpdateRates };
  // A caller's call in flight, so that Stop() can cancel it.
  struct Caller {
    std::mutex mu;
    grpc::ClientContext* call = nullptr;  // GUARDED_BY(mu)
  };

  ExceedsLoad(const ExceedsOptions& options, const Universe& universe, LoadCounters& counters);
  void CallerLoop(Method method, size_t index, const Pacer& pacer, std::atomic<uint64_t>& next);
  // One request: built, sent, counted (nothing once stopped).
  void CallOnce(Method method, proto::IngestLimits::Stub& stub, Caller& caller, PickedRequest& picked);

  const ExceedsOptions options_;
  const Universe& universe_;
  LoadCounters& counters_;
  StreamPicker picker_;
  size_t ready_partitions_ = 0;
  std::vector<std::unique_ptr<proto::IngestLimits::Stub>> stubs_;  // one per connection
  std::atomic<bool> stop_{false};
  std::unique_ptr<Pacer> exceeds_pacer_, update_pacer_;
  std::atomic<uint64_t> exceeds_next_{0}, update_next_{0};
  std::vector<std::unique_ptr<Caller>> callers_;
  std::vector<std::thread> threads_;
};

}  // namespace limits::loadgen
