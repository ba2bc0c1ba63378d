#include "kafka/record_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

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
// repeated fields, wrong wire types, truncations and random bytes: the same verdict and the
// same fields every time.
TEST(RecordCodecTest, AgreesWithProtobufOnValidMutatedAndRandomBytes) {
  std::mt19937_64 rng(42);
  auto random_string = [&](size_t max) {
    std::string s(rng() % (max + 1), '\0');
    for (char& ch : s) ch = static_cast<char>(rng() % 3 == 0 ? rng() % 256 : 'a' + rng() % 26);
    return s;
  };
  auto varint = [](uint64_t v) {
    std::string s;
    while (v >= 0x80) {
      s.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
    return s;
  };
  auto field = [&](uint32_t number, uint32_t type, const std::string& payload) {
    std::string out = varint((uint64_t{number} << 3) | type);
    if (type == 2) out += varint(payload.size());
    out += payload;
    return out;
  };
  size_t agreed_ok = 0, agreed_fail = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    switch (i % 5) {
      case 0:  // valid
        bytes = EncodeRecordValue(random_string(8), random_string(12), rng(), rng() % 100000, random_string(6));
        break;
      case 1: {  // valid plus unknown fields of every wire type, repeated fields, a second metadata
        std::string tenant(1, 't');
        tenant += random_string(5);
        bytes = EncodeRecordValue("z", tenant, rng(), rng(), "p") + field(9, 0, varint(rng())) +
                field(10, 2, random_string(10)) + field(11, 5, "abcd") + field(12, 1, "abcdefgh") +
                field(2, 2, "t2") + field(3, 2, field(2, 0, varint(rng() % 1000)) + field(7, 2, "x"));
        break;
      }
      case 2:  // a known field number with the wrong wire type (protobuf keeps it as unknown)
        bytes = EncodeRecordValue("z", "t", 1, 2, "p") + field(1, 0, varint(5)) + field(3, 5, "abcd");
        break;
      case 3: {  // truncated or with a flipped byte
        bytes = EncodeRecordValue(random_string(4), "tenant", rng(), rng(), random_string(4));
        if (rng() % 2) bytes.resize(rng() % (bytes.size() + 1));
        else if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      }
      default:
        bytes = random_string(40);
    }
    RecordView ours, theirs;
    proto::StreamMetadataRecord keep;
    const bool ok = DecodeRecordValue(bytes, &ours);
    const bool want = ProtobufDecode(bytes, &theirs, &keep);
    ASSERT_EQ(ok, want) << "case " << i % 5 << " bytes " << testing::PrintToString(bytes);
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
