// Digests, LZW, dskit's packet framing and address handling, against vectors recorded from Go.
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ring/memberlist/digest.h"
#include "ring/memberlist/lzw.h"
#include "ring/memberlist/net_address.h"
#include "ring/memberlist/tcp_framing.h"

namespace limits::ring::memberlist {
namespace {

std::string Hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::string Md5Hex(std::string_view s) {
  const auto d = Md5(s);
  return Hex(std::string_view(reinterpret_cast<const char*>(d.data()), d.size()));
}

TEST(DigestTest, Md5AndCrc32MatchGo) {
  EXPECT_EQ(Md5Hex(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(Md5Hex("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(Md5Hex(std::string(64, 'a')), "014842d480b571495a4a0363793f7367");  // a whole extra block
  EXPECT_EQ(Md5Hex(std::string(57, 'b')), "6584e140d549b058be35b208813da484");  // length spills over
  EXPECT_EQ(Crc32Ieee("abc"), 891568578u);
  EXPECT_EQ(Crc32Ieee("123456789"), 3421780262u);
}

TEST(LzwTest, DecompressesWhatGoCompresses) {
  Result<std::string> shorter = LzwDecompress(FromHex("00d19461c3e60d0881040d222c787060c180"), 1 << 20);
  ASSERT_TRUE(shorter.ok()) << shorter.status().ToString();
  EXPECT_EQ(*shorter, "hello hello hello hello");

  // 9000 bytes whose codes fill the table (Go's writer then sends a clear code) and widen
  // from 9 to 12 bits; see testdata/lzw_go.hex.
  std::ifstream in(std::string(TESTDATA_DIR) + "/lzw_go.hex");
  ASSERT_TRUE(in.good());
  std::string line;
  std::string hex;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') hex += line;
  }
  std::string expected;
  uint32_t x = 12345;
  for (int i = 0; i < 6000; ++i) {
    x = x * 1103515245u + 12345u;
    expected.push_back(static_cast<char>((x >> 16) & 0xff));
  }
  while (expected.size() < 9000) expected += "the quick brown fox ";
  expected.resize(9000);
  Result<std::string> out = LzwDecompress(FromHex(hex), 1 << 20);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->size(), expected.size());
  EXPECT_TRUE(*out == expected);
}

TEST(LzwTest, RefusesBadStreams) {
  const std::string good = FromHex("00d19461c3e60d0881040d222c787060c180");
  EXPECT_TRUE(LzwDecompress(good.substr(0, good.size() - 2), 1 << 20).status().IsCorruption());  // no end code
  EXPECT_TRUE(LzwDecompress(std::string("\xff\xff\xff", 3), 1 << 20).status().IsCorruption());   // code 511 first
  Result<std::string> capped = LzwDecompress(good, 10);
  ASSERT_FALSE(capped.ok());
  EXPECT_NE(capped.status().message().find("exceeds"), std::string::npos);
  EXPECT_TRUE(LzwDecompress("", 10).status().IsCorruption());
}

TEST(TcpFramingTest, PacketFrameRoundTripsAndChecksItsDigest) {
  const std::string frame = EncodePacketFrame("10.0.0.1:7946", "payload");
  ASSERT_EQ(frame[0], kFramePacket);
  EXPECT_EQ(frame[1], 13);
  EXPECT_EQ(frame.substr(2, 13), "10.0.0.1:7946");
  EXPECT_EQ(frame.size(), 2 + 13 + 7 + kDigestSize);
  Result<PacketFrame> back = DecodePacketFrame(std::string_view(frame).substr(1));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->from, "10.0.0.1:7946");
  EXPECT_EQ(back->payload, "payload");

  std::string flipped = frame;
  flipped[16] ^= 1;  // a payload byte
  EXPECT_NE(DecodePacketFrame(std::string_view(flipped).substr(1)).status().message().find("digest mismatch"),
            std::string::npos);
  EXPECT_TRUE(DecodePacketFrame(std::string_view(frame).substr(1, 20)).status().IsCorruption());  // cut
  EXPECT_TRUE(DecodePacketFrame("\x30" "ab").status().IsCorruption());  // address longer than the data
  EXPECT_TRUE(DecodePacketFrame("").status().IsCorruption());
  // An empty payload still carries its digest.
  Result<PacketFrame> empty = DecodePacketFrame(std::string_view(EncodePacketFrame("", "")).substr(1));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->payload, "");
}

TEST(NetAddressTest, HostPortsAndRawIps) {
  Result<HostPort> v4 = SplitHostPort("10.0.0.1:7946");
  ASSERT_TRUE(v4.ok());
  EXPECT_EQ(v4->host, "10.0.0.1");
  EXPECT_EQ(v4->port, 7946);
  Result<HostPort> v6 = SplitHostPort("[::1]:80");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(SplitHostPort("loki-memberlist.loki.svc", 7946)->port, 7946);
  EXPECT_EQ(SplitHostPort("::1", 7946)->host, "::1");
  EXPECT_FALSE(SplitHostPort("host").ok());  // no port and no default
  EXPECT_FALSE(SplitHostPort("host:99999").ok());
  EXPECT_FALSE(SplitHostPort(":80").ok());
  EXPECT_EQ(JoinHostPort("::1", 80), "[::1]:80");
  EXPECT_EQ(JoinHostPort("1.2.3.4", 80), "1.2.3.4:80");
  EXPECT_EQ(IpToString(*IpFromString("192.168.1.2")), "192.168.1.2");
  EXPECT_EQ(IpToString(std::string("\0\0\0\0\0\0\0\0\0\0\xff\xff\x7f\0\0\x01", 16)), "127.0.0.1");
  EXPECT_EQ(IpToString("abc"), "");
  EXPECT_FALSE(IpFromString("example.com").ok());
  Result<std::vector<std::string>> local = ResolveHost("127.0.0.1");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->front(), "127.0.0.1");
}

}  // namespace
}  // namespace limits::ring::memberlist
