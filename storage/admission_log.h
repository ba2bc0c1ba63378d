// AdmissionLog: the streams a node admitted since its last flush, written before each answer
// so that an admission survives a process crash (SIGKILL, OOM kill) at any moment after it
// was answered.
//
// Rows and checkpoints reach RocksDB about once a second (limits/usage_store.h); an answer
// must not wait for that. This log covers the gap: append-only files in one directory, one
// per flush epoch, each request's admissions appended with one write() and no fsync — once
// write() returns the bytes are in the kernel's page cache, which a process crash cannot take
// away (a machine crash can: ARCHITECTURE.md gives that bound). A flush seals the current
// file first (Rotate), writes its rows, and then deletes the sealed files (Trim): every
// admission appended before the rotation changed memory before the flush collected it.
// Replaying an entry is idempotent (a stream's newest last-seen time wins), so an entry that
// outlives its flush (a crash between the row write and the trim) does no harm.
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

  // Seals the file being appended to (later appends start a new one); the newest sealed
  // epoch, nullopt when nothing is sealed (no file, or nothing appended since the last call).
  std::optional<uint64_t> Rotate();
  // Deletes the sealed files of epochs <= `epoch`, and the files found at Open.
  Status Trim(uint64_t epoch);

  const std::string& dir() const { return dir_; }
  // Records appended by this process.
  uint64_t appended_records() const { return appended_.load(std::memory_order_relaxed); }

  // Encodes one record (exposed for tests and fuzzing); Decode reads records from a file's
  // bytes, returns the entries of whole records and counts a torn or corrupt one.
  static void EncodeRecord(std::span<const AdmittedStream> entries, std::string* out);
  static void DecodeRecords(std::string_view bytes, const std::function<void(const AdmittedStream&)>& fn,
                            AdmissionLogStats* stats);

 private:
  AdmissionLog(std::string dir, bool read_only) : dir_(std::move(dir)), read_only_(read_only) {}
  std::string PathOf(uint64_t epoch) const;

  const std::string dir_;
  const bool read_only_;
  std::vector<uint64_t> found_;  // epochs on disk at Open, ascending

  mutable std::shared_mutex mu_;  // shared: appends; exclusive: opening and sealing a file
  int fd_ = -1;                   // GUARDED_BY(mu_)
  uint64_t epoch_ = 1;            // GUARDED_BY(mu_); of the file fd_ is (or will be)
  std::vector<uint64_t> sealed_;  // flush leader only
  std::atomic<uint64_t> appended_{0};
};

}  // namespace limits::storage
