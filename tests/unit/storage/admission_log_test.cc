#include "storage/admission_log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "testing/temp_dir.h"

namespace limits::storage {
namespace {

using Entry = std::tuple<int32_t, std::string, uint64_t, std::string, uint32_t>;

std::vector<Entry> ReadAll(const std::string& dir, AdmissionLogStats* stats = nullptr) {
  auto log = AdmissionLog::Open(dir, /*read_only=*/true);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  std::vector<Entry> out;
  AdmissionLogStats local;
  EXPECT_TRUE((*log)->Read([&](const AdmittedStream& e) {
    out.emplace_back(e.partition, std::string(e.tenant), e.stream_hash, std::string(e.policy), e.seen_s);
  }, stats ? stats : &local).ok());
  return out;
}

// One admission of tenant "t" under the default policy.
std::vector<AdmittedStream> One(int32_t partition, uint64_t hash) {
  return {{.partition = partition, .tenant = "t", .stream_hash = hash, .policy = "", .seen_s = 0}};
}

std::vector<std::string> Files(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& f : std::filesystem::directory_iterator(dir)) names.push_back(f.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(AdmissionLogTest, WhatWasAppendedIsReadBackInOrderByTheNextProcess) {
  testing::TempDir dir;
  const std::string path = dir.Sub("admissions");
  {
    auto log = AdmissionLog::Open(path, false);
    ASSERT_TRUE(log.ok());
    const std::string policy(255, 'p');
    std::vector<AdmittedStream> first = {{.partition = 3, .tenant = "t", .stream_hash = 7, .policy = "", .seen_s = 100},
                                         {.partition = 63, .tenant = std::string_view("tenant-b"),
                                          .stream_hash = UINT64_MAX, .policy = policy, .seen_s = UINT32_MAX}};
    ASSERT_TRUE((*log)->Append(first).ok());
    ASSERT_TRUE((*log)->Append(std::vector<AdmittedStream>{{.partition = 0, .tenant = "t", .stream_hash = 1,
                                                            .policy = "gold", .seen_s = 101}}).ok());
    EXPECT_EQ((*log)->appended_records(), 2u);
    // No Trim: the process "crashes" here.
  }
  AdmissionLogStats stats;
  EXPECT_EQ(ReadAll(path, &stats),
            (std::vector<Entry>{{3, "t", 7, "", 100},
                                {63, "tenant-b", UINT64_MAX, std::string(255, 'p'), UINT32_MAX},
                                {0, "t", 1, "gold", 101}}));
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.corrupt_records, 0u);
}

// A flush rotates first, then trims what it covered: appends after the rotation survive.
TEST(AdmissionLogTest, TrimDeletesOnlyWhatTheRotationSealed) {
  testing::TempDir dir;
  const std::string path = dir.Sub("admissions");
  {
    auto log = AdmissionLog::Open(path, false);
    ASSERT_TRUE(log.ok());
    AdmissionLog& l = **log;
    EXPECT_FALSE(l.Rotate().has_value());  // nothing appended: nothing to trim
    ASSERT_TRUE(l.Append(One(0, 1)).ok());
    const std::optional<uint64_t> sealed = l.Rotate();
    ASSERT_TRUE(sealed.has_value());
    ASSERT_TRUE(l.Append(One(0, 2)).ok());
    EXPECT_EQ(Files(path).size(), 2u);
    ASSERT_TRUE(l.Trim(*sealed).ok());
    EXPECT_EQ(Files(path).size(), 1u);
  }
  EXPECT_EQ(ReadAll(path), (std::vector<Entry>{{0, "t", 2, "", 0}}));
  // The next process appends after what it found, and its first trim removes the old file.
  auto log = AdmissionLog::Open(path, false);
  ASSERT_TRUE(log.ok());
  ASSERT_TRUE((*log)->Append(One(1, 3)).ok());
  EXPECT_EQ(ReadAll(path), (std::vector<Entry>{{0, "t", 2, "", 0}, {1, "t", 3, "", 0}}));
  const std::optional<uint64_t> sealed = (*log)->Rotate();
  ASSERT_TRUE(sealed.has_value());
  ASSERT_TRUE((*log)->Trim(*sealed).ok());
  EXPECT_EQ(Files(path).size(), 1u);  // the next file, opened by the rotation, empty
  EXPECT_TRUE(ReadAll(path).empty());
}

// Files are opened at Open and by Rotate, never by Append: when the next file cannot be
// opened (out of descriptors; here a directory in its place), appends go on to the current
// one, which a later rotation seals.
TEST(AdmissionLogTest, ARotationThatCannotOpenTheNextFileKeepsAppendingToTheCurrentOne) {
  testing::TempDir dir;
  const std::string path = dir.Sub("admissions");
  auto log = AdmissionLog::Open(path, false);
  ASSERT_TRUE(log.ok());
  AdmissionLog& l = **log;
  ASSERT_EQ(Files(path).size(), 1u);
  ASSERT_TRUE(l.Append(One(0, 1)).ok());
  const std::string blocker = path + "/00000000000000000002.log";
  ASSERT_TRUE(std::filesystem::create_directory(blocker));
  EXPECT_FALSE(l.Rotate().has_value());  // nothing sealed
  EXPECT_EQ(l.failures(), 1u);
  ASSERT_TRUE(l.Append(One(0, 2)).ok());
  std::filesystem::remove(blocker);
  const std::optional<uint64_t> sealed = l.Rotate();
  ASSERT_EQ(sealed, std::optional<uint64_t>(1));
  ASSERT_TRUE(l.Append(One(0, 3)).ok());
  EXPECT_EQ(ReadAll(path), (std::vector<Entry>{{0, "t", 1, "", 0}, {0, "t", 2, "", 0}, {0, "t", 3, "", 0}}));
  ASSERT_TRUE(l.Trim(*sealed).ok());
  EXPECT_EQ(ReadAll(path), (std::vector<Entry>{{0, "t", 3, "", 0}}));
}

TEST(AdmissionLogTest, AFailedAppendIsCountedAndWritesNothing) {
  testing::TempDir dir;
  const std::string path = dir.Sub("admissions");
  auto log = AdmissionLog::Open(path, false);
  ASSERT_TRUE(log.ok());
  (*log)->FailNextAppendsForTest(1);
  EXPECT_FALSE((*log)->Append(One(0, 1)).ok());
  EXPECT_EQ((*log)->failures(), 1u);
  ASSERT_TRUE((*log)->Append(One(0, 2)).ok());
  EXPECT_EQ(ReadAll(path), (std::vector<Entry>{{0, "t", 2, "", 0}}));
}

// A crash in the middle of a write (or a full disk) leaves a torn record; a flipped byte fails
// the checksum. Either ends that file's reading; the records before it stand.
TEST(AdmissionLogTest, ATornOrCorruptRecordEndsItsFileAndIsCounted) {
  std::string bytes;
  std::vector<AdmittedStream> one = {{.partition = 1, .tenant = "t", .stream_hash = 9, .policy = "p", .seen_s = 5}};
  AdmissionLog::EncodeRecord(one, &bytes);
  const size_t record = bytes.size();
  AdmissionLog::EncodeRecord(one, &bytes);
  auto decode = [](std::string_view b) {
    AdmissionLogStats stats;
    size_t n = 0;
    AdmissionLog::DecodeRecords(b, [&](const AdmittedStream&) { ++n; }, &stats);
    return std::pair(n, stats.corrupt_records);
  };
  EXPECT_EQ(decode(bytes), std::pair(size_t{2}, uint64_t{0}));
  for (size_t cut = record + 1; cut < bytes.size(); ++cut) {
    EXPECT_EQ(decode(std::string_view(bytes).substr(0, cut)), std::pair(size_t{1}, uint64_t{1})) << cut;
  }
  for (size_t i = record + 8; i < bytes.size(); ++i) {  // any payload byte of the second record
    std::string flipped = bytes;
    flipped[i] = static_cast<char>(flipped[i] ^ 0x40);
    EXPECT_EQ(decode(flipped), std::pair(size_t{1}, uint64_t{1})) << i;
  }
  // A length that claims more than any record may hold.
  std::string huge = bytes.substr(0, record) + std::string("\xff\xff\xff\xff\0\0\0\0", 8);
  EXPECT_EQ(decode(huge), std::pair(size_t{1}, uint64_t{1}));
}

TEST(AdmissionLogTest, ConcurrentAppendsNeverInterleave) {
  testing::TempDir dir;
  const std::string path = dir.Sub("admissions");
  {
    auto log = AdmissionLog::Open(path, false);
    ASSERT_TRUE(log.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        const std::string tenant = "tenant-" + std::to_string(t);
        for (uint64_t i = 0; i < 500; ++i) {
          std::vector<AdmittedStream> batch(3, {.partition = t, .tenant = tenant, .stream_hash = i, .policy = "", .seen_s = 1});
          ASSERT_TRUE((*log)->Append(batch).ok());
          if (t == 0 && i % 100 == 0) (*log)->Rotate();  // a flush meanwhile
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  AdmissionLogStats stats;
  const std::vector<Entry> all = ReadAll(path, &stats);
  EXPECT_EQ(stats.corrupt_records, 0u);
  EXPECT_EQ(all.size(), 4u * 500 * 3);
  for (const Entry& e : all) EXPECT_EQ(std::get<1>(e), "tenant-" + std::to_string(std::get<0>(e)));
}

TEST(AdmissionLogTest, AReadOnlyLogAppendsAndTrimsNothing) {
  testing::TempDir dir;
  auto log = AdmissionLog::Open(dir.Sub("absent"), /*read_only=*/true);
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(ReadAll(dir.Sub("absent")).empty());
  EXPECT_FALSE((*log)->Append(One(0, 0)).ok());
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("absent")));
}

}  // namespace
}  // namespace limits::storage
