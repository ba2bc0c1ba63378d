#include "ring/memberlist/msgpack.h"

namespace limits::ring::memberlist {

namespace {

void PutBe(std::string& out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

constexpr int kMaxDepth = 32;

}  // namespace

void MsgpackWriter::Nil() { out_.push_back(static_cast<char>(0xc0)); }

void MsgpackWriter::Bool(bool v) { out_.push_back(static_cast<char>(v ? 0xc3 : 0xc2)); }

void MsgpackWriter::Uint(uint64_t v) {
  if (v <= 0x7f) {
    out_.push_back(static_cast<char>(v));
  } else if (v <= 0xff) {
    out_.push_back(static_cast<char>(0xcc));
    PutBe(out_, v, 1);
  } else if (v <= 0xffff) {
    out_.push_back(static_cast<char>(0xcd));
    PutBe(out_, v, 2);
  } else if (v <= 0xffffffffull) {
    out_.push_back(static_cast<char>(0xce));
    PutBe(out_, v, 4);
  } else {
    out_.push_back(static_cast<char>(0xcf));
    PutBe(out_, v, 8);
  }
}

void MsgpackWriter::Int(int64_t v) {
  if (v >= 0) return Uint(static_cast<uint64_t>(v));
  const auto u = static_cast<uint64_t>(v);
  if (v >= -32) {
    out_.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT8_MIN) {
    out_.push_back(static_cast<char>(0xd0));
    PutBe(out_, u, 1);
  } else if (v >= INT16_MIN) {
    out_.push_back(static_cast<char>(0xd1));
    PutBe(out_, u, 2);
  } else if (v >= INT32_MIN) {
    out_.push_back(static_cast<char>(0xd2));
    PutBe(out_, u, 4);
  } else {
    out_.push_back(static_cast<char>(0xd3));
    PutBe(out_, u, 8);
  }
}

void MsgpackWriter::Raw(std::string_view v) {
  const size_t n = v.size();
  if (n < 32) {
    out_.push_back(static_cast<char>(0xa0 | n));
  } else if (n < 65536) {
    out_.push_back(static_cast<char>(0xda));
    PutBe(out_, n, 2);
  } else {
    out_.push_back(static_cast<char>(0xdb));
    PutBe(out_, n, 4);
  }
  out_.append(v);
}

void MsgpackWriter::MapHeader(uint32_t n) {
  if (n < 16) {
    out_.push_back(static_cast<char>(0x80 | n));
  } else if (n < 65536) {
    out_.push_back(static_cast<char>(0xde));
    PutBe(out_, n, 2);
  } else {
    out_.push_back(static_cast<char>(0xdf));
    PutBe(out_, n, 4);
  }
}

void MsgpackWriter::ArrayHeader(uint32_t n) {
  if (n < 16) {
    out_.push_back(static_cast<char>(0x90 | n));
  } else if (n < 65536) {
    out_.push_back(static_cast<char>(0xdc));
    PutBe(out_, n, 2);
  } else {
    out_.push_back(static_cast<char>(0xdd));
    PutBe(out_, n, 4);
  }
}

Result<std::string_view> SpanSource::Take(size_t n) {
  if (n > data_.size() - pos_) {
    return Status::Corruption("msgpack: truncated (" + std::to_string(n) + " bytes wanted, " +
                              std::to_string(data_.size() - pos_) + " left)");
  }
  std::string_view out = data_.substr(pos_, n);
  pos_ += n;
  return out;
}

Result<uint64_t> MsgpackReader::ReadBe(size_t n) {
  ASSIGN_OR_RETURN(std::string_view b, src_.Take(n));
  uint64_t v = 0;
  for (unsigned char c : b) v = (v << 8) | c;
  return v;
}

Result<MsgpackReader::Token> MsgpackReader::Next() {
  ASSIGN_OR_RETURN(std::string_view first, src_.Take(1));
  const auto c = static_cast<uint8_t>(first[0]);
  Token t;
  auto raw = [&](uint64_t len) -> Result<Token> {
    if (len > max_raw_) {
      return Status::Corruption("msgpack: raw value of " + std::to_string(len) + " bytes exceeds the limit");
    }
    ASSIGN_OR_RETURN(std::string_view bytes, src_.Take(static_cast<size_t>(len)));
    t.kind = Kind::kRaw;
    t.raw.assign(bytes);
    return t;
  };
  auto sized = [&](Kind kind, size_t len_bytes) -> Result<Token> {
    ASSIGN_OR_RETURN(uint64_t n, ReadBe(len_bytes));
    t.kind = kind;
    t.count = static_cast<uint32_t>(n);
    return t;
  };
  auto uint = [&](size_t bytes) -> Result<Token> {
    ASSIGN_OR_RETURN(t.u, ReadBe(bytes));
    t.kind = Kind::kUint;
    return t;
  };
  auto sint = [&](size_t bytes) -> Result<Token> {
    ASSIGN_OR_RETURN(uint64_t v, ReadBe(bytes));
    const int shift = static_cast<int>(64 - 8 * bytes);
    const auto s = static_cast<int64_t>(v << shift) >> shift;  // sign-extend
    if (s >= 0) {
      t.kind = Kind::kUint;
      t.u = static_cast<uint64_t>(s);
    } else {
      t.kind = Kind::kInt;
      t.i = s;
    }
    return t;
  };
  auto ext = [&](uint64_t len) -> Result<Token> {
    if (len > max_raw_) return Status::Corruption("msgpack: ext value too long");
    ASSIGN_OR_RETURN(std::string_view skipped, src_.Take(static_cast<size_t>(len) + 1));  // type + data
    (void)skipped;
    t.kind = Kind::kExt;
    return t;
  };

  if (c <= 0x7f) {
    t.kind = Kind::kUint;
    t.u = c;
    return t;
  }
  if (c >= 0xe0) {
    t.kind = Kind::kInt;
    t.i = static_cast<int8_t>(c);
    return t;
  }
  if ((c & 0xf0) == 0x80) {
    t.kind = Kind::kMap;
    t.count = c & 0x0f;
    return t;
  }
  if ((c & 0xf0) == 0x90) {
    t.kind = Kind::kArray;
    t.count = c & 0x0f;
    return t;
  }
  if ((c & 0xe0) == 0xa0) return raw(c & 0x1f);
  switch (c) {
    case 0xc0:
      t.kind = Kind::kNil;
      return t;
    case 0xc2:
    case 0xc3:
      t.kind = Kind::kBool;
      t.b = c == 0xc3;
      return t;
    case 0xc4:  // bin8
    case 0xd9: {  // str8
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(1));
      return raw(n);
    }
    case 0xc5:  // bin16
    case 0xda: {  // str16
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(2));
      return raw(n);
    }
    case 0xc6:  // bin32
    case 0xdb: {  // str32
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(4));
      return raw(n);
    }
    case 0xc7: {
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(1));
      return ext(n);
    }
    case 0xc8: {
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(2));
      return ext(n);
    }
    case 0xc9: {
      ASSIGN_OR_RETURN(uint64_t n, ReadBe(4));
      return ext(n);
    }
    case 0xca: {
      ASSIGN_OR_RETURN(std::string_view f, src_.Take(4));
      (void)f;
      t.kind = Kind::kFloat;
      return t;
    }
    case 0xcb: {
      ASSIGN_OR_RETURN(std::string_view f, src_.Take(8));
      (void)f;
      t.kind = Kind::kFloat;
      return t;
    }
    case 0xcc: return uint(1);
    case 0xcd: return uint(2);
    case 0xce: return uint(4);
    case 0xcf: return uint(8);
    case 0xd0: return sint(1);
    case 0xd1: return sint(2);
    case 0xd2: return sint(4);
    case 0xd3: return sint(8);
    case 0xd4: return ext(1);
    case 0xd5: return ext(2);
    case 0xd6: return ext(4);
    case 0xd7: return ext(8);
    case 0xd8: return ext(16);
    case 0xdc: return sized(Kind::kArray, 2);
    case 0xdd: return sized(Kind::kArray, 4);
    case 0xde: return sized(Kind::kMap, 2);
    case 0xdf: return sized(Kind::kMap, 4);
    default:
      return Status::Corruption("msgpack: invalid type byte 0xc1");
  }
}

Status MsgpackReader::SkipToken(const Token& t, int depth) {
  if (t.kind != Kind::kArray && t.kind != Kind::kMap) return Status::OK();
  if (depth >= kMaxDepth) return Status::Corruption("msgpack: nested too deep");
  const uint64_t items = t.kind == Kind::kMap ? 2ull * t.count : t.count;
  for (uint64_t k = 0; k < items; ++k) {
    ASSIGN_OR_RETURN(Token inner, Next());
    RETURN_IF_ERROR(SkipToken(inner, depth + 1));
  }
  return Status::OK();
}

Status MsgpackReader::Skip() {
  ASSIGN_OR_RETURN(Token t, Next());
  return SkipToken(t, 0);
}

Result<uint64_t> MsgpackReader::ReadUint(uint64_t max) {
  ASSIGN_OR_RETURN(Token t, Next());
  if (t.kind == Kind::kNil) return uint64_t{0};
  if (t.kind != Kind::kUint) return Status::Corruption("msgpack: expected an unsigned integer");
  if (t.u > max) return Status::Corruption("msgpack: integer " + std::to_string(t.u) + " out of range");
  return t.u;
}

Result<int64_t> MsgpackReader::ReadInt() {
  ASSIGN_OR_RETURN(Token t, Next());
  if (t.kind == Kind::kNil) return int64_t{0};
  if (t.kind == Kind::kInt) return t.i;
  if (t.kind == Kind::kUint && t.u <= static_cast<uint64_t>(INT64_MAX)) return static_cast<int64_t>(t.u);
  return Status::Corruption("msgpack: expected an integer");
}

Result<bool> MsgpackReader::ReadBool() {
  ASSIGN_OR_RETURN(Token t, Next());
  if (t.kind == Kind::kNil) return false;
  if (t.kind != Kind::kBool) return Status::Corruption("msgpack: expected a bool");
  return t.b;
}

Result<std::string> MsgpackReader::ReadBytes() {
  ASSIGN_OR_RETURN(Token t, Next());
  if (t.kind == Kind::kNil) return std::string();
  if (t.kind == Kind::kRaw) return std::move(t.raw);
  if (t.kind == Kind::kArray) {
    if (t.count > max_raw_) return Status::Corruption("msgpack: byte array too long");
    std::string out;
    for (uint32_t k = 0; k < t.count; ++k) {
      ASSIGN_OR_RETURN(uint64_t b, ReadUint(0xff));
      out.push_back(static_cast<char>(b));
    }
    return out;
  }
  return Status::Corruption("msgpack: expected a string or bytes");
}

Result<uint32_t> MsgpackReader::ReadMapHeader() {
  ASSIGN_OR_RETURN(Token t, Next());
  if (t.kind == Kind::kNil) return uint32_t{0};
  if (t.kind != Kind::kMap) return Status::Corruption("msgpack: expected a map");
  return t.count;
}

}  // namespace limits::ring::memberlist
