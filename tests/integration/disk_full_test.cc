// A store on a full disk (a small tmpfs): issue 8, items 15 and 16. The node whose writes fail
// leaves the consumer group, answers UNAVAILABLE, logs the failure once, and reports not-live
// after store.failure_grace; a restart on the still-full disk fails cleanly, naming the path,
// instead of aborting inside RocksDB. Needs root (mount); skipped with the reason otherwise.
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <regex>

#include "common/clock.h"
#include "node/node.h"
#include "proto/limits.grpc.pb.h"
#include "testing/http_client.h"
#include "testing/limitsd_process.h"
#include "testing/node_partitions.h"
#include "testing/temp_dir.h"
#include "testing/test_kafka.h"
#include "testing/wait_for.h"

namespace limits {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using testing::HttpGet;
using testing::WaitFor;

constexpr int32_t kPartitions = 4;

class DiskFullTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mount_ = dir_.Sub("full");
    std::filesystem::create_directories(mount_);
    if (mount("tmpfs", mount_.c_str(), "tmpfs", 0, "size=3m") != 0) {
      GTEST_SKIP() << "cannot mount a small tmpfs to fill (" << std::strerror(errno) << "; needs root)";
    }
    mounted_ = true;
  }
  void TearDown() override {
    if (mounted_) umount2(mount_.c_str(), MNT_DETACH);
  }

  // Takes whatever space the failed node's writes left: how much that is depends on where its
  // last write stopped, and a restart that found room for its open would fail only later.
  void FillRemainingSpace() {
    std::FILE* f = std::fopen((mount_ + "/filler").c_str(), "w");
    ASSERT_NE(f, nullptr) << std::strerror(errno);
    const std::string chunk(512, 'x');
    while (std::fwrite(chunk.data(), 1, chunk.size(), f) == chunk.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }

  size_t Count(const std::string& log, const std::string& needle) {
    size_t n = 0;
    for (size_t at = log.find(needle); at != std::string::npos; at = log.find(needle, at + 1)) ++n;
    return n;
  }

  testing::TempDir dir_;
  std::string mount_;
  bool mounted_ = false;
  testing::TestKafka kafka_{kPartitions};
};

TEST_F(DiskFullTest, Item15_Item16_AFullDiskFailsCleanlyAndHandsThePartitionsOver) {
  const int64_t now = Clock::System().NowMillis();
  // Far more rows than the 3 MB disk holds even when each is written once (~30 B a row in the
  // WAL alone): with 120 000 a replay that finished within one flush interval could fit.
  for (uint64_t i = 0; i < 300'000; ++i) {
    kafka_.Produce("t", i, now - 1000);
    if (i % 50'000 == 0) kafka_.Flush();
  }
  kafka_.Flush();
  const config::Config c = kafka_.NodeConfig(mount_, "zone-a", "full");
  const std::vector<std::string> extra = {"store.failure_grace=3s", "store.write_buffer=1MiB",
                                          "store.block_cache=1MiB"};
  {
    testing::LimitsdProcess node(LIMITSD, c, dir_.Sub("first.log"), extra);
    ASSERT_TRUE(WaitFor([&] { return node.Log().find("\"msg\":\"write failed\"") != std::string::npos; }, 90s))
        << node.Log().substr(0, 4000);
    // Item 16: it leaves the group at once and stays live only for the grace.
    ASSERT_TRUE(WaitFor([&] { return node.Log().find("leaving the consumer group") != std::string::npos; }, 10s));
    const int port = node.HttpPort();
    ASSERT_GT(port, 0);
    EXPECT_EQ(HttpGet(port, "/ready").status, 503);
    ASSERT_TRUE(WaitFor([&] { return HttpGet(port, "/live").status == 503; }, 20s))
        << node.Log().substr(node.Log().size() > 6000 ? node.Log().size() - 6000 : 0);
    EXPECT_THAT(HttpGet(port, "/live").body, HasSubstr("store failed"));
    // Requests are UNAVAILABLE with the store's error (not reason 1 for every stream), and
    // nothing is listed as assigned.
    auto stub = proto::IngestLimits::NewStub(grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(node.GrpcPort()), grpc::InsecureChannelCredentials()));
    proto::ExceedsLimitsRequest req;
    req.set_tenant("t");
    req.add_streams()->set_streamhash(1);
    proto::ExceedsLimitsResponse resp;
    grpc::ClientContext ctx;
    const grpc::Status st = stub->ExceedsLimits(&ctx, req, &resp);
    EXPECT_EQ(st.error_code(), grpc::UNAVAILABLE);
    EXPECT_THAT(st.error_message(), HasSubstr("usage store write failed"));
    proto::GetAssignedPartitionsResponse assigned;
    grpc::ClientContext actx;
    ASSERT_TRUE(stub->GetAssignedPartitions(&actx, {}, &assigned).ok());
    EXPECT_EQ(assigned.assignedpartitions_size(), 0);
    // Another node of the group takes every partition over while the failed one still runs.
    config::Config healthy = kafka_.NodeConfig(dir_.Sub("healthy"), "zone-a", "healthy");
    Result<std::unique_ptr<Node>> other = Node::Start(healthy);
    ASSERT_TRUE(other.ok()) << other.status().ToString();
    EXPECT_TRUE(WaitFor([&] { return testing::AllReady(**other, kPartitions); }, 60s));
    (*other)->Stop();
    // Logged once per state change, not per batch: a few lines, however long it runs.
    const size_t errors = Count(node.Log(), "\"level\":\"error\"");
    EXPECT_LE(errors, 10u) << node.Log().substr(node.Log().size() > 4000 ? node.Log().size() - 4000 : 0);
    node.Kill(SIGKILL);
  }
  FillRemainingSpace();
  // Item 15: a restart on the still-full disk ends with an error naming the path.
  testing::LimitsdProcess again(LIMITSD, c, dir_.Sub("second.log"), extra);
  ASSERT_TRUE(WaitFor([&] { return again.Exited().has_value(); }, 60s)) << again.Log();
  const int status = *again.Exited();
  EXPECT_FALSE(WIFSIGNALED(status)) << "killed by signal " << WTERMSIG(status) << "\n" << again.Log();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << again.Log();
  EXPECT_THAT(again.Log(), HasSubstr(c.store.path));
  EXPECT_THAT(again.Log(), HasSubstr("No space left on device"));
  const std::string log = again.Log();
  const size_t at = log.find("\"level\":\"error\"");
  std::printf("item 15: restart on the full disk: %s\n", at == std::string::npos ? log.c_str() : log.substr(at, 400).c_str());
}

}  // namespace
}  // namespace limits
