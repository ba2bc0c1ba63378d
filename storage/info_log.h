// InfoLog: RocksDB's info log ("LOG" in the database directory), written by us rather than by
// RocksDB's own file logger. RocksDB's logger asserts when it writes again after a failed
// write (librocksdb 7.8 in Debian is built with assertions): on a full disk, the line that
// reports the first failure aborts the process. This one drops what it cannot write, counts
// it, and keeps trying. Rolls at `max_bytes` to LOG.old. Thread-safe (RocksDB logs from its
// background threads). Internal to storage/.
#pragma once

#include <rocksdb/env.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

namespace limits::storage {

class InfoLog final : public rocksdb::Logger {
 public:
  // Opens (appends to) `dir`/LOG; never fails: without a file, lines are dropped and counted.
  InfoLog(const std::string& dir, size_t max_bytes, rocksdb::InfoLogLevel level);
  ~InfoLog() override;

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override;
  size_t GetLogFileSize() const override;
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  rocksdb::Status CloseImpl() override;
  void Roll();  // REQUIRES: mu_

  const std::string path_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;  // GUARDED_BY(mu_)
  size_t size_ = 0;            // GUARDED_BY(mu_)
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace limits::storage
