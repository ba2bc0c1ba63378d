#include "kafka/record_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "proto/limits.pb.h"
#include "testing/wire_bytes.h"

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

TEST(RecordCodecTest, DecodesWhatItEncodes) {
  const std::string value = EncodeRecordValue("zone-a", "ténant", 0xfeedfacecafebeef, 12345, "gold");
  RecordView v;  // views into `value`
  ASSERT_TRUE(DecodeRecordValue(value, &v));
  EXPECT_EQ(v.zone, "zone-a");
  EXPECT_EQ(v.tenant, "ténant");
  EXPECT_EQ(v.stream_hash, 0xfeedfacecafebeefull);
  EXPECT_EQ(v.total_size, 12345u);
  EXPECT_EQ(v.policy, "gold");
}

// What protobuf makes of `bytes`, in the decoder's terms.
bool ProtobufDecode(const std::string& bytes, RecordView* out, proto::StreamMetadataRecord* keep) {
  if (!keep->ParseFromString(bytes)) return false;
  if (keep->tenant().empty() || !keep->has_metadata()) return false;
  out->zone = keep->zone();
  out->tenant = keep->tenant();
  out->stream_hash = keep->metadata().streamhash();
  out->total_size = keep->metadata().totalsize();
  out->policy = keep->metadata().ingestionpolicy();
  return true;
}

// The hand-written decoder against protobuf's parser on valid records with unknown fields,
// repeated fields, wrong wire types, groups, truncations and random bytes: the same verdict and the
// same fields every time.
TEST(RecordCodecTest, AgreesWithProtobufOnValidMutatedAndRandomBytes) {
  std::mt19937_64 rng(42);
  auto random_string = [&](size_t max) { return testing::RandomBytes(rng, max); };
  using testing::Field;
  using testing::Varint;
  size_t agreed_ok = 0, agreed_fail = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    switch (i % 6) {
      case 0:  // valid
        bytes = EncodeRecordValue(random_string(8), random_string(12), rng(), rng() % 100000, random_string(6));
        break;
      case 1: {  // valid plus unknown fields of every wire type, repeated fields, a second metadata
        std::string tenant(1, 't');
        tenant += random_string(5);
        bytes = EncodeRecordValue("z", tenant, rng(), rng(), "p") + Field(9, 0, Varint(rng())) +
                Field(10, 2, random_string(10)) + Field(11, 5, "abcd") + Field(12, 1, "abcdefgh") +
                Field(2, 2, "t2") + Field(3, 2, Field(2, 0, Varint(rng() % 1000)) + Field(7, 2, "x"));
        break;
      }
      case 2:  // a known field number with the wrong wire type (protobuf keeps it as unknown)
        bytes = EncodeRecordValue("z", "t", 1, 2, "p") + Field(1, 0, Varint(5)) + Field(3, 5, "abcd");
        break;
      case 3: {  // truncated or with a flipped byte
        bytes = EncodeRecordValue(random_string(4), "tenant", rng(), rng(), random_string(4));
        if (rng() % 2) bytes.resize(rng() % (bytes.size() + 1));
        else if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      }
      case 4:  // unknown groups: closed, nested, unclosed, a stray end, too deep; inside metadata too
        bytes = EncodeRecordValue("z", "t", rng(), 2, "p") +
                std::vector<std::string>{Field(6, 3, Field(1, 0, Varint(3)) + Field(6, 4, "")),
                                         Field(6, 3, Field(7, 3, "") + Field(7, 4, "") + Field(6, 4, "")),
                                         Field(6, 3, Field(1, 0, Varint(3))), Field(6, 4, ""),
                                         Field(3, 2, testing::NestedGroups(9, 3)), testing::NestedGroups(6, 99),
                                         testing::NestedGroups(6, 100), testing::NestedGroups(6, 101)}[rng() % 8];
        break;
      default:
        bytes = random_string(40);
    }
    RecordView ours, theirs;
    proto::StreamMetadataRecord keep;
    const bool ok = DecodeRecordValue(bytes, &ours);
    const bool want = ProtobufDecode(bytes, &theirs, &keep);
    ASSERT_EQ(ok, want) << "case " << i % 6 << " bytes " << ::testing::PrintToString(bytes);
    if (!ok) {
      ++agreed_fail;
      continue;
    }
    ++agreed_ok;
    EXPECT_EQ(ours.zone, theirs.zone);
    EXPECT_EQ(ours.tenant, theirs.tenant);
    EXPECT_EQ(ours.stream_hash, theirs.stream_hash);
    EXPECT_EQ(ours.total_size, theirs.total_size);
    EXPECT_EQ(ours.policy, theirs.policy);
  }
  // Both verdicts were exercised.
  EXPECT_GT(agreed_ok, 5000u);
  EXPECT_GT(agreed_fail, 1000u);
}

}  // namespace
}  // namespace limits::kafka
