#include "ring/memberlist/msgpack.h"

#include <gtest/gtest.h>

namespace limits::ring::memberlist {
namespace {

std::string Hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string Bytes(std::initializer_list<int> b) {
  std::string s;
  for (int x : b) s.push_back(static_cast<char>(x));
  return s;
}

TEST(MsgpackTest, WritesTheShortestFormsAsGoMsgpackDoes) {
  auto uint = [](uint64_t v) {
    MsgpackWriter w;
    w.Uint(v);
    return Hex(w.bytes());
  };
  EXPECT_EQ(uint(0), "00");
  EXPECT_EQ(uint(127), "7f");
  EXPECT_EQ(uint(128), "cc80");
  EXPECT_EQ(uint(7946), "cd1f0a");
  EXPECT_EQ(uint(70000), "ce00011170");
  EXPECT_EQ(uint(1ull << 40), "cf0000010000000000");
  auto sint = [](int64_t v) {
    MsgpackWriter w;
    w.Int(v);
    return Hex(w.bytes());
  };
  EXPECT_EQ(sint(200), "ccc8");  // go-msgpack writes non-negative ints as unsigned
  EXPECT_EQ(sint(-1), "ff");
  EXPECT_EQ(sint(-32), "e0");
  EXPECT_EQ(sint(-33), "d0df");
  EXPECT_EQ(sint(-129), "d1ff7f");
  EXPECT_EQ(sint(-40000), "d2ffff63c0");
  auto raw = [](size_t n) {
    MsgpackWriter w;
    w.Raw(std::string(n, 'x'));
    return Hex(w.bytes()).substr(0, 10);
  };
  EXPECT_EQ(raw(0), "a0");
  EXPECT_EQ(raw(31).substr(0, 2), "bf");
  EXPECT_EQ(raw(32).substr(0, 6), "da0020");  // str16: never str8 without WriteExt
  EXPECT_EQ(raw(65536).substr(0, 10), "db00010000");
  MsgpackWriter w;
  w.MapHeader(3);
  w.ArrayHeader(16);
  w.Nil();
  w.Bool(true);
  w.Bool(false);
  EXPECT_EQ(Hex(w.bytes()), "83dc0010c0c3c2");
}

TEST(MsgpackTest, ReadsEveryForm) {
  const std::string in = Bytes({0x05, 0xcc, 0xff, 0xcd, 0x01, 0x00, 0xce, 0, 1, 0, 0, 0xd0, 0x80, 0xd1, 0xff, 0xfe,
                                0xd9, 2, 'h', 'i', 0xc4, 1, 'b', 0xc5, 0, 1, 'c', 0xc6, 0, 0, 0, 1, 'd', 0xc0,
                                0xd0, 0x05});
  SpanSource src(in);
  MsgpackReader r(src);
  EXPECT_EQ(*r.ReadUint(), 5u);
  EXPECT_EQ(*r.ReadUint(), 255u);
  EXPECT_EQ(*r.ReadUint(), 256u);
  EXPECT_EQ(*r.ReadUint(), 65536u);
  EXPECT_EQ(*r.ReadInt(), -128);
  EXPECT_EQ(*r.ReadInt(), -2);
  EXPECT_EQ(*r.ReadBytes(), "hi");
  EXPECT_EQ(*r.ReadBytes(), "b");
  EXPECT_EQ(*r.ReadBytes(), "c");
  EXPECT_EQ(*r.ReadBytes(), "d");
  EXPECT_EQ(*r.ReadBytes(), "");      // nil
  EXPECT_EQ(*r.ReadUint(), 5u);       // a positive int8 is still a valid unsigned
  EXPECT_FALSE(r.Next().ok());        // end of input
}

TEST(MsgpackTest, ByteSlicesMayArriveAsArraysOfInts) {
  const std::string in = Bytes({0x96, 1, 5, 2, 0, 0, 0});
  SpanSource src(in);
  MsgpackReader r(src);
  EXPECT_EQ(*r.ReadBytes(), Bytes({1, 5, 2, 0, 0, 0}));
}

TEST(MsgpackTest, SkipsNestedValuesFloatsAndExtensions) {
  const std::string in = Bytes({0x82, 0xa1, 'a', 0x92, 0xca, 0, 0, 0, 0, 0xd4, 1, 2, 0xa1, 'b', 0x81, 0x01, 0xc7, 2, 9,
                                1, 2, 0x2a});
  SpanSource src(in);
  MsgpackReader r(src);
  ASSERT_TRUE(r.Skip().ok());
  EXPECT_EQ(*r.ReadUint(), 42u);
}

TEST(MsgpackTest, RefusesTruncationDeepNestingTypeMismatchAndHugeRaws) {
  {
    const std::string in = Bytes({0xda, 0x00, 0x10, 'x'});
    SpanSource src(in);
    MsgpackReader r(src);
    EXPECT_TRUE(r.ReadBytes().status().IsCorruption());
  }
  {
    std::string in(40, static_cast<char>(0x91));
    in.push_back(0x01);
    SpanSource src(in);
    MsgpackReader r(src);
    EXPECT_TRUE(r.Skip().IsCorruption());
  }
  {
    const std::string in = Bytes({0xa1, 'x', 0xff, 0xcd, 0x01, 0x00, 0xc1});
    SpanSource src(in);
    MsgpackReader r(src);
    EXPECT_FALSE(r.ReadUint().ok());       // a string is not a number
    EXPECT_FALSE(r.ReadUint().ok());       // -1 is not unsigned
    EXPECT_FALSE(r.ReadUint(255).ok());    // 256 is out of range
    EXPECT_FALSE(r.Next().ok());           // 0xc1 is never valid
  }
  {
    const std::string in = Bytes({0xdb, 0x7f, 0xff, 0xff, 0xff});
    SpanSource src(in);
    MsgpackReader r(src, 1024);
    Result<std::string> s = r.ReadBytes();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.status().message().find("exceeds the limit"), std::string::npos);
  }
}

}  // namespace
}  // namespace limits::ring::memberlist
