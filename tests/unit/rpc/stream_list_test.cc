#include "rpc/stream_list.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "proto/limits.pb.h"
#include "rpc/limits_server.pb.h"
#include "testing/wire_bytes.h"

namespace limits::rpc {
namespace {

using testing::Field;
using testing::NestedGroups;
using testing::Varint;

struct Decoded {
  std::string tenant;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> streams;
};

bool Ours(const std::string& bytes, Decoded* out, size_t slice) {
  StreamList list;
  if (!list.Parse(bytes)) return false;
  out->tenant = std::string(list.tenant());
  std::vector<StreamUpdate> buffer;
  list.ForEachSlice(slice, &buffer, [&](std::span<const StreamUpdate> part) {
    EXPECT_LE(part.size(), slice);
    for (const StreamUpdate& s : part) out->streams.emplace_back(s.stream_hash, s.bytes, std::string(s.policy));
    return true;
  });
  EXPECT_EQ(out->streams.size(), list.size());
  return true;
}

bool Theirs(const std::string& bytes, Decoded* out) {
  proto::server::ExceedsLimitsRequest r;
  if (!r.ParseFromString(bytes)) return false;
  out->tenant = r.tenant();
  for (const auto& s : r.streams()) out->streams.emplace_back(s.streamhash(), s.totalsize(), s.ingestionpolicy());
  return true;
}

// The hand-written decoder against protobuf's parser on valid requests with unknown fields,
// repeated scalars, wrong wire types, truncations, flipped bytes and random bytes.
TEST(StreamListTest, AgreesWithProtobufOnValidMutatedAndRandomBytes) {
  std::mt19937_64 rng(7);
  auto random_string = [&](size_t max) { return testing::RandomBytes(rng, max); };
  auto valid = [&] {
    proto::ExceedsLimitsRequest r;
    r.set_tenant("tenant-" + std::to_string(rng() % 100));
    const int n = static_cast<int>(rng() % 12);
    for (int i = 0; i < n; ++i) {
      auto* s = r.add_streams();
      s->set_streamhash(rng() >> (rng() % 64));
      s->set_totalsize(rng() % 100000);
      if (rng() % 2) s->set_ingestionpolicy("policy-" + std::to_string(rng() % 5));
    }
    return r.SerializeAsString();
  };
  size_t agreed_ok = 0, agreed_fail = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    switch (i % 6) {
      case 0: bytes = valid(); break;
      case 1:  // unknown fields of every wire type, a second tenant, a stream with repeated scalars
        bytes = valid() + Field(9, 0, Varint(rng())) + Field(10, 2, random_string(10)) + Field(11, 5, "abcd") +
                Field(12, 1, "abcdefgh") + Field(1, 2, random_string(6)) +
                Field(2, 2, Field(1, 0, Varint(rng())) + Field(1, 0, Varint(rng())) + Field(7, 2, "x") +
                                Field(3, 2, random_string(300)) + Field(2, 0, Varint(rng() % 1000)));
        break;
      case 2:  // known field numbers with other wire types: unknown fields to protobuf
        bytes = valid() + Field(1, 0, Varint(5)) + Field(2, 5, "abcd") +
                Field(2, 2, Field(1, 2, "12345678") + Field(3, 0, Varint(3)) + Field(2, 1, "abcdefgh"));
        break;
      case 3:  // truncated or with a flipped byte
        bytes = valid();
        if (rng() % 2) bytes.resize(rng() % (bytes.size() + 1));
        else if (!bytes.empty()) bytes[rng() % bytes.size()] ^= static_cast<char>(1 + rng() % 255);
        break;
      case 4:  // groups (unclosed, stray ends, nested, too deep), field 0, an over-long varint
        bytes = valid() + std::vector<std::string>{
                              Field(4, 3, ""), Field(5, 4, ""), std::string("\x00\x01", 2),
                              std::string("\x08") + std::string(11, '\xff') + "\x01",
                              Field(6, 3, Field(7, 3, Field(1, 0, Varint(3)) + Field(7, 4, "")) + Field(6, 4, "")),
                              Field(6, 3, Field(1, 0, Varint(3)) + Field(7, 4, "")),
                              NestedGroups(6, 99), NestedGroups(6, 100), NestedGroups(6, 101)}[rng() % 9];
        break;
      default: bytes = random_string(40);
    }
    Decoded ours, theirs;
    const bool ok = Ours(bytes, &ours, 1 + rng() % 4);
    const bool want = Theirs(bytes, &theirs);
    ASSERT_EQ(ok, want) << "case " << i % 6 << " bytes " << ::testing::PrintToString(bytes);
    if (!ok) {
      ++agreed_fail;
      continue;
    }
    ++agreed_ok;
    EXPECT_EQ(ours.tenant, theirs.tenant);
    ASSERT_EQ(ours.streams, theirs.streams) << "case " << i % 6;
  }
  EXPECT_GT(agreed_ok, 8000u);
  EXPECT_GT(agreed_fail, 2000u);
}

TEST(StreamListTest, SlicesStopWhenAskedAndAnEmptyBodyIsARequestWithNothing) {
  proto::ExceedsLimitsRequest r;
  r.set_tenant("t");
  for (int i = 0; i < 25; ++i) r.add_streams()->set_streamhash(static_cast<uint64_t>(i) + 1);
  const std::string bytes = r.SerializeAsString();
  StreamList list;
  ASSERT_TRUE(list.Parse(bytes));
  EXPECT_EQ(list.size(), 25u);
  std::vector<StreamUpdate> buffer;
  std::vector<size_t> sizes;
  list.ForEachSlice(10, &buffer, [&](std::span<const StreamUpdate> part) {
    sizes.push_back(part.size());
    return true;
  });
  EXPECT_EQ(sizes, (std::vector<size_t>{10, 10, 5}));
  sizes.clear();
  list.ForEachSlice(10, &buffer, [&](std::span<const StreamUpdate> part) {
    sizes.push_back(part.size());
    return false;
  });
  EXPECT_EQ(sizes, (std::vector<size_t>{10}));

  ASSERT_TRUE(list.Parse(""));
  EXPECT_EQ(list.size(), 0u);
  EXPECT_EQ(list.tenant(), "");
}

// The results are what protobuf's parser reads as Loki's responses, including zero fields.
TEST(StreamListTest, ResultsParseAsLokisResponses) {
  std::string bytes;
  const std::vector<std::pair<uint64_t, uint64_t>> results = {
      {0xfeedfacecafebeef, 2}, {0, 1}, {7, 0}, {0, 0}, {~uint64_t{0}, ~uint64_t{0} >> 1}};
  for (const auto& [hash, value] : results) AppendResult(&bytes, hash, value);
  proto::UpdateRatesResponse rates;
  ASSERT_TRUE(rates.ParseFromString(bytes));
  ASSERT_EQ(rates.results_size(), static_cast<int>(results.size()));
  for (size_t i = 0; i < results.size(); ++i) {
    EXPECT_EQ(rates.results(static_cast<int>(i)).streamhash(), results[i].first);
    EXPECT_EQ(rates.results(static_cast<int>(i)).rate(), results[i].second);
  }
  // The same bytes protobuf writes.
  EXPECT_EQ(rates.SerializeAsString(), bytes);
  proto::ExceedsLimitsResponse exceeds;
  bytes.clear();
  AppendResult(&bytes, 42, 3);
  ASSERT_TRUE(exceeds.ParseFromString(bytes));
  EXPECT_EQ(exceeds.results(0).streamhash(), 42u);
  EXPECT_EQ(exceeds.results(0).reason(), 3u);

  const grpc::ByteBuffer buffer = ToByteBuffer(bytes);
  const ContiguousBody body(buffer);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body.view(), bytes);
}

// An answer with no results (every stream accepted) is zero bytes; gRPC aborts the process
// on a ByteBuffer that holds no buffer, so the empty answer must still be a valid one.
TEST(StreamListTest, AnEmptyResponseIsAValidEmptyBuffer) {
  const grpc::ByteBuffer buffer = ToByteBuffer("");
  EXPECT_TRUE(buffer.Valid());
  EXPECT_EQ(buffer.Length(), 0u);
  const ContiguousBody body(buffer);
  ASSERT_TRUE(body.ok());
  EXPECT_TRUE(body.view().empty());
}

TEST(StreamListTest, ABodyInSeveralSlicesIsReadWhole) {
  grpc::Slice parts[] = {grpc::Slice(std::string("\x0a\x01t")), grpc::Slice(std::string("\x12\x02\x08\x05"))};
  const grpc::ByteBuffer buffer(parts, 2);
  const ContiguousBody body(buffer);
  ASSERT_TRUE(body.ok());
  StreamList list;
  ASSERT_TRUE(list.Parse(body.view()));
  EXPECT_EQ(list.tenant(), "t");
  EXPECT_EQ(list.size(), 1u);
}

}  // namespace
}  // namespace limits::rpc
