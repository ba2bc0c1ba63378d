// The memberlist backend's Prometheus metrics (limitsd_memberlist_*): members by state,
// messages in and out by memberlist type, push-pull exchanges, rejected input by reason,
// probes, KV merges and CAS outcomes. Created once per backend on the node's registry.
// Counters and gauges are thread-safe; the families' series are created up front.
#pragma once

#include <string>

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

namespace limits::ring::memberlist {

class Metrics {
 public:
  explicit Metrics(prometheus::Registry& registry);

  // A message by memberlist type name (messages.h MessageTypeName).
  void Received(const char* type) { received_.Add({{"type", type}}).Increment(); }
  void Sent(const char* type) { sent_.Add({{"type", type}}).Increment(); }
  // Input refused: "bad_frame_type", "short", "digest", "oversized", "label", "crc",
  // "decode", "unsupported", "timeout", "overload".
  void Rejected(const char* reason) { rejected_.Add({{"reason", reason}}).Increment(); }
  void PushPull(const char* direction, bool ok) {
    push_pull_.Add({{"direction", direction}, {"result", ok ? "ok" : "error"}}).Increment();
  }
  void Probe(const char* result) { probes_.Add({{"result", result}}).Increment(); }
  void KvReceived(const char* result, double n = 1) { kv_received_.Add({{"result", result}}).Increment(n); }
  void Cas(bool ok) { cas_.Add({{"result", ok ? "ok" : "error"}}).Increment(); }
  void Join(bool ok) { joins_.Add({{"result", ok ? "ok" : "error"}}).Increment(); }
  void SetMembers(const char* state, double n) { members_.Add({{"state", state}}).Set(n); }
  void SetQueue(const char* queue, double n) { queue_.Add({{"queue", queue}}).Set(n); }

  prometheus::Counter& packets_in;
  prometheus::Counter& packets_out;
  prometheus::Counter& packets_dropped;  // send queue full or the peer unreachable
  prometheus::Counter& bytes_in;
  prometheus::Counter& bytes_out;
  prometheus::Counter& streams_in;
  prometheus::Counter& streams_out;
  prometheus::Counter& refutes;
  prometheus::Gauge& health_score;

 private:
  prometheus::Family<prometheus::Counter>& received_;
  prometheus::Family<prometheus::Counter>& sent_;
  prometheus::Family<prometheus::Counter>& rejected_;
  prometheus::Family<prometheus::Counter>& push_pull_;
  prometheus::Family<prometheus::Counter>& probes_;
  prometheus::Family<prometheus::Counter>& kv_received_;
  prometheus::Family<prometheus::Counter>& cas_;
  prometheus::Family<prometheus::Counter>& joins_;
  prometheus::Family<prometheus::Gauge>& members_;
  prometheus::Family<prometheus::Gauge>& queue_;
};

}  // namespace limits::ring::memberlist
