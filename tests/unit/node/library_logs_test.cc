#include "node/library_logs.h"

#include <gmock/gmock.h>
#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/log.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using ::testing::AllOf;

class LibraryLogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log::Configure(log::Level::kInfo, log::Format::kJson);
    log::SetSinkForTest([this](std::string_view line) { lines_.emplace_back(line); });
    RouteLibraryLogs();
  }
  void TearDown() override { log::SetSinkForTest(nullptr); }
  std::vector<std::string> lines_;
};

TEST_F(LibraryLogsTest, Item23_ProtobufLinesAreOurs) {
  GOOGLE_LOG(WARNING) << "a \"quoted\" protobuf warning";
  GOOGLE_LOG(INFO) << "an info line";
  ASSERT_EQ(lines_.size(), 2u);
  EXPECT_THAT(lines_[0], AllOf(HasSubstr("\"level\":\"warn\",\"component\":\"protobuf\""),
                               HasSubstr("\"msg\":\"a \\\"quoted\\\" protobuf warning\""),
                               HasSubstr("library_logs_test.cc")));
  EXPECT_THAT(lines_[1], HasSubstr("\"level\":\"info\",\"component\":\"protobuf\""));
}

TEST_F(LibraryLogsTest, GrpcLinesAreOursAndFollowOurLevel) {
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_DEBUG);
  gpr_log(GPR_ERROR, "bind failed: %d", 98);
  gpr_log(GPR_DEBUG, "below our level");
  gpr_set_log_verbosity(GPR_LOG_SEVERITY_ERROR);
  ASSERT_EQ(lines_.size(), 1u);
  EXPECT_THAT(lines_[0], AllOf(HasSubstr("\"level\":\"error\",\"component\":\"grpc\""),
                               HasSubstr("\"msg\":\"bind failed: 98\"")));
}

}  // namespace
}  // namespace limits
