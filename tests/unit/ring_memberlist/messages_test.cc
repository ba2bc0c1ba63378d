#include "ring/memberlist/messages.h"

#include <gtest/gtest.h>

#include "ring/memberlist/digest.h"
#include "ring/memberlist/net_address.h"

namespace limits::ring::memberlist {
namespace {

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  return out;
}

// Recorded from hashicorp/go-msgpack 0.5.5 (Debian) encoding memberlist's structs: it writes
// the fields in name order, raw strings and bytes, and a nil []byte as nil.
constexpr char kGoPing[] =
    "85a44e6f6465a66e6f64652d61a55365714e6f07aa536f7572636541646472a47f000001aa536f757263654e6f6465a66c6f6b692d31"
    "aa536f75726365506f7274cd1f0a";
constexpr char kGoAlive[] =
    "86a441646472b000000000000000000000ffff0a000001ab496e6361726e6174696f6ece00011170a44d657461c0a44e6f6465a66c6f6b69"
    "2d30a4506f7274cd1f0aa356736ea6010502000000";
constexpr char kGoHeader[] = "83a44a6f696ec3a54e6f646573ccc8ac5573657253746174654c656ece00011170";
constexpr char kGoNode[] =
    "87a441646472a47f000001ab496e6361726e6174696f6e03a44d657461c0a44e616d65da00286e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e"
    "6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6e6ea4506f727450a5537461746502a356736ea6010502000000";

TEST(MessagesTest, DecodesWhatGoMemberlistEncodes) {
  Result<PingMsg> ping = DecodeBody<PingMsg>(FromHex(kGoPing));
  ASSERT_TRUE(ping.ok()) << ping.status().ToString();
  EXPECT_EQ(ping->seq_no, 7u);
  EXPECT_EQ(ping->node, "node-a");
  EXPECT_EQ(IpToString(ping->source_addr), "127.0.0.1");
  EXPECT_EQ(ping->source_port, 7946);
  EXPECT_EQ(ping->source_node, "loki-1");

  Result<AliveMsg> alive = DecodeBody<AliveMsg>(FromHex(kGoAlive));
  ASSERT_TRUE(alive.ok());
  EXPECT_EQ(alive->incarnation, 70000u);
  EXPECT_EQ(alive->node, "loki-0");
  EXPECT_EQ(alive->addr.size(), 16u);  // Go's net.IP: IPv4 in its 16-byte form
  EXPECT_EQ(IpToString(alive->addr), "10.0.0.1");
  EXPECT_EQ(alive->port, 7946);
  EXPECT_EQ(alive->meta, "");
  EXPECT_EQ(alive->vsn, OurVsn());

  Result<PushPullHeader> header = DecodeBody<PushPullHeader>(FromHex(kGoHeader));
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->nodes, 200);
  EXPECT_EQ(header->user_state_len, 70000);
  EXPECT_TRUE(header->join);

  Result<PushNodeState> node = DecodeBody<PushNodeState>(FromHex(kGoNode));
  ASSERT_TRUE(node.ok()) << node.status().ToString();
  EXPECT_EQ(node->name, std::string(40, 'n'));
  EXPECT_EQ(node->port, 80);
  EXPECT_EQ(node->incarnation, 3u);
  EXPECT_EQ(node->state, static_cast<int64_t>(NodeStateType::kDead));
}

TEST(MessagesTest, OurEncodingsRoundTripAndOmitEmptyOptionalFields) {
  PingMsg p;
  p.seq_no = 300;
  const std::string bare = EncodeMessage(MessageType::kPing, p);
  EXPECT_EQ(bare[0], 0);
  // SeqNo and Node only, as Go writes them (same bytes, field order aside).
  EXPECT_EQ(bare.size(), FromHex("82a44e6f6465a0a55365714e6fcd012c").size() + 1);
  p.source_addr = *IpFromString("::1");
  p.source_port = 1;
  p.source_node = "me";
  Result<PingMsg> back = DecodeBody<PingMsg>(std::string_view(EncodeMessage(MessageType::kPing, p)).substr(1));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->seq_no, 300u);
  EXPECT_EQ(IpToString(back->source_addr), "::1");
  EXPECT_EQ(back->source_node, "me");

  IndirectPingMsg ind{9, std::string("\x7f\0\0\x01", 4), 7946, "target", true, "", 0, ""};
  Result<IndirectPingMsg> ind2 = DecodeBody<IndirectPingMsg>(std::string_view(EncodeMessage(MessageType::kIndirectPing, ind)).substr(1));
  ASSERT_TRUE(ind2.ok());
  EXPECT_TRUE(ind2->nack);
  EXPECT_EQ(ind2->node, "target");
  EXPECT_EQ(IpToString(ind2->target), "127.0.0.1");

  PushNodeState n{"x", std::string("\x0a\0\0\x02", 4), 7946, "", 5, 3, OurVsn()};
  Result<PushNodeState> n2 = DecodeBody<PushNodeState>(std::string_view(EncodeMessage(MessageType::kPushPull, n)).substr(1));
  ASSERT_TRUE(n2.ok());
  EXPECT_EQ(n2->state, 3);
  EXPECT_EQ(n2->vsn, OurVsn());
}

TEST(MessagesTest, UnknownFieldsAreSkipped) {
  MsgpackWriter w;
  w.MapHeader(3);
  w.Key("Future");
  w.ArrayHeader(2);
  w.Uint(1);
  w.Raw("x");
  w.Key("SeqNo");
  w.Uint(5);
  w.Key("Payload");
  w.Raw("p");
  Result<AckMsg> ack = DecodeBody<AckMsg>(w.bytes());
  ASSERT_TRUE(ack.ok());
  EXPECT_EQ(ack->seq_no, 5u);
  EXPECT_EQ(ack->payload, "p");
}

TEST(MessagesTest, CompoundMessagesSplitAndReportTruncation) {
  const std::string c = EncodeCompound({"\x02one", "\x08two-two"});
  ASSERT_EQ(static_cast<uint8_t>(c[0]), static_cast<uint8_t>(MessageType::kCompound));
  Result<CompoundParts> parts = DecodeCompound(std::string_view(c).substr(1));
  ASSERT_TRUE(parts.ok());
  ASSERT_EQ(parts->parts.size(), 2u);
  EXPECT_EQ(parts->parts[1], "\x08two-two");
  EXPECT_EQ(parts->truncated, 0);
  Result<CompoundParts> cut = DecodeCompound(std::string_view(c).substr(1, c.size() - 3));
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->parts.size(), 1u);
  EXPECT_EQ(cut->truncated, 1);
  EXPECT_FALSE(DecodeCompound("\x05\x00").ok());  // lengths missing
  EXPECT_FALSE(DecodeCompound("").ok());
}

TEST(MessagesTest, LabelAndCrcHeaders) {
  EXPECT_EQ(LabelHeader(""), "");
  const std::string labelled = LabelHeader("loki") + "\x04rest";
  Result<std::pair<std::string, std::string_view>> l = StripPacketLabel(labelled);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->first, "loki");
  EXPECT_EQ(l->second, "\x04rest");
  Result<std::pair<std::string, std::string_view>> none = StripPacketLabel("\x04rest");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->first, "");
  EXPECT_FALSE(StripPacketLabel(std::string("\xf4\x00x", 3)).ok());  // present but empty
  EXPECT_FALSE(StripPacketLabel("\xf4\x09lo").ok());                  // cut short
  const std::string crc = WithCrc("abc");
  ASSERT_EQ(crc.size(), 8u);
  EXPECT_EQ(static_cast<uint8_t>(crc[0]), 12);
  // 891568578 = Go's crc32.ChecksumIEEE("abc"), big-endian after the type byte.
  EXPECT_EQ(crc.substr(1, 4), std::string("\x35\x24\x41\xc2", 4));
}

}  // namespace
}  // namespace limits::ring::memberlist
