// TopicCheck: what the brokers say about the node's topic — at start-up and then in the
// background — so that a wrong kafka.brokers, a missing kafka.topic or a topic limitsd cannot
// use is a clear error naming the key, and /ready says so, instead of a node that looks
// healthy with nothing assigned.
//   reachable  a metadata request for the topic alone (auto-creation off: the probe never
//              creates it with the broker's defaults) answered within `timeout`
//   exists     the topic is in that answer; with `create` (kafka.create_topic) a missing topic
//              is created (CreateTopics: num_partitions, replication factor, cleanup.policy=
//              delete, retention.ms when set); "already exists" (another node won) is fine
//   partitions the topic has num_partitions partitions (stream_hash % num_partitions must
//              name the same partition on both sides)
//   policy     its cleanup.policy is not compacted (records are keyed by tenant: compaction
//              would keep one per tenant, and a replay would lose streams). Read once per
//              appearance with DescribeConfigs, sent to a broker of the metadata; a broker that
//              cannot answer (the mock, no permission, a time-out) leaves it unchecked, logged
// Lifecycle: Create, CheckAtStart (blocking, at most a few timeouts), Start (a thread of its
// own re-checks every retry_interval while something is wrong, every ok_interval while all is
// fine), Stop (within about a second: requests wait in slices of at most 1 s and give up once
// stopping). Problem() and status() are safe from any thread and never touch the network.
#pragma once

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "common/clock.h"
#include "common/result.h"
#include "kafka/kafka_conf.h"

namespace limits::kafka {

struct TopicCheckOptions {
  std::string brokers;  // kafka.brokers
  std::string topic;    // kafka.topic
  std::string client_id;
  Properties properties;  // [kafka.properties]: only connection and security settings apply
  int32_t num_partitions = 64;  // kafka.num_partitions
  // kafka.create_topic and what a topic it creates gets.
  bool create = false;
  int32_t replication_factor = -1;  // -1: the broker's default.replication.factor
  int64_t retention_ms = 0;         // 0: the broker's log.retention.*
  // How long each request may take (metadata, CreateTopics, DescribeConfigs): brokers that
  // answer no metadata request within it are unreachable.
  std::chrono::milliseconds timeout{5000};
  const Clock* clock = &Clock::System();  // for usable_since_ms(); must outlive the check
};

enum class TopicCondition {
  kUnchecked,        // no check finished yet
  kUnreachable,      // no broker answered the metadata request
  kMissing,          // the brokers answered; the topic is not there (and was not created)
  kTopicError,       // the brokers answered with an error for the topic (e.g. not authorized)
  kWrongPartitions,  // the topic's partition count is not num_partitions
  kCompacted,        // cleanup.policy contains "compact"
  kOk,
};

struct TopicStatus {
  TopicCondition condition = TopicCondition::kUnchecked;
  int32_t partitions = -1;  // the topic's partition count, when it exists
  std::string error;        // librdkafka's words, when a request failed
  std::string problem;      // the operator's sentence naming the keys; empty when kOk
};

class TopicCheck {
 public:
  static Result<std::unique_ptr<TopicCheck>> Create(TopicCheckOptions options);
  ~TopicCheck();
  TopicCheck(const TopicCheck&) = delete;
  TopicCheck& operator=(const TopicCheck&) = delete;

  // The first check (creating the topic when configured). FailedPrecondition when the topic
  // exists and cannot be used (compacted, another partition count): refused before the node
  // opens its store or joins the group. Brokers that do not answer, or a missing topic, are
  // logged as errors naming the keys and are not fatal: the node starts, Problem() says why
  // it is not ready, and Start() keeps checking.
  Status CheckAtStart();
  // Re-checks on a thread of its own until Stop(); logs each change of condition.
  void Start(std::chrono::milliseconds retry_interval, std::chrono::milliseconds ok_interval);
  void Stop();

  // Why the node must not be ready (the brokers, the topic), or nullopt. No network.
  std::optional<std::string> Problem() const;
  TopicStatus status() const;
  // When the brokers last began to answer with a usable topic (Clock time); nullopt while they
  // do not. Nothing can be assigned before: the wait for a first assignment starts here.
  std::optional<int64_t> usable_since_ms() const;

 private:
  struct HandleDeleter {
    void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
  };
  TopicCheck(TopicCheckOptions options, rd_kafka_t* rk);

  // One round of requests: metadata, CreateTopics when missing (and configured), the
  // cleanup.policy when not read since the topic appeared. Blocking; one thread at a time.
  TopicStatus Probe();
  // The topic's partition count (-1: missing) from a metadata request, or the request's error.
  struct Metadata {
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;  // the request's
    rd_kafka_resp_err_t topic_err = RD_KAFKA_RESP_ERR_NO_ERROR;
    int32_t partitions = -1;
    int32_t broker = -1;  // a broker of the answer, for DescribeConfigs
  };
  Metadata ReadMetadata();
  // CreateTopics; OK also when the topic already exists.
  Status CreateTopic();
  // cleanup.policy; nullopt when the brokers could not tell (logged).
  std::optional<std::string> ReadCleanupPolicy(int32_t broker);
  // An admin request's result event from `queue`, waited for in slices; null on time-out or stop.
  rd_kafka_event_t* AwaitAdminResult(rd_kafka_queue_t* queue);
  void Publish(TopicStatus next);
  void Poll();
  // Waits `d`; false (at once) when Stop() was called.
  bool Pause(std::chrono::milliseconds d);

  const TopicCheckOptions options_;
  std::unique_ptr<rd_kafka_t, HandleDeleter> rk_;
  // Poll thread only (or the starting thread before Start()).
  bool policy_read_ = false;  // the topic's cleanup.policy was read (or could not be) since it appeared
  std::string policy_;        // what was read; empty when unknown
  std::chrono::steady_clock::time_point last_probe_;
  std::chrono::milliseconds ok_interval_{30'000};
  std::thread thread_;

  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // GUARDED_BY(stop_mu_)

  mutable std::mutex mu_;
  TopicStatus status_;  // GUARDED_BY(mu_)
  std::optional<int64_t> usable_since_ms_;  // GUARDED_BY(mu_)
};

}  // namespace limits::kafka
