#include "ring/ring_codec.h"

#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <snappy.h>

namespace limits::ring {
namespace {

::ring::Desc TwoInstances() {
  ::ring::Desc desc;
  ::ring::InstanceDesc& a = (*desc.mutable_ingesters())["limitsd-0"];
  a.set_addr("10.0.0.1:9095");
  a.set_timestamp(1764000000);
  a.set_state(::ring::ACTIVE);
  a.set_zone("zone-a");
  a.set_registered_timestamp(1763990000);
  a.set_id("limitsd-0");
  for (uint32_t t : {7u, 1000u, 4000000000u}) a.add_tokens(t);
  ::ring::InstanceDesc& b = (*desc.mutable_ingesters())["ingest-limits-1"];
  b.set_addr("10.0.0.2:9095");
  b.set_state(::ring::JOINING);
  return desc;
}

TEST(RingCodecTest, RoundTrips) {
  const ::ring::Desc desc = TwoInstances();
  Result<::ring::Desc> back = DecodeDesc(EncodeDesc(desc));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(*back, desc));  // map order is not fixed
  EXPECT_EQ(back->ingesters().at("limitsd-0").tokens(2), 4000000000u);
}

TEST(RingCodecTest, EncodesTheSameRingToTheSameBytes) {
  ::ring::Desc a = TwoInstances();
  for (int i = 0; i < 20; ++i) (*a.mutable_ingesters())["extra-" + std::to_string(i)].set_id(std::to_string(i));
  ::ring::Desc b;
  for (auto it = a.ingesters().begin(); it != a.ingesters().end(); ++it) (*b.mutable_ingesters())[it->first] = it->second;
  EXPECT_EQ(EncodeDesc(a), EncodeDesc(b));
  EXPECT_EQ(EncodeDesc(*DecodeDesc(EncodeDesc(a))), EncodeDesc(a));
}

TEST(RingCodecTest, IsSnappyOfTheProtobuf) {
  const ::ring::Desc desc = TwoInstances();
  std::string raw;
  ASSERT_TRUE(snappy::Uncompress(EncodeDesc(desc).data(), EncodeDesc(desc).size(), &raw));
  ::ring::Desc parsed;
  ASSERT_TRUE(parsed.ParseFromString(raw));
  EXPECT_EQ(parsed.ingesters_size(), 2);
}

TEST(RingCodecTest, KeepsFieldsOfANewerDskit) {
  // InstanceDesc field 99 (unknown here), varint 5: tag (99 << 3 | 0) = 0x98 0x06.
  ::ring::Desc desc = TwoInstances();
  std::string instance = desc.ingesters().at("limitsd-0").SerializeAsString() + std::string("\x98\x06\x05", 3);
  ::ring::InstanceDesc with_unknown;
  ASSERT_TRUE(with_unknown.ParseFromString(instance));
  (*desc.mutable_ingesters())["limitsd-0"] = with_unknown;
  Result<::ring::Desc> back = DecodeDesc(EncodeDesc(desc));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->ingesters().at("limitsd-0").SerializeAsString(), instance);
}

TEST(RingCodecTest, RejectsGarbage) {
  EXPECT_EQ(DecodeDesc("not snappy at all").status().code(), StatusCode::kCorruption);
  std::string compressed_garbage;
  const std::string garbage = "\xff\xff\xff\xff";
  snappy::Compress(garbage.data(), garbage.size(), &compressed_garbage);
  EXPECT_EQ(DecodeDesc(compressed_garbage).status().code(), StatusCode::kCorruption);
}

// Found by tests/fuzz/ring_value_fuzz: five bytes claiming 4 GiB made snappy allocate and
// zero it before finding the block short; now the block is checked first. (The allocation
// itself is caught by the fuzz build: corpus/ring_value/crash-snappy-length-4gib under
// libFuzzer's memory limit.)
TEST(RingCodecTest, AClaimedLengthTheBlockDoesNotHoldIsCorruption) {
  const std::string claim("\xff\xff\xff\xff\x0f", 5);  // a varint of 2^32 - 1, no data
  EXPECT_EQ(DecodeDesc(claim).status().code(), StatusCode::kCorruption);
}

}  // namespace
}  // namespace limits::ring
