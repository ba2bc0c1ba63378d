// The realkafka tests' shared parts: ONE real Kafka broker per test binary (a global test
// environment, so the whole label costs one JVM start), a fixture giving each test its own
// topic and consumer groups (tests never see each other's records or members), node
// configurations tuned for a real group coordinator, and a limitsd process for SIGKILL.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "node/node.h"
#include "testing/limitsd_process.h"
#include "testing/node_log.h"
#include "testing/node_partitions.h"
#include "testing/real_kafka.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"

namespace limits::realkafka {

inline constexpr int32_t kPartitions = 4;

// The binary's broker; started before the first test, stopped after the last.
testing::RealKafka& Broker();

int64_t NowMs();
// Streams hashed into `partition`: hash = n * partitions + partition.
uint64_t HashIn(int32_t partition, uint64_t n);

using testing::AllReady;
using testing::AssignedPartitions;
using testing::Generations;
using testing::ReadyPartitions;
// partition -> next offset of the checkpoints persisted in the database at `db` (limitsctl,
// which reads beside a running node; /partitions shows memory, which may be ahead).
std::map<int32_t, int64_t> CheckpointsOnDisk(const std::string& db);

class RealKafkaTest : public ::testing::Test {
 protected:
  // Creates this test's topic (kPartitions, with `topic_configs`), unless create_topic_ is false.
  void SetUp() override;

  // The node configuration for `name` in `zone` against this test's topic: the group is
  // unique to the test, session timeouts low enough for a SIGKILL test (a killed member's
  // partitions move after session.timeout.ms).
  config::Config NodeConfig(const std::string& name, const std::string& zone = "zone-a") const;
  std::unique_ptr<Node> Start(const std::string& name, const std::string& zone = "zone-a",
                              const std::function<void(config::Config&)>& tweak = nullptr);
  uint64_t Streams(Node& node, const std::string& tenant, const PartitionSet& partitions);
  testing::TestKafka& kafka() { return *kafka_; }

  std::map<std::string, std::string> topic_configs_;  // set before SetUp() runs
  bool create_topic_ = true;  // false (before SetUp() runs): topic_ is named, not created
  std::string topic_;
  testing::TempDir dir_;
  std::unique_ptr<testing::TestKafka> kafka_;
  const PartitionSet all_ = PartitionSet::All(kPartitions);
};

// The limitsd binary of this build as a process (SIGKILL needs a process boundary).
class LimitsdProcess : public testing::LimitsdProcess {
 public:
  LimitsdProcess(const config::Config& c, const std::string& log_path) : testing::LimitsdProcess(LIMITSD, c, log_path) {}
};

}  // namespace limits::realkafka
