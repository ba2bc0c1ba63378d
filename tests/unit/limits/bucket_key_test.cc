#include "limits/zone/bucket_key.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace limits::zone {
namespace {

TEST(BucketKeyTest, TheHashIsFnv1aWithLengthPrefixedFields) {
  // FNV-1a's published test vectors: every node must compute the same homes and floors.
  EXPECT_EQ(bucket_hash::Fnv1a(bucket_hash::kBasis, ""), 0xcbf29ce484222325ull);
  EXPECT_EQ(bucket_hash::Fnv1a(bucket_hash::kBasis, "a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(bucket_hash::Fnv1a(bucket_hash::kBasis, "foobar"), 0x85944171f73967e8ull);
  EXPECT_NE(HashOf({"ab", "c"}), HashOf({"a", "bc"}));
  EXPECT_NE(HashOf({"t", ""}), HashOf({"t", "gold"}));
  EXPECT_EQ(HashOf({"t", "gold"}), HashOf({"t", "gold"}));
}

TEST(BucketKeyTest, TheHomeDependsOnTheMembersNotTheirOrder) {
  std::vector<std::string> members = {"limitsd-0", "limitsd-1", "limitsd-2", "limitsd-3"};
  std::vector<std::string> reversed(members.rbegin(), members.rend());
  for (int t = 0; t < 200; ++t) {
    const BucketKey key{"tenant-" + std::to_string(t), t % 3 == 0 ? "gold" : ""};
    EXPECT_EQ(HomeOf(key, members), HomeOf(key, reversed));
  }
  EXPECT_EQ(HomeOf({"t", ""}, {}), "");
}

TEST(BucketKeyTest, AMemberLeavingMovesOnlyItsOwnBucketsAndTheyAreSpreadEvenly) {
  const std::vector<std::string> four = {"a", "b", "c", "d"};
  const std::vector<std::string> three = {"a", "b", "d"};  // c left
  std::map<std::string, int> homes;
  int moved = 0;
  const int kKeys = 8000;
  for (int t = 0; t < kKeys; ++t) {
    const BucketKey key{"tenant-" + std::to_string(t), ""};
    const std::string before(HomeOf(key, four));
    const std::string after(HomeOf(key, three));
    ++homes[before];
    if (before != after) {
      ++moved;
      EXPECT_EQ(before, "c") << key.tenant;
    }
  }
  EXPECT_EQ(moved, homes["c"]);
  for (const auto& [member, n] : homes) {
    EXPECT_GT(n, kKeys / 4 * 9 / 10) << member;
    EXPECT_LT(n, kKeys / 4 * 11 / 10) << member;
  }
}

}  // namespace
}  // namespace limits::zone
