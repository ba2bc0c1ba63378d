#include "common/allocator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace limits::allocator {
namespace {

// A block HoldAndFree keeps, for the life of the test binary.
std::unique_ptr<char[]> kept_block;

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

// Allocates 64 MiB in small blocks and frees all but the last: glibc serves small blocks from
// its heap and keeps them when freed (a large block would be its own mapping, returned by free
// itself); jemalloc keeps them until its decay. With the last block kept, the heap's top stays
// in use, so glibc cannot give the memory back by shrinking the heap on free.
// Returns the RSS, in KiB, while all were held.
long HoldAndFree() {
  constexpr size_t kBlock = 512;
  constexpr size_t kBlocks = 128 * 1024;
  std::vector<std::unique_ptr<char[]>> blocks;
  blocks.reserve(kBlocks);
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(std::make_unique<char[]>(kBlock));
    std::memset(blocks.back().get(), 1, kBlock);
  }
  const long held = RssKib();
  for (size_t i = 0; i + 1 < kBlocks; ++i) blocks[i].reset();
  kept_block = std::move(blocks.back());
  return held;
}

TEST(AllocatorTest, ReleaseReturnsFreedMemoryToTheOs) {
  const long held = HoldAndFree();
  ASSERT_GT(held, 64 * 1024);
  const long freed = RssKib();
  ReleaseFreeMemory();
  const long released = RssKib();
  EXPECT_LT(released, freed - 32 * 1024) << "held " << held << " KiB, freed " << freed << " KiB";
  EXPECT_LT(released, held - 32 * 1024);
}

TEST(AllocatorTest, TrimReturnsWhatAnotherThreadsArenaFreed) {
  if (std::string(Name()) == "jemalloc") GTEST_SKIP() << "jemalloc returns free pages on its own decay";
  // A replay's shape: another thread's arena keeps what it freed, out of this thread's reach.
  long held = 0;
  std::thread churn([&] { held = HoldAndFree(); });
  churn.join();
  ASSERT_GT(held, 64 * 1024);
  const long freed = RssKib();
  TrimArenas();
  const long trimmed = RssKib();
  EXPECT_LT(trimmed, freed - 32 * 1024) << "held " << held << " KiB, freed " << freed << " KiB";
}

}  // namespace
}  // namespace limits::allocator
