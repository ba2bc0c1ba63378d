#include "testing/raw_produce.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <vector>

namespace limits::testing {
namespace {

class Writer {
 public:
  void I8(int8_t v) { out_.push_back(static_cast<char>(v)); }
  void I16(int16_t v) { Be(static_cast<uint16_t>(v), 2); }
  void I32(int32_t v) { Be(static_cast<uint32_t>(v), 4); }
  void I64(int64_t v) { Be(static_cast<uint64_t>(v), 8); }
  void Str(const std::string& s) {
    I16(static_cast<int16_t>(s.size()));
    out_.append(s);
  }
  void Varint(int64_t v) {  // zig-zag, as record fields are
    uint64_t z = (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
    while (z >= 0x80) {
      out_.push_back(static_cast<char>((z & 0x7f) | 0x80));
      z >>= 7;
    }
    out_.push_back(static_cast<char>(z));
  }
  void Raw(const std::string& s) { out_.append(s); }
  std::string& str() { return out_; }

 private:
  void Be(uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i) out_.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  std::string out_;
};

uint32_t Crc32c(const std::string& data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = c & 1 ? 0x82f63b78u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (unsigned char b : data) crc = table[(crc ^ b) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

std::string ControlBatch(bool commit, int64_t timestamp_ms) {
  Writer key, value, record;
  key.I16(0);                 // control record version
  key.I16(commit ? 1 : 0);    // type: 0 abort, 1 commit
  value.I16(0);               // EndTxnMarker version
  value.I32(0);               // coordinator epoch
  record.I8(0);               // attributes
  record.Varint(0);           // timestamp delta
  record.Varint(0);           // offset delta
  record.Varint(static_cast<int64_t>(key.str().size()));
  record.Raw(key.str());
  record.Varint(static_cast<int64_t>(value.str().size()));
  record.Raw(value.str());
  record.Varint(0);           // headers
  Writer body;                // from attributes on: what the CRC covers
  body.I16(0x10 | 0x20);      // transactional | control
  body.I32(0);                // last offset delta
  body.I64(timestamp_ms);
  body.I64(timestamp_ms);
  body.I64(1000);             // producer id
  body.I16(0);                // producer epoch
  body.I32(-1);               // base sequence
  body.I32(1);                // records
  body.Varint(static_cast<int64_t>(record.str().size()));
  body.Raw(record.str());
  Writer batch;
  batch.I64(0);                                                  // base offset (the broker assigns)
  batch.I32(static_cast<int32_t>(4 + 1 + 4 + body.str().size()));  // length after this field
  batch.I32(0);                                                  // partition leader epoch
  batch.I8(2);                                                   // magic
  batch.I32(static_cast<int32_t>(Crc32c(body.str())));
  batch.Raw(body.str());
  return batch.str();
}

}  // namespace

Status ProduceControlRecord(const std::string& host_port, const std::string& topic, int32_t partition, bool commit,
                            int64_t timestamp_ms) {
  const size_t colon = host_port.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(host_port.substr(colon + 1))));
  if (inet_pton(AF_INET, host_port.substr(0, colon).c_str(), &addr.sin_addr) != 1) {
    return Status::InvalidArgument("not an IPv4 address: " + host_port);
  }
  const std::string records = ControlBatch(commit, timestamp_ms);
  Writer req;
  req.I16(0);   // ApiKey Produce
  req.I16(3);   // ApiVersion
  req.I32(1);   // correlation id
  req.Str("raw-produce");
  req.I16(-1);  // transactional id: null
  req.I16(1);   // acks
  req.I32(5000);
  req.I32(1);   // topics
  req.Str(topic);
  req.I32(1);   // partitions
  req.I32(partition);
  req.I32(static_cast<int32_t>(records.size()));
  req.Raw(records);
  Writer frame;
  frame.I32(static_cast<int32_t>(req.str().size()));
  frame.Raw(req.str());

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status::IOError("socket");
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return Status::IOError("connect to " + host_port);
  }
  const std::string& bytes = frame.str();
  bool ok = send(fd, bytes.data(), bytes.size(), 0) == static_cast<ssize_t>(bytes.size());
  // Response: size, correlation id, topics, name, partitions, index, error code, ...
  char size_be[4];
  ok = ok && recv(fd, size_be, 4, MSG_WAITALL) == 4;
  const size_t size = ok ? (static_cast<uint32_t>(static_cast<uint8_t>(size_be[0])) << 24 |
                            static_cast<uint32_t>(static_cast<uint8_t>(size_be[1])) << 16 |
                            static_cast<uint32_t>(static_cast<uint8_t>(size_be[2])) << 8 |
                            static_cast<uint32_t>(static_cast<uint8_t>(size_be[3])))
                         : 0;
  std::vector<char> resp(4 + std::min<size_t>(size, 4096));
  const ssize_t body = ok ? recv(fd, resp.data() + 4, resp.size() - 4, MSG_WAITALL) : -1;
  close(fd);
  if (!ok || body < 0) return Status::IOError("Produce to " + host_port + " got no response");
  const ssize_t got = body + 4;
  const size_t name_at = 4 + 4 + 4;  // size, correlation id, topic count
  if (got < static_cast<ssize_t>(name_at + 2)) return Status::IOError("short Produce response");
  const size_t name_len = (static_cast<uint8_t>(resp[name_at]) << 8) | static_cast<uint8_t>(resp[name_at + 1]);
  const size_t err_at = name_at + 2 + name_len + 4 + 4;  // name, partition count, index
  if (static_cast<size_t>(got) < err_at + 2) return Status::IOError("short Produce response");
  const int err = (static_cast<uint8_t>(resp[err_at]) << 8) | static_cast<uint8_t>(resp[err_at + 1]);
  if (err != 0) return Status::IOError("Produce error " + std::to_string(err));
  return Status::OK();
}

}  // namespace limits::testing
