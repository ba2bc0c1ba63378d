// The limitsd binary's command line: help, version, --check-config exit codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using testing::RunProgram;

TEST(LimitsdCliTest, HelpAndVersion) {
  testing::RunResult help = RunProgram({LIMITSD, "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_THAT(help.out, HasSubstr("--check-config FILE"));
  testing::RunResult version = RunProgram({LIMITSD, "--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_THAT(version.out, HasSubstr("limitsd "));
  EXPECT_EQ(RunProgram({LIMITSD, "--frobnicate"}).exit_code, 2);
  EXPECT_EQ(RunProgram({LIMITSD, "--config"}).exit_code, 2);
}

TEST(LimitsdCliTest, CheckConfigExitsZeroOnTheShippedExample) {
  testing::RunResult r = RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("valid"));
}

// The Kubernetes ConfigMap's embedded TOML must stay valid as the keys evolve.
TEST(LimitsdCliTest, TheKubernetesConfigMapIsValid) {
  std::ifstream in(K8S_CONFIGMAP);
  ASSERT_TRUE(in);
  std::string line, toml;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.find("limitsd.toml: |") != std::string::npos) {
      inside = true;
    } else if (inside) {
      if (!line.empty() && line.rfind("    ", 0) != 0) break;
      toml += (line.size() >= 4 ? line.substr(4) : "") + "\n";
    }
  }
  ASSERT_FALSE(toml.empty());
  testing::TempDir dir;
  const std::string path = dir.Sub("k8s.toml");
  std::ofstream(path) << toml;
  testing::RunResult r = RunProgram({LIMITSD, "--check-config", path, "--set", "node.instance_id=limitsd-zone-a-0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(LimitsdCliTest, BadConfigExitsTwoNamingTheKey) {
  testing::TempDir dir;
  const std::string path = dir.Sub("bad.toml");
  std::ofstream(path) << "[windows]\nrate = \"7m\"\nbucket = \"2m\"\n[kafka]\nnum_partitions = 0\n";
  testing::RunResult r = RunProgram({LIMITSD, "--check-config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("kafka.num_partitions: must be between 1 and 100000, got 0"));
  // Running with it fails the same way, before touching anything.
  r = RunProgram({LIMITSD, "--config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("kafka.num_partitions"));
  r = RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "windows.active=soon"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("windows.active: invalid duration \"soon\""));
}

}  // namespace
}  // namespace limits
