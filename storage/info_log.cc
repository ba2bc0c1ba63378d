#include "storage/info_log.h"

#include <sys/time.h>

#include <algorithm>
#include <cstdarg>
#include <ctime>
#include <filesystem>

namespace limits::storage {

InfoLog::InfoLog(const std::string& dir, size_t max_bytes, rocksdb::InfoLogLevel level)
    : rocksdb::Logger(level), path_(dir + "/LOG"), max_bytes_(max_bytes) {
  file_ = std::fopen(path_.c_str(), "a");
  if (file_ != nullptr) size_ = static_cast<size_t>(std::ftell(file_));
}

InfoLog::~InfoLog() { (void)CloseImpl(); }

rocksdb::Status InfoLog::CloseImpl() {
  std::lock_guard lock(mu_);
  if (file_ != nullptr) std::fclose(file_);
  file_ = nullptr;
  return rocksdb::Status::OK();
}

size_t InfoLog::GetLogFileSize() const {
  std::lock_guard lock(mu_);
  return size_;
}

void InfoLog::Roll() {
  if (file_ != nullptr) std::fclose(file_);
  std::error_code ec;
  std::filesystem::rename(path_, path_ + ".old", ec);
  file_ = std::fopen(path_.c_str(), "w");
  size_ = 0;
}

void InfoLog::Logv(const char* format, va_list ap) {
  char line[4096];
  timeval now{};
  gettimeofday(&now, nullptr);
  std::tm t{};
  localtime_r(&now.tv_sec, &t);
  int n = std::snprintf(line, sizeof line, "%04d/%02d/%02d-%02d:%02d:%02d.%06ld ", t.tm_year + 1900, t.tm_mon + 1,
                        t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec, static_cast<long>(now.tv_usec));
  va_list copy;
  va_copy(copy, ap);
  const int body = std::vsnprintf(line + n, sizeof line - static_cast<size_t>(n) - 1, format, copy);
  va_end(copy);
  if (body < 0) return;
  n = std::min<int>(n + body, static_cast<int>(sizeof line) - 2);
  if (n <= 0) return;
  if (line[n - 1] != '\n') line[n++] = '\n';

  std::lock_guard lock(mu_);
  if (size_ >= max_bytes_) Roll();
  if (file_ == nullptr) file_ = std::fopen(path_.c_str(), "a");  // e.g. the disk had no room before
  if (file_ == nullptr || std::fwrite(line, 1, static_cast<size_t>(n), file_) != static_cast<size_t>(n) ||
      std::fflush(file_) != 0) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (file_ != nullptr) std::clearerr(file_);
    return;
  }
  size_ += static_cast<size_t>(n);
}

}  // namespace limits::storage
