// msgpack as HashiCorp memberlist writes it (hashicorp/go-msgpack's MsgpackHandle with WriteExt
// off): structs are maps keyed by field name, strings and []byte both use the raw/str family
// (fixstr, str16, str32 — never str8 or bin), integers take the shortest form. The reader
// accepts every msgpack form (str8, bin*, any integer width), as go-msgpack's decoder does.
// Not thread-safe; one writer or reader per message.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/result.h"
#include "common/status.h"

namespace limits::ring::memberlist {

class MsgpackWriter {
 public:
  void Nil();
  void Bool(bool v);
  void Uint(uint64_t v);
  void Int(int64_t v);
  // A string or a []byte: both are "raw" in go-msgpack without WriteExt.
  void Raw(std::string_view v);
  void MapHeader(uint32_t n);
  void ArrayHeader(uint32_t n);
  // A field of a struct-as-map: the key, then the value written by the caller.
  void Key(std::string_view name) { Raw(name); }

  const std::string& bytes() const { return out_; }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// Where a reader's bytes come from: a buffer, or a socket read with a deadline.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Exactly n bytes, valid until the next call; kCorruption when the input ends first.
  virtual Result<std::string_view> Take(size_t n) = 0;
};

class SpanSource : public ByteSource {
 public:
  explicit SpanSource(std::string_view data) : data_(data) {}
  Result<std::string_view> Take(size_t n) override;
  std::string_view rest() const { return data_.substr(pos_); }

 private:
  std::string_view data_;
  size_t pos_ = 0;
};

class MsgpackReader {
 public:
  enum class Kind : uint8_t { kNil, kBool, kInt, kUint, kFloat, kRaw, kArray, kMap, kExt };
  struct Token {
    Kind kind = Kind::kNil;
    bool b = false;
    int64_t i = 0;     // kInt (negative values only; non-negative ints are kUint)
    uint64_t u = 0;    // kUint
    std::string raw;   // kRaw
    uint32_t count = 0;  // kArray / kMap entries
  };

  // Raw values longer than max_raw are refused (kCorruption) before any byte is read.
  explicit MsgpackReader(ByteSource& src, size_t max_raw = 64u << 20) : src_(src), max_raw_(max_raw) {}

  Result<Token> Next();
  // Skips one whole value (nested containers included, at most 32 deep).
  Status Skip();

  // One value of the given type; kCorruption on another type. Nil reads as 0 / false / "".
  Result<uint64_t> ReadUint(uint64_t max = UINT64_MAX);
  Result<int64_t> ReadInt();
  Result<bool> ReadBool();
  // A raw (str or bin); nil reads as "". Also accepts an array of small ints, as []uint8.
  Result<std::string> ReadBytes();
  // A map header: the number of key/value pairs (nil reads as 0).
  Result<uint32_t> ReadMapHeader();

 private:
  Status SkipToken(const Token& t, int depth);
  Result<uint64_t> ReadBe(size_t n);

  ByteSource& src_;
  size_t max_raw_;
};

}  // namespace limits::ring::memberlist
