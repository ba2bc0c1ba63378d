// AdmissionLog: the streams a node admitted since its last flush, written before each answer
// so that an admission survives a process crash (SIGKILL, OOM kill) at any moment after it
// was answered.
//
// Rows and checkpoints reach RocksDB about once a second (limits/usage/usage_store.h); an answer
// must not wait for that. This log covers the gap: append-only files in one directory, one
// per flush epoch, each request's admissions appended with one write() and no fsync — once
// write() returns the bytes are in the kernel's page cache, which a process crash cannot take
// away (a machine crash can: ARCHITECTURE.md gives that bound). A flush seals the current
// file first (Rotate), writes its rows, and then deletes the sealed files (Trim): every
// admission appended before the rotation changed memory before the flush collected it.
// Replaying an entry is idempotent (a stream's newest last-seen time wins), so an entry that
// outlives its flush (a crash between the row write and the trim) does no harm.
//
// Every file is opened off the request path (at Open, then by the flush leader), so no
// request can fail for want of a file descriptor; an append that fails anyway (a full disk)
// makes the store flush its rows before it answers (UsageStore::UpdateCond).
//
// File "<epoch, 20 digits>.log"; record: u32 LE payload length | u32 LE crc32 (zlib) of the
// payload | payload = u8 version (1) then entries: u32 LE partition | u8 tenant length |
// tenant | u64 LE stream hash | u8 policy length | policy | u32 LE seen at (unix s).
// A torn or corrupt record ends the reading of its file (counted); earlier records stand.
//
// Thread-safe: Append from any thread, concurrently; Rotate and Trim from one thread at a
// time (the flush leader).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace limits::storage {

struct AdmittedStream {
  int32_t partition = 0;
  std::string_view tenant;  // 1..255 bytes
  uint64_t stream_hash = 0;
  std::string_view policy;  // 0..255 bytes
  uint32_t seen_s = 0;
};

struct AdmissionLogStats {
  uint64_t files = 0;
  uint64_t entries = 0;
  uint64_t corrupt_records = 0;  // torn or failing their checksum: the rest of that file is skipped
};

class AdmissionLog {
 public:
  // Opens (creating it unless read-only) the log directory. Nothing is read yet.
  static Result<std::unique_ptr<AdmissionLog>> Open(const std::string& dir, bool read_only);
  ~AdmissionLog();
  AdmissionLog(const AdmissionLog&) = delete;
  AdmissionLog& operator=(const AdmissionLog&) = delete;

  // Every entry the files held at Open (left by earlier processes), oldest first.
  Status Read(const std::function<void(const AdmittedStream&)>& fn, AdmissionLogStats* stats) const;

  // Appends one request's admissions as one record; returns once they are in the OS.
  Status Append(std::span<const AdmittedStream> entries);

  // Seals the file being appended to, if anything was, and opens the next; the newest sealed
  // epoch (or found at Open), nullopt when there is none. The next file is opened here, on
  // the flush leader, never in Append: when it cannot be (out of descriptors), appends go on
  // to the current file and a later call seals it.
  std::optional<uint64_t> Rotate();
  // Deletes the sealed files of epochs <= `epoch`, and the files found at Open.
  Status Trim(uint64_t epoch);

  const std::string& dir() const { return dir_; }
  // Records appended by this process.
  uint64_t appended_records() const { return appended_.load(std::memory_order_relaxed); }
  // Appends that failed and next files that could not be opened.
  uint64_t failures() const { return failures_.load(std::memory_order_relaxed); }
  // Tests: the next `n` appends fail as on a full disk, writing nothing.
  void FailNextAppendsForTest(int n) { fail_next_.store(n, std::memory_order_relaxed); }

  // Encodes one record (exposed for tests and fuzzing); Decode reads records from a file's
  // bytes, returns the entries of whole records and counts a torn or corrupt one.
  static void EncodeRecord(std::span<const AdmittedStream> entries, std::string* out);
  static void DecodeRecords(std::string_view bytes, const std::function<void(const AdmittedStream&)>& fn,
                            AdmissionLogStats* stats);

 private:
  AdmissionLog(std::string dir, bool read_only) : dir_(std::move(dir)), read_only_(read_only) {}
  std::string PathOf(uint64_t epoch) const;
  int OpenFile(uint64_t epoch) const;

  const std::string dir_;
  const bool read_only_;
  std::vector<uint64_t> found_;  // epochs on disk at Open, ascending

  mutable std::shared_mutex mu_;  // shared: appends; exclusive: switching files
  int fd_ = -1;                   // GUARDED_BY(mu_); open from Open on unless read-only
  uint64_t epoch_ = 1;            // GUARDED_BY(mu_); of the file fd_ is
  std::atomic<bool> written_{false};  // an append reached fd_'s file since it was opened
  std::vector<uint64_t> sealed_;  // flush leader only
  std::atomic<uint64_t> appended_{0};
  std::atomic<uint64_t> failures_{0};
  std::atomic<int> fail_next_{0};
};

}  // namespace limits::storage
