#include "common/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace limits::allocator {
namespace {

// VmRSS of this process, in KiB.
long RssKib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

// The test runs twice (tests/unit/common/CMakeLists.txt): as built, and with jemalloc preloaded
// where it is installed; LIMITS_EXPECT_ALLOCATOR names the one each run must find.
TEST(AllocatorTest, KnowsWhichAllocatorServesTheProcess) {
  const char* want = std::getenv("LIMITS_EXPECT_ALLOCATOR");
  EXPECT_STREQ(Name(), want != nullptr ? want : "glibc");
}

TEST(AllocatorTest, ReleaseReturnsFreedMemoryToTheOs) {
  // Small blocks: glibc serves them from its heap and keeps them when freed (a large block
  // would be its own mapping, returned by free itself); jemalloc keeps them until its decay.
  constexpr size_t kBlock = 512;
  constexpr size_t kBlocks = 128 * 1024;  // 64 MiB
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::make_unique<char[]>(kBlock));
    std::memset(blocks.back().get(), 1, kBlock);
  }
  const long held = RssKib();
  ASSERT_GT(held, 64 * 1024);
  // Freed in allocation order but the first: the heap's top stays in use, so glibc cannot give
  // the memory back by shrinking the heap on free, only by malloc_trim.
  for (size_t i = 1; i < kBlocks; ++i) blocks[i].reset();
  const long freed = RssKib();
  ReleaseFreeMemory();
  const long released = RssKib();
  EXPECT_LT(released, freed - 32 * 1024) << "held " << held << " KiB, freed " << freed << " KiB";
  EXPECT_LT(released, held - 32 * 1024);
}

}  // namespace
}  // namespace limits::allocator
