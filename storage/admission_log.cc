#include "storage/admission_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "common/log.h"

namespace limits::storage {
namespace {

constexpr uint8_t kVersion = 1;
constexpr size_t kHeader = 8;             // length + crc
constexpr size_t kMaxRecord = 64 << 20;   // a request's admissions are far fewer bytes
constexpr char kSuffix[] = ".log";

void PutU32(std::string* out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
void PutU64(std::string* out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out->push_back(static_cast<char>(v >> (8 * i)));
}
uint32_t GetU32(const char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}
uint64_t GetU64(const char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return v;
}

uint32_t Crc(std::string_view bytes) {
  return static_cast<uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

Status Errno(const std::string& what) { return Status::IOError(what + ": " + std::strerror(errno)); }

// Epoch of a file name "<digits>.log", or nullopt.
std::optional<uint64_t> EpochOf(const std::string& name) {
  const size_t suffix = sizeof(kSuffix) - 1;
  if (name.size() <= suffix || name.compare(name.size() - suffix, suffix, kSuffix) != 0) return std::nullopt;
  uint64_t v = 0;
  for (size_t i = 0; i < name.size() - suffix; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return std::nullopt;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

// One payload's entries; false when it does not parse whole.
bool DecodePayload(std::string_view p, const std::function<void(const AdmittedStream&)>& fn) {
  if (p.empty() || static_cast<uint8_t>(p[0]) != kVersion) return false;
  size_t i = 1;
  std::vector<AdmittedStream> entries;
  while (i < p.size()) {
    AdmittedStream e;
    if (p.size() - i < 5) return false;
    e.partition = static_cast<int32_t>(GetU32(p.data() + i));
    const size_t tenant_len = static_cast<uint8_t>(p[i + 4]);
    i += 5;
    if (tenant_len == 0 || p.size() - i < tenant_len + 9) return false;
    e.tenant = p.substr(i, tenant_len);
    i += tenant_len;
    e.stream_hash = GetU64(p.data() + i);
    const size_t policy_len = static_cast<uint8_t>(p[i + 8]);
    i += 9;
    if (p.size() - i < policy_len + 4) return false;
    e.policy = p.substr(i, policy_len);
    i += policy_len;
    e.seen_s = GetU32(p.data() + i);
    i += 4;
    if (e.partition < 0) return false;
    entries.push_back(e);
  }
  // A record is applied whole or not at all.
  for (const AdmittedStream& e : entries) fn(e);
  return true;
}

}  // namespace

void AdmissionLog::EncodeRecord(std::span<const AdmittedStream> entries, std::string* out) {
  const size_t start = out->size();
  out->append(kHeader, '\0');
  out->push_back(static_cast<char>(kVersion));
  for (const AdmittedStream& e : entries) {
    PutU32(out, static_cast<uint32_t>(e.partition));
    out->push_back(static_cast<char>(std::min<size_t>(e.tenant.size(), 255)));
    out->append(e.tenant.substr(0, 255));
    PutU64(out, e.stream_hash);
    out->push_back(static_cast<char>(std::min<size_t>(e.policy.size(), 255)));
    out->append(e.policy.substr(0, 255));
    PutU32(out, e.seen_s);
  }
  const std::string_view payload(out->data() + start + kHeader, out->size() - start - kHeader);
  std::string header;
  PutU32(&header, static_cast<uint32_t>(payload.size()));
  PutU32(&header, Crc(payload));
  out->replace(start, kHeader, header);
}

void AdmissionLog::DecodeRecords(std::string_view bytes, const std::function<void(const AdmittedStream&)>& fn,
                                 AdmissionLogStats* stats) {
  size_t i = 0;
  while (i < bytes.size()) {
    if (bytes.size() - i < kHeader) {
      ++stats->corrupt_records;  // torn header
      return;
    }
    const uint32_t len = GetU32(bytes.data() + i);
    const uint32_t crc = GetU32(bytes.data() + i + 4);
    if (len > kMaxRecord || bytes.size() - i - kHeader < len) {
      ++stats->corrupt_records;  // torn payload or a nonsense length
      return;
    }
    const std::string_view payload = bytes.substr(i + kHeader, len);
    uint64_t n = 0;
    if (Crc(payload) != crc || !DecodePayload(payload, [&](const AdmittedStream& e) {
          ++n;
          fn(e);
        })) {
      ++stats->corrupt_records;
      return;
    }
    stats->entries += n;
    i += kHeader + len;
  }
}

Result<std::unique_ptr<AdmissionLog>> AdmissionLog::Open(const std::string& dir, bool read_only) {
  auto log = std::unique_ptr<AdmissionLog>(new AdmissionLog(dir, read_only));
  std::error_code ec;
  if (!read_only) {
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError("admission log " + dir + ": " + ec.message());
  }
  if (std::filesystem::is_directory(dir, ec)) {
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      if (std::optional<uint64_t> epoch = EpochOf(entry.path().filename().string())) log->found_.push_back(*epoch);
    }
    if (ec) return Status::IOError("admission log " + dir + ": " + ec.message());
  }
  std::sort(log->found_.begin(), log->found_.end());
  if (!log->found_.empty()) log->epoch_ = log->found_.back() + 1;
  if (!read_only) {
    // The first file now, at start: a request thread never opens one (Rotate opens the next).
    log->fd_ = log->OpenFile(log->epoch_);
    if (log->fd_ < 0) return Errno("admission log: open " + log->PathOf(log->epoch_));
  }
  return log;
}

int AdmissionLog::OpenFile(uint64_t epoch) const {
  return ::open(PathOf(epoch).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
}

AdmissionLog::~AdmissionLog() {
  if (fd_ >= 0) ::close(fd_);
}

std::string AdmissionLog::PathOf(uint64_t epoch) const {
  char name[32];
  std::snprintf(name, sizeof name, "%020llu%s", static_cast<unsigned long long>(epoch), kSuffix);
  return dir_ + "/" + name;
}

Status AdmissionLog::Read(const std::function<void(const AdmittedStream&)>& fn, AdmissionLogStats* stats) const {
  for (uint64_t epoch : found_) {
    const std::string path = PathOf(epoch);
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      if (!std::filesystem::exists(path)) continue;  // trimmed by a running node meanwhile (read-only readers)
      return Status::IOError("admission log: cannot read " + path);
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    ++stats->files;
    DecodeRecords(bytes.str(), fn, stats);
  }
  return Status::OK();
}

Status AdmissionLog::Append(std::span<const AdmittedStream> entries) {
  if (entries.empty()) return Status::OK();
  if (read_only_) return Status::FailedPrecondition("the admission log was opened read-only");
  thread_local std::string record;
  record.clear();
  EncodeRecord(entries, &record);
  Status s;
  {
    std::shared_lock lock(mu_);
    written_.store(true, std::memory_order_relaxed);
    // One write() per record: with O_APPEND, concurrent appends never interleave within a
    // record (a regular file's writes are serialised by the kernel).
    ssize_t n = 0;
    if (fail_next_.load(std::memory_order_relaxed) > 0 && fail_next_.fetch_sub(1, std::memory_order_relaxed) > 0) {
      errno = ENOSPC;
      n = -1;
    } else {
      n = ::write(fd_, record.data(), record.size());
    }
    if (n < 0) {
      s = Errno("admission log: write");
    } else if (static_cast<size_t>(n) != record.size()) {
      // A short write (a full disk) leaves a torn record that ends the file's reading: the
      // caller flushes, which seals this file and deletes it once the rows cover it.
      s = Status::IOError("admission log: short write (" + std::to_string(n) + " of " +
                          std::to_string(record.size()) + " bytes)");
    }
  }
  // A record far larger than usual keeps its buffer only until the next call.
  if (record.capacity() > (1 << 20)) std::string().swap(record);
  if (!s.ok()) {
    failures_.fetch_add(1, std::memory_order_relaxed);
    return s;
  }
  appended_.fetch_add(1, std::memory_order_relaxed);
  return Status::OK();
}

std::optional<uint64_t> AdmissionLog::Rotate() {
  if (read_only_) return std::nullopt;
  std::unique_lock lock(mu_);
  if (written_.load(std::memory_order_relaxed)) {
    // The next file before sealing this one: when it cannot be opened (out of descriptors,
    // a full disk), appends go on to the current file, sealed at a later flush.
    const int next = OpenFile(epoch_ + 1);
    if (next < 0) {
      const int err = errno;
      failures_.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      log::Warn("store", "cannot open the next admission-log file; appending to the current one")
          .Kv("path", PathOf(epoch_ + 1))
          .Kv("error", std::strerror(err));
    } else {
      ::close(fd_);
      fd_ = next;
      sealed_.push_back(epoch_);
      ++epoch_;
      written_.store(false, std::memory_order_relaxed);
    }
  }
  if (!sealed_.empty()) return sealed_.back();
  if (!found_.empty()) return found_.back();
  return std::nullopt;
}

Status AdmissionLog::Trim(uint64_t epoch) {
  if (read_only_) return Status::FailedPrecondition("the admission log was opened read-only");
  Status first;
  auto remove = [&](std::vector<uint64_t>& epochs) {
    auto keep = std::stable_partition(epochs.begin(), epochs.end(), [&](uint64_t e) { return e > epoch; });
    for (auto it = keep; it != epochs.end(); ++it) {
      const std::string path = PathOf(*it);
      if (::unlink(path.c_str()) != 0 && errno != ENOENT && first.ok()) first = Errno("admission log: unlink " + path);
    }
    epochs.erase(keep, epochs.end());
  };
  remove(found_);
  remove(sealed_);
  return first;
}

}  // namespace limits::storage
