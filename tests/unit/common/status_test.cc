#include "common/result.h"
#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace limits {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_EQ(s, Status::OK());
}

TEST(StatusTest, PrefixedAddsContextPerHop) {
  Status s = Status::Corruption("short value").Prefixed("checkpoint of p00017").Prefixed("open data");
  EXPECT_TRUE(s.IsCorruption());
  EXPECT_EQ(s.message(), "open data: checkpoint of p00017: short value");
  EXPECT_EQ(s.ToString(), "Corruption: open data: checkpoint of p00017: short value");
}

TEST(StatusTest, PrefixedLeavesOkAlone) { EXPECT_TRUE(Status::OK().Prefixed("ctx").ok()); }

Status FailsWhen(bool fail) { return fail ? Status::IOError("disk") : Status::OK(); }

Status Chain(bool fail, int* reached) {
  RETURN_IF_ERROR(FailsWhen(fail));
  ++*reached;
  return Status::OK();
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  int reached = 0;
  EXPECT_TRUE(Chain(false, &reached).ok());
  EXPECT_EQ(reached, 1);
  EXPECT_EQ(Chain(true, &reached).code(), StatusCode::kIOError);
  EXPECT_EQ(reached, 1);
}

Result<std::unique_ptr<int>> MakeInt(bool fail) {
  if (fail) return Status::NotFound("no int");
  return std::make_unique<int>(7);
}

Status UseInt(bool fail, int* out) {
  ASSIGN_OR_RETURN(std::unique_ptr<int> v, MakeInt(fail));
  *out = *v;
  return Status::OK();
}

TEST(ResultTest, HoldsValueOrStatus) {
  Result<std::unique_ptr<int>> ok = MakeInt(false);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(**ok, 7);
  EXPECT_TRUE(ok.status().ok());
  Result<std::unique_ptr<int>> bad = MakeInt(true);
  EXPECT_FALSE(bad.ok());
  EXPECT_TRUE(bad.status().IsNotFound());
}

TEST(ResultTest, AssignOrReturnMovesTheValueOut) {
  int out = 0;
  EXPECT_TRUE(UseInt(false, &out).ok());
  EXPECT_EQ(out, 7);
  EXPECT_TRUE(UseInt(true, &out).IsNotFound());
}

TEST(ResultDeathTest, ValueOfAnErrorAborts) {
  Result<int> bad = Status::Internal("boom");
  EXPECT_DEATH((void)bad.value(), "boom");
}

}  // namespace
}  // namespace limits
