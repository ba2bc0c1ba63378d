// limitsctl's text output with names that are not plain ASCII (issue 8 item 13): a tenant or
// policy name comes from the wire, and must neither drive the terminal nor break the table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/utf8.h"
#include "limits/usage/usage_store.h"
#include "storage/db.h"
#include "testing/fake_clock.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"

namespace limits {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr int64_t kNowMs = 1'764'000'000'000;

TEST(LimitsctlTextTest, Item13_ControlCharactersInNamesAreEscapedUtf8PassesThrough) {
  testing::TempDir dir;
  const std::string path = dir.Sub("db");
  {
    testing::FakeClock clock(kNowMs);
    storage::DbOptions o;
    o.path = path;
    o.clock = &clock;
    auto db = storage::Db::Open(o);
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    UsageStoreOptions so;
    so.num_partitions = 2;
    so.clock = &clock;
    auto store = UsageStore::Open(**db, so);
    ASSERT_TRUE(store.ok());
    std::vector<Record> records = {
        {.tenant = "evil\x1b[2J\x07", .stream_hash = 1, .bytes = 1, .policy = "p\x9b", .timestamp_ms = kNowMs, .offset = 0},
        {.tenant = "t\xC3\xA9n\xC3\xA4nt", .stream_hash = 3, .bytes = 1, .policy = "\xC2\x9b" "31m", .timestamp_ms = kNowMs,
         .offset = 1},
        {.tenant = "back\\slash\r\n", .stream_hash = 5, .bytes = 1, .policy = "", .timestamp_ms = kNowMs, .offset = 2},
        {.tenant = "raw\xff", .stream_hash = 7, .bytes = 1, .policy = "", .timestamp_ms = kNowMs, .offset = 3},
    };
    ASSERT_TRUE((*store)->Apply(1, records, 4).ok());
  }
  const std::string now = std::to_string(kNowMs / 1000);
  testing::RunResult r = testing::RunProgram({LIMITSCTL, "--db", path, "--now", now, "tenants"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("evil\\x1b[2J\\x07"));
  EXPECT_THAT(r.out, HasSubstr("t\xC3\xA9n\xC3\xA4nt"));  // valid UTF-8 as it is
  EXPECT_THAT(r.out, HasSubstr("back\\\\slash\\x0d\\x0a"));
  // A policy that is not UTF-8 is counted under no policy (issue 24: no such name is kept);
  // a tenant that is not UTF-8 is escaped.
  EXPECT_THAT(r.out, HasSubstr("raw\\xff"));
  EXPECT_THAT(r.out, HasSubstr("\\xc2\\x9b31m=1/1"));  // C1 CSI, valid UTF-8 but a control
  EXPECT_THAT(r.out, Not(HasSubstr("\x1b")));
  EXPECT_THAT(r.out, Not(HasSubstr("\r")));
  EXPECT_TRUE(IsValidUtf8(r.out));
  // Columns still line up: the count under ACTIVE starts in ACTIVE's column (counted in
  // characters, so the two-byte letters of the UTF-8 name count once).
  auto column = [](const std::string& line, size_t byte) {
    size_t n = 0;
    for (size_t i = 0; i < byte; ++i) n += (static_cast<unsigned char>(line[i]) & 0xC0) != 0x80;
    return n;
  };
  const std::string header = r.out.substr(0, r.out.find('\n'));
  const size_t row_start = r.out.find("t\xC3\xA9n\xC3\xA4nt");
  ASSERT_NE(row_start, std::string::npos);
  const std::string row = r.out.substr(row_start, r.out.find('\n', row_start) - row_start);
  const size_t name_end = std::string("t\xC3\xA9n\xC3\xA4nt").size();
  const size_t count = row.find_first_not_of(' ', name_end);
  EXPECT_EQ(column(row, count), column(header, header.find("ACTIVE"))) << header << "\n" << row;
  testing::RunResult streams =
      testing::RunProgram({LIMITSCTL, "--db", path, "--now", now, "streams", "--tenant", "evil\x1b[2J\x07"});
  ASSERT_EQ(streams.exit_code, 0) << streams.err;
  EXPECT_THAT(streams.out, Not(HasSubstr("p\\x9b")));
  EXPECT_THAT(streams.out, Not(HasSubstr("\x1b")));
}

// Issue 8 item 8 in the tool: --active-window went through the same uint32 cast.
TEST(LimitsctlTextTest, Item8_AnActiveWindowBeyond32BitSecondsIsRefused) {
  testing::TempDir dir;
  testing::RunResult r =
      testing::RunProgram({LIMITSCTL, "--db", dir.Sub("db"), "--active-window", "1193047h", "tenants"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_THAT(r.err, HasSubstr("--active-window 1193047h: expected whole seconds up to 1193046h28m15s"));
}

}  // namespace
}  // namespace limits
