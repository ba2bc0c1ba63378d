// The limitsd binary's command line: help, version, --check-config exit codes and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>

#include "config/load_config.h"
#include "testing/limitsd_process.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/wait_for.h"

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

// What manifests write: --flag=value for every flag, and --check-config appended to the
// container's own arguments to check exactly what the pod would run.
TEST(LimitsdCliTest, FlagsTakeBothForms) {
  const std::string example = EXAMPLE_CONFIG;
  for (const std::vector<std::string>& argv :
       {std::vector<std::string>{LIMITSD, "--check-config=" + example, "--set=node.instance_id=pod-0"},
        std::vector<std::string>{LIMITSD, "--check-config", example, "--set", "node.instance_id=pod-0"},
        std::vector<std::string>{LIMITSD, "--config=" + example, "--set=node.instance_id=pod-0", "--check-config"},
        std::vector<std::string>{LIMITSD, "--config", example, "--check-config", "--set", "node.instance_id=pod-0"}}) {
    testing::RunResult r = RunProgram(argv);
    EXPECT_EQ(r.exit_code, 0) << argv[1] << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr(example + ": valid\n"));
    EXPECT_THAT(r.out, HasSubstr("zone=zone-a consumer_group=limitsd-zone-a instance_id=pod-0 brokers=embedded"));
  }
  // --set=key=value splits at the first '=' only.
  testing::RunResult set = RunProgram({LIMITSD, "--check-config", "--set=kafka.brokers=k:9092", "--set=node.zone=zone-c"});
  EXPECT_EQ(set.exit_code, 0) << set.err;
  EXPECT_THAT(set.out, HasSubstr("built-in defaults: valid"));
  EXPECT_THAT(set.out, HasSubstr("zone=zone-c consumer_group=limitsd-zone-c"));
  EXPECT_THAT(set.out, HasSubstr("brokers=k:9092"));
  testing::RunResult two_files = RunProgram({LIMITSD, "--config=a.toml", "--check-config=b.toml"});
  EXPECT_EQ(two_files.exit_code, 2);
  EXPECT_THAT(two_files.err, HasSubstr("name different files"));
  EXPECT_EQ(RunProgram({LIMITSD, "--version=1"}).exit_code, 2);
  EXPECT_EQ(RunProgram({LIMITSD, "--set"}).exit_code, 2);
  testing::RunResult missing = RunProgram({LIMITSD, "--config=/nonexistent/limitsd.toml", "--check-config"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("/nonexistent/limitsd.toml"));
}

// librdkafka properties are checked too, naming the section, and each goes only to the
// client librdkafka applies it to (no CONFWARN).
TEST(LimitsdCliTest, KafkaPropertiesAreCheckedPerClient) {
  testing::RunResult ok = RunProgram({LIMITSD, "--check-config", "--set=kafka.properties.session.timeout.ms=30000",
                                      "--set=kafka.properties.linger.ms=50",
                                      "--set=kafka.consumer_properties.fetch.wait.max.ms=20"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  testing::RunResult wrong = RunProgram({LIMITSD, "--check-config", "--set=kafka.consumer_properties.linger.ms=5"});
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_THAT(wrong.err, HasSubstr("kafka.consumer_properties.\"linger.ms\": a producer property"));
  testing::RunResult unknown = RunProgram({LIMITSD, "--check-config", "--set=kafka.properties.no.such=1"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_THAT(unknown.err, HasSubstr("kafka.properties.\"no.such\""));
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

// Issue 8 item 22: each of these said "valid", and the node then ran on defaults, failed at
// start, or misbehaved. Now --check-config (and --config, before anything starts) exits 2
// naming the key.
TEST(LimitsdCliTest, Item22_CheckConfigRefusesWhatTheNodeWouldFailOrMisbehaveOn) {
  testing::TempDir dir;
  auto refused = [](const std::vector<std::string>& args, const std::string& expected) {
    testing::RunResult r = RunProgram(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(expected));
  };
  // --config given a directory ran on every default: the embedded mock, store "data", 0.0.0.0.
  refused({LIMITSD, "--check-config", dir.path()}, "cannot read " + dir.path() + ": is a directory");
  refused({LIMITSD, "--config", dir.path()}, "is a directory");
  // librdkafka's properties: unknown, a bad value, one the node owns (named with its key).
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "kafka.properties.no.such.property=1"},
          "kafka.properties.\"no.such.property\": No such configuration property");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "kafka.properties.fetch.wait.max.ms=soon"},
          "kafka.properties.\"fetch.wait.max.ms\": Invalid value");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "kafka.properties.partition.assignment.strategy=range"},
          "kafka.properties.\"partition.assignment.strategy\": set by the node");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "kafka.properties.group.id=other"},
          "set kafka.consumer_group instead");
  refused({LIMITSD, "--config", EXAMPLE_CONFIG, "--set", "kafka.properties.bootstrap.servers=k:9092"},
          "set kafka.brokers instead");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "kafka.properties.security.protocol=SASL_SSL",
           "--set", "kafka.properties.sasl.mechanisms=PLAIN"},
          "librdkafka refuses the consumer configuration: sasl.username and sasl.password must be set");
  // The overrides file: invalid, or a directory.
  const std::string overrides = dir.Sub("overrides.toml");
  std::ofstream(overrides) << "[tenants.t]\nmax_global_streams_per_user = \"x\"\n";
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "limits.overrides_file=" + overrides},
          "limits.overrides_file: tenants.t.max_global_streams_per_user: expected an integer");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "limits.overrides_file=" + dir.path()},
          "limits.overrides_file: cannot read " + dir.path() + ": is a directory");
  const std::string yaml = dir.Sub("runtime.yaml");
  std::ofstream(yaml) << "overrides:\n  t:\n    ingestion_rate_mb: fast\n";
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "limits.overrides_file=" + yaml},
          "overrides.t.ingestion_rate_mb: expected a number, got \"fast\" (" + yaml + ":3)");
  // One port for both servers; names no request can carry.
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "server.grpc_listen=:9095", "--set",
           "server.http_listen=0.0.0.0:9095"},
          "server.http_listen: port 9095 is also server.grpc_listen's");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "limits.tenants.\"\".max_global_streams_per_user=1"},
          "a tenant name must be 1 to 255 bytes, got 0");
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set",
           "limits.defaults.policy_max_streams." + std::string(256, 'p') + "=1"},
          "an ingestion policy name must be 1 to 255 bytes, got 256");
  // Beyond what the store keeps (item 8).
  refused({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "windows.active=1193047h"},
          "windows.active: must be at most 1193046h28m15s");
  // And what stays valid: a missing overrides file (it may appear later), Loki's YAML.
  std::ofstream(yaml) << "overrides:\n  t:\n    ingestion_rate_mb: 2\n";
  for (const std::string& file : {dir.Sub("absent.toml"), yaml}) {
    testing::RunResult ok = RunProgram({LIMITSD, "--check-config", EXAMPLE_CONFIG, "--set", "limits.overrides_file=" + file});
    EXPECT_EQ(ok.exit_code, 0) << file << ": " << ok.err;
  }
}

}  // namespace
}  // namespace limits

namespace limits {
namespace {

// Issue 24, item 7: gRPC binds with SO_REUSEPORT by default, so a second node on one host's
// :9095 started fine and the kernel split the frontend's calls between the two, silently.
// A port another process holds (with SO_REUSEPORT, as a gRPC server holds it) is refused,
// and the error names the key.
TEST(LimitsdCliTest, Item7_AGrpcPortAnotherProcessHoldsIsRefusedNamingTheKey) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  int one = 1;
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one), 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(fd, 16), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  const std::string port = std::to_string(ntohs(addr.sin_port));
  testing::TempDir dir;
  // Under `timeout`: a node that does start (sharing the port) is ended after 30 s (exit 124).
  testing::RunResult r = RunProgram({"/usr/bin/timeout", "30", LIMITSD, "--config", EXAMPLE_CONFIG, "--set",
                                     "store.path=" + dir.Sub("db"),
                                     "--set", "server.http_listen=127.0.0.1:0", "--set",
                                     "server.grpc_listen=127.0.0.1:" + port});
  close(fd);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.exit_code, 124) << "the node started on a port another process holds";
  EXPECT_THAT(r.err, HasSubstr("server.grpc_listen 127.0.0.1:" + port));
}

// Issue 26: a second node on the first one's data directory failed with RocksDB's bare
// "data/LOCK: Resource temporarily unavailable". The error names store.path, says another
// process holds it, and what to do. Both on the embedded cluster, as README's first command.
TEST(LimitsdCliTest, Issue26_ASecondNodeOnOneDataDirectoryNamesStorePathAndTheOtherProcess) {
  testing::TempDir dir;
  Result<config::Config> c = config::ParseConfig("", "test");
  ASSERT_TRUE(c.ok());
  c->store.path = dir.Sub("data");
  c->node.instance_id = "first";
  testing::LimitsdProcess first(LIMITSD, *c, dir.Sub("first.log"));
  ASSERT_TRUE(testing::WaitFor([&] { return first.HttpPort() != 0; }, std::chrono::seconds(30))) << first.Log();

  testing::RunResult second = RunProgram({"/usr/bin/timeout", "30", LIMITSD, "--config", EXAMPLE_CONFIG, "--set",
                                          "store.path=" + c->store.path, "--set", "node.instance_id=second", "--set",
                                          "server.http_listen=127.0.0.1:0", "--set", "server.grpc_listen=127.0.0.1:0"});
  EXPECT_EQ(second.exit_code, 1) << second.err;
  // JSON escapes the quotes.
  EXPECT_THAT(second.err, HasSubstr("store.path \\\"" + c->store.path + "\\\" is in use: another process holds its lock"));
  EXPECT_THAT(second.err, HasSubstr("a limitsd already running on this data directory"));
  EXPECT_THAT(second.err, HasSubstr("Stop that process first, or give this node a store.path of its own"));
  EXPECT_THAT(second.err, HasSubstr("Resource temporarily unavailable"));  // RocksDB's words, kept
  EXPECT_FALSE(first.Exited()) << "the first node is undisturbed";
}

}  // namespace
}  // namespace limits
