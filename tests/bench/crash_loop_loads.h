// The crash loop's two loads, each with the reference model of what the node must hold:
// - ExceedsModel: ExceedsLimits over gRPC for the limited tenants. Every stream answered
//   accepted is "admitted" (the node held it then, so it must hold it now); every stream of a
//   call that failed or was cut by a kill, not admitted otherwise, is "maybe admitted".
// - ProduceModel: records of another zone's tenants produced straight to the topic; every
//   record whose delivery the broker acknowledged is a stream the node must hold ("records are
//   facts": no limit applies to them); a record whose delivery failed is "maybe".
// Both start on construction and run until Stop(). Thread-safe: the kill loop calls Serve /
// Pause / WaitForAdmission while the loads run; the models are read after Stop().
#pragma once

#include <librdkafka/rdkafkacpp.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/result.h"

namespace limits::bench {

// One limited tenant as the client saw it.
struct TenantModel {
  std::string name;
  std::vector<uint64_t> admitted_order;  // admitted, in the order they were first answered accepted
  std::unordered_set<uint64_t> admitted;
  std::unordered_set<uint64_t> maybe;    // streams of failed or cut calls, never answered accepted
  uint64_t next_new = 0;                 // streams never sent before: index of the next
  uint64_t reason1 = 0, reason2 = 0, reason_other = 0;
  std::unordered_set<uint64_t> rejected_after_admit;  // admitted, answered reason 2 later: forgotten
};

struct ExceedsOptions {
  uint64_t seed = 1;
  uint32_t tenants = 8;
  std::string tenant_prefix = "limited-";
  double rate = 40;           // calls per second, over all callers (open loop while serving)
  int callers = 4;
  uint32_t per_request = 50;
  uint32_t new_per_request = 2;  // streams never sent before in each call; the rest are admitted ones
  // Known streams are drawn from the tenant's `live` most recently admitted ones: older streams
  // stop being pushed (churn, as pods come and go) and only count until they leave the active
  // window. A lost stream that is no longer pushed is never healed by being admitted again.
  uint64_t live = 100;
  std::chrono::milliseconds deadline{2000};
};

struct CallCounters {
  std::atomic<uint64_t> ok{0}, failed{0}, streams_accepted{0}, streams_new_admitted{0};
};

class ExceedsModel {
 public:
  explicit ExceedsModel(const ExceedsOptions& o);
  ~ExceedsModel();  // Stop()

  // A node now serves on 127.0.0.1:`grpc_port`: callers connect to it and resume.
  void Serve(int grpc_port);
  // The node is about to go down: callers send nothing new (calls in flight are cut).
  void Pause();
  // Waits up to `timeout` for an answer, after this call, that admitted a new stream; the
  // time since that answer when it returns true (measured at the wake-up).
  bool WaitForAdmission(std::chrono::milliseconds timeout, std::chrono::microseconds* since_answer);
  void Stop();

  const CallCounters& counters() const { return counters_; }
  // Each tenant's admitted streams so far.
  std::vector<size_t> AdmittedCounts();
  // The model; read after Stop().
  const std::vector<TenantModel>& tenants() const { return tenants_; }
  // Stream i of tenant t (never sent streams are indexes >= next_new).
  uint64_t StreamHash(uint32_t t, uint64_t i) const;

 private:
  void Caller(int c);

  const ExceedsOptions o_;
  std::vector<TenantModel> tenants_;
  std::vector<std::unique_ptr<std::mutex>> tenant_mu_;  // one per tenant
  CallCounters counters_;

  std::mutex mu_;  // guards what follows
  std::condition_variable cv_;
  int port_ = 0;         // 0 while paused
  uint64_t generation_ = 0;  // bumped by Serve()
  bool stop_ = false;
  uint64_t admissions_ = 0;  // answers that admitted a new stream
  std::chrono::steady_clock::time_point last_admission_;

  std::vector<std::thread> threads_;
};

struct ProducedTenant {
  std::string name;
  std::unordered_set<uint64_t> delivered;
  std::unordered_set<uint64_t> failed;  // delivery failed or never reported: maybe on the topic
};

struct ProduceOptions {
  std::string brokers, topic;
  int32_t partitions = 64;
  uint64_t seed = 1;
  uint32_t tenants = 4;
  std::string tenant_prefix = "other-zone-";
  std::string zone = "zone-b";  // not the node's: it applies these records as facts
  double rate = 1000;           // records per second
  double new_fraction = 0.5;    // records naming a stream not produced before
};

class ProduceModel {
 public:
  static Result<std::unique_ptr<ProduceModel>> Start(const ProduceOptions& o);
  ~ProduceModel();
  // Stops producing and waits (up to `timeout`) for every delivery report; what is still
  // unreported counts as failed.
  void Stop(std::chrono::milliseconds timeout);

  uint64_t queued() const { return queued_.load(); }
  uint64_t delivered_records() const { return delivered_records_.load(); }
  uint64_t failed_records() const { return failed_records_.load(); }
  // Read after Stop().
  const std::vector<ProducedTenant>& tenants() const { return tenants_; }

 private:
  class Reports;
  explicit ProduceModel(const ProduceOptions& o);
  void Run();
  uint64_t StreamHash(uint32_t t, uint64_t i) const;

  const ProduceOptions o_;
  std::vector<ProducedTenant> tenants_;
  std::mutex mu_;  // guards tenants_ (written by delivery reports on the producing thread)
  std::unordered_map<uint64_t, uint32_t> pending_;  // (tenant, stream) id -> records queued, not yet reported
  std::unique_ptr<Reports> reports_;
  std::unique_ptr<RdKafka::Producer> producer_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> queued_{0}, delivered_records_{0}, failed_records_{0};
  std::thread thread_;
};

}  // namespace limits::bench
