#include "kafka/record_codec.h"

#include <gtest/gtest.h>

#include "proto/limits.pb.h"

namespace limits::kafka {
namespace {

TEST(RecordCodecTest, ValueIsLokisStreamMetadataRecord) {
  const std::string value = EncodeRecordValue("zone-a", "tenant-a", 0xfeedfacecafebeef, 12345, "gold");
  proto::StreamMetadataRecord r;
  ASSERT_TRUE(r.ParseFromString(value));
  EXPECT_EQ(r.zone(), "zone-a");
  EXPECT_EQ(r.tenant(), "tenant-a");
  EXPECT_EQ(r.metadata().streamhash(), 0xfeedfacecafebeefull);
  EXPECT_EQ(r.metadata().totalsize(), 12345u);
  EXPECT_EQ(r.metadata().ingestionpolicy(), "gold");
}

TEST(RecordCodecTest, WireBytesMatchTheFieldNumbers) {
  // zone = 1 (len-delimited), tenant = 2, metadata = 3 { streamHash = 1, totalSize = 2, policy = 3 }.
  const std::string value = EncodeRecordValue("z", "t", 1, 2, "p");
  const std::string expected = std::string("\x0a\x01z\x12\x01t\x1a\x07\x08\x01\x10\x02\x1a\x01p", 15);
  EXPECT_EQ(value, expected);
}

}  // namespace
}  // namespace limits::kafka
