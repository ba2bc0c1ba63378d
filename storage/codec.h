// On-disk encodings of stream rows (format version 1; ARCHITECTURE.md "On-disk format").
//
// Key   = u8 tenant length | tenant bytes | u64 stream hash, big-endian
//         so all streams of a tenant in a partition are one prefix scan, with no comparator.
// Value = u8 row tag (1) | u32 LE last seen (unix s) | u32 LE last produced (unix s)
//         | varint policy length | policy | varint bucket size (s) | varint newest bucket start (s)
//         | varint n | n x varint bytes, newest bucket first
// Last seen sits at a fixed offset so the TTL compaction filter reads it without decoding.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace limits::storage {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kMaxTenantLength = 255;
inline constexpr uint8_t kRowTag = 1;

void AppendStreamKey(std::string* out, std::string_view tenant, uint64_t hash);
std::string EncodeStreamKey(std::string_view tenant, uint64_t hash);
// The prefix shared by every key of `tenant`.
std::string TenantPrefix(std::string_view tenant);
// False when `key` is not a well-formed stream key.
bool DecodeStreamKey(std::string_view key, std::string_view* tenant, uint64_t* hash);

struct StreamRow {
  std::string policy;
  uint32_t last_seen_s = 0;
  uint32_t last_produced_s = 0;  // 0: never produced by this node
  uint32_t bucket_s = 0;         // rate bucket size the buckets were kept in
  uint32_t newest_bucket_s = 0;  // start of the newest rate bucket
  std::vector<uint64_t> rate_bytes;  // bytes per bucket, newest first

  friend bool operator==(const StreamRow&, const StreamRow&) = default;
};

// Encodes without building a StreamRow (the flush path). Trailing zero buckets are dropped.
void EncodeStreamRow(std::string* out, std::string_view policy, uint32_t last_seen_s, uint32_t last_produced_s,
                     uint32_t bucket_s, uint32_t newest_bucket_s, std::span<const uint64_t> rate_bytes_newest_first);
std::string EncodeStreamRow(const StreamRow& row);
// kCorruption on a short value, an unknown row tag or trailing bytes.
Status DecodeStreamRow(std::string_view value, StreamRow* out);
// Last seen of an encoded row, read at its fixed offset; nullopt when it cannot be.
std::optional<uint32_t> PeekLastSeen(std::string_view value);

// Little helpers shared with checkpoint.cc.
void PutFixed32(std::string* out, uint32_t v);
void PutFixed64(std::string* out, uint64_t v);
uint32_t GetFixed32(const char* p);
uint64_t GetFixed64(const char* p);
void PutVarint(std::string* out, uint64_t v);
bool GetVarint(std::string_view* in, uint64_t* v);

}  // namespace limits::storage
