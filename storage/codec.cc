#include "storage/codec.h"

#include <cstring>

namespace limits::storage {

void PutFixed32(std::string* out, uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 4);
}

void PutFixed64(std::string* out, uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(v >> (8 * i));
  out->append(b, 8);
}

uint32_t GetFixed32(const char* p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

uint64_t GetFixed64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

bool GetVarint(std::string_view* in, uint64_t* v) {
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && !in->empty(); shift += 7) {
    const uint8_t byte = static_cast<uint8_t>(in->front());
    in->remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

void AppendStreamKey(std::string* out, std::string_view tenant, uint64_t hash) {
  out->push_back(static_cast<char>(static_cast<uint8_t>(tenant.size())));
  out->append(tenant);
  char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(hash >> (8 * (7 - i)));
  out->append(b, 8);
}

std::string EncodeStreamKey(std::string_view tenant, uint64_t hash) {
  std::string key;
  key.reserve(1 + tenant.size() + 8);
  AppendStreamKey(&key, tenant, hash);
  return key;
}

std::string TenantPrefix(std::string_view tenant) {
  std::string prefix;
  prefix.push_back(static_cast<char>(static_cast<uint8_t>(tenant.size())));
  prefix.append(tenant);
  return prefix;
}

bool DecodeStreamKey(std::string_view key, std::string_view* tenant, uint64_t* hash) {
  if (key.empty()) return false;
  const size_t len = static_cast<uint8_t>(key[0]);
  if (len == 0 || key.size() != 1 + len + 8) return false;
  *tenant = key.substr(1, len);
  uint64_t h = 0;
  for (size_t i = 1 + len; i < key.size(); ++i) h = (h << 8) | static_cast<uint8_t>(key[i]);
  *hash = h;
  return true;
}

void EncodeStreamRow(std::string* out, std::string_view policy, uint32_t last_seen_s, uint32_t last_produced_s,
                     uint32_t bucket_s, uint32_t newest_bucket_s, std::span<const uint64_t> rate_bytes) {
  size_t n = rate_bytes.size();
  while (n > 0 && rate_bytes[n - 1] == 0) --n;
  out->push_back(static_cast<char>(kRowTag));
  PutFixed32(out, last_seen_s);
  PutFixed32(out, last_produced_s);
  PutVarint(out, policy.size());
  out->append(policy);
  PutVarint(out, bucket_s);
  PutVarint(out, n == 0 ? 0 : newest_bucket_s);
  PutVarint(out, n);
  for (size_t i = 0; i < n; ++i) PutVarint(out, rate_bytes[i]);
}

std::string EncodeStreamRow(const StreamRow& row) {
  std::string out;
  EncodeStreamRow(&out, row.policy, row.last_seen_s, row.last_produced_s, row.bucket_s, row.newest_bucket_s,
                  row.rate_bytes);
  return out;
}

Status DecodeStreamRow(std::string_view value, StreamRow* out) {
  if (value.size() < 9) return Status::Corruption("stream row of " + std::to_string(value.size()) + " bytes is too short");
  if (static_cast<uint8_t>(value[0]) != kRowTag) {
    return Status::Corruption("stream row has unknown tag " + std::to_string(static_cast<uint8_t>(value[0])));
  }
  out->last_seen_s = GetFixed32(value.data() + 1);
  out->last_produced_s = GetFixed32(value.data() + 5);
  std::string_view in = value.substr(9);
  uint64_t policy_len = 0, bucket_s = 0, newest = 0, n = 0;
  if (!GetVarint(&in, &policy_len) || policy_len > in.size()) return Status::Corruption("stream row: bad policy");
  out->policy.assign(in.substr(0, policy_len));
  in.remove_prefix(policy_len);
  if (!GetVarint(&in, &bucket_s) || !GetVarint(&in, &newest) || !GetVarint(&in, &n) || bucket_s > UINT32_MAX ||
      newest > UINT32_MAX || n > in.size()) {
    return Status::Corruption("stream row: bad rate buckets");
  }
  out->bucket_s = static_cast<uint32_t>(bucket_s);
  out->newest_bucket_s = static_cast<uint32_t>(newest);
  out->rate_bytes.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (!GetVarint(&in, &out->rate_bytes[i])) return Status::Corruption("stream row: truncated rate buckets");
  }
  if (!in.empty()) return Status::Corruption("stream row has " + std::to_string(in.size()) + " trailing bytes");
  return Status::OK();
}

std::optional<uint32_t> PeekLastSeen(std::string_view value) {
  if (value.size() < 9 || static_cast<uint8_t>(value[0]) != kRowTag) return std::nullopt;
  return GetFixed32(value.data() + 1);
}

}  // namespace limits::storage
