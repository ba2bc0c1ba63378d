// dskit's KV layer: Cas semantics, gossip and push-pull merges, keys of other codecs.
#include "ring/memberlist/kv_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ring/memberlist/kv.pb.h"
#include "ring/ring_codec.h"
#include "testing/fake_clock.h"

namespace limits::ring::memberlist {
namespace {

using testing::FakeClock;

KvStoreOptions Fast() {
  KvStoreOptions o;
  o.no_change_retry_ms = 0;
  return o;
}

::ring::InstanceDesc Inst(int64_t ts, ::ring::InstanceState state, const std::string& addr = "a:1") {
  ::ring::InstanceDesc i;
  i.set_addr(addr);
  i.set_timestamp(ts);
  i.set_state(state);
  return i;
}

KvClient::CasFn Put(const std::string& id, ::ring::InstanceDesc inst) {
  return [id, inst](::ring::Desc& d) -> Result<KvClient::CasAction> {
    (*d.mutable_ingesters())[id] = inst;
    return KvClient::CasAction::kWrite;
  };
}

std::string Pair(const std::string& key, const ::ring::Desc& desc, const std::string& codec = kRingCodecId) {
  ::memberlist::KeyValuePair p;
  p.set_key(key);
  p.set_value(codec == kRingCodecId ? EncodeDesc(desc) : "opaque-bytes");
  p.set_codec(codec);
  return p.SerializeAsString();
}

::ring::Desc RingOf(std::initializer_list<std::pair<std::string, ::ring::InstanceDesc>> entries) {
  ::ring::Desc d;
  for (const auto& [id, inst] : entries) (*d.mutable_ingesters())[id] = inst;
  return d;
}

// Sends everything queued until nothing is left (each message goes out several times).
void Drain(KvStore& kv) {
  while (!kv.TakeBroadcasts(3, 1 << 20, 1).empty()) {
  }
}

// The KeyValuePairs the store would gossip now.
std::vector<::memberlist::KeyValuePair> Sent(KvStore& kv) {
  std::vector<::memberlist::KeyValuePair> out;
  for (const auto& m : kv.TakeBroadcasts(3, 1 << 20, 1)) {
    ::memberlist::KeyValuePair p;
    EXPECT_TRUE(p.ParseFromString(m));
    out.push_back(p);
  }
  return out;
}

TEST(KvStoreTest, CasCreatesMergesAndGossipsOnlyTheChange) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  const int64_t now = clock.NowSeconds();
  ASSERT_TRUE(kv.Cas("ring", Put("me", Inst(now, ::ring::JOINING))).ok());
  ASSERT_TRUE(kv.MergeMessage(Pair("ring", RingOf({{"other", Inst(now, ::ring::ACTIVE)}}))).changed == 1);
  Drain(kv);
  clock.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(kv.Cas("ring", Put("me", Inst(now + 1, ::ring::ACTIVE))).ok());
  const auto sent = Sent(kv);
  ASSERT_EQ(sent.size(), 1u);
  Result<::ring::Desc> change = DecodeDesc(sent[0].value());
  ASSERT_TRUE(change.ok());
  EXPECT_EQ(change->ingesters_size(), 1);  // "me" only, not "other"
  EXPECT_EQ(change->ingesters().at("me").state(), ::ring::ACTIVE);
  Result<std::optional<::ring::Desc>> got = kv.Get("ring");
  ASSERT_TRUE(got.ok() && got->has_value());
  EXPECT_EQ((*got)->ingesters_size(), 2);
}

TEST(KvStoreTest, RemovingAnEntryLeavesATombstoneClientsDoNotSee) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  const int64_t now = clock.NowSeconds();
  ASSERT_TRUE(kv.Cas("ring", Put("me", Inst(now, ::ring::ACTIVE))).ok());
  Drain(kv);
  ASSERT_TRUE(kv.Cas("ring", [](::ring::Desc& d) -> Result<KvClient::CasAction> {
                  d.mutable_ingesters()->erase("me");
                  return KvClient::CasAction::kWrite;
                }).ok());
  EXPECT_EQ((*kv.Get("ring"))->ingesters_size(), 0);
  const auto with = kv.GetWithTombstones("ring");
  ASSERT_EQ((*with)->ingesters_size(), 1);
  EXPECT_EQ((*with)->ingesters().at("me").state(), ::ring::LEFT);
  const auto sent = Sent(kv);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(DecodeDesc(sent[0].value())->ingesters().at("me").state(), ::ring::LEFT);
  // Past left_timeout the tombstone goes at the next change.
  clock.Advance(std::chrono::minutes(6));
  ASSERT_TRUE(kv.Cas("ring", Put("x", Inst(clock.NowSeconds(), ::ring::ACTIVE))).ok());
  EXPECT_EQ((*kv.GetWithTombstones("ring"))->ingesters().count("me"), 0u);
}

TEST(KvStoreTest, SkipLeavesTheStoreAndTheErrorOfFnComesBack) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  EXPECT_TRUE(kv.Cas("ring", [](::ring::Desc&) -> Result<KvClient::CasAction> { return KvClient::CasAction::kSkip; }).ok());
  EXPECT_FALSE(kv.Get("ring")->has_value());
  Status s = kv.Cas("ring", [](::ring::Desc&) -> Result<KvClient::CasAction> { return Status::InvalidArgument("nope"); });
  EXPECT_EQ(s, Status::InvalidArgument("nope"));
  EXPECT_TRUE(Sent(kv).empty());
}

TEST(KvStoreTest, ASameSecondChangeIsRetriedWithANewerTimestamp) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  const int64_t now = clock.NowSeconds();
  ASSERT_TRUE(kv.Cas("ring", Put("me", Inst(now, ::ring::JOINING))).ok());
  int calls = 0;
  // Takes "now" once, as a caller computing the time outside its function does.
  ASSERT_TRUE(kv.Cas("ring", [&](::ring::Desc& d) -> Result<KvClient::CasAction> {
                  ++calls;
                  (*d.mutable_ingesters())["me"] = Inst(now, ::ring::ACTIVE);
                  return KvClient::CasAction::kWrite;
                }).ok());
  EXPECT_EQ(calls, 2);  // dskit's retry after "no change detected"
  const auto me = (*kv.Get("ring"))->ingesters().at("me");
  EXPECT_EQ(me.state(), ::ring::ACTIVE);
  EXPECT_EQ(me.timestamp(), now + 1);
  // Writing the very same value is no change: it fails after the retries, as in dskit.
  Status s = kv.Cas("ring", Put("me", me));
  EXPECT_NE(s.message().find("no change detected"), std::string::npos) << s.ToString();
}

TEST(KvStoreTest, PushPullStateRoundTripsAndKeepsOtherCodecsUntouched) {
  FakeClock clock;
  KvStore a(clock, Fast());
  const int64_t now = clock.NowSeconds();
  ASSERT_TRUE(a.Cas("collectors/ingest-limits", Put("me", Inst(now, ::ring::ACTIVE))).ok());
  ASSERT_EQ(a.MergeMessage(Pair("collectors/ring", RingOf({{"ingester-1", Inst(now, ::ring::ACTIVE)}}))).changed, 1);
  ASSERT_EQ(a.MergeMessage(Pair("other/key", {}, "someCodec")).changed, 1);
  EXPECT_FALSE(a.Get("other/key").ok());  // not a ring: never handed to the lifecycler

  KvStore b(clock, Fast());
  const MergeStats stats = b.MergeRemoteState(a.LocalState());
  EXPECT_EQ(stats.pairs, 3);
  EXPECT_EQ(stats.changed, 3);
  EXPECT_EQ(stats.invalid, 0);
  EXPECT_EQ((*b.Get("collectors/ring"))->ingesters().count("ingester-1"), 1u);
  EXPECT_EQ((*b.Get("collectors/ingest-limits"))->ingesters().count("me"), 1u);
  // The opaque value goes on exactly as received.
  ::memberlist::KeyValuePair p;
  const std::string state = b.LocalState();
  bool found = false;
  for (size_t pos = 0; pos + 4 <= state.size();) {
    const uint32_t len = static_cast<uint32_t>(static_cast<uint8_t>(state[pos])) << 24 |
                         static_cast<uint32_t>(static_cast<uint8_t>(state[pos + 1])) << 16 |
                         static_cast<uint32_t>(static_cast<uint8_t>(state[pos + 2])) << 8 |
                         static_cast<uint8_t>(state[pos + 3]);
    ASSERT_TRUE(p.ParseFromString(state.substr(pos + 4, len)));
    if (p.key() == "other/key") {
      found = true;
      EXPECT_EQ(p.codec(), "someCodec");
      EXPECT_EQ(p.value(), "opaque-bytes");
    }
    pos += 4 + len;
  }
  EXPECT_TRUE(found);
  // Merging the same state again changes nothing.
  EXPECT_EQ(b.MergeRemoteState(a.LocalState()).changed, 0);
}

TEST(KvStoreTest, BadInputIsCountedAndLeavesTheStore) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  EXPECT_EQ(kv.MergeMessage("\xff\xff\xff").invalid, 1);
  ::memberlist::KeyValuePair bad;
  bad.set_key("ring");
  bad.set_codec(kRingCodecId);
  bad.set_value("not snappy");
  EXPECT_EQ(kv.MergeMessage(bad.SerializeAsString()).invalid, 1);
  EXPECT_EQ(kv.MergeMessage(Pair("", RingOf({{"x", Inst(5, ::ring::ACTIVE)}}))).invalid, 1);  // empty key
  const MergeStats cut = kv.MergeRemoteState(std::string("\x00\x00\x01\x00" "abc", 7));
  EXPECT_EQ(cut.invalid, 1);
  EXPECT_NE(cut.error.find("left"), std::string::npos);
  EXPECT_TRUE(kv.Keys().empty());
  EXPECT_TRUE(Sent(kv).empty());
}

TEST(KvStoreTest, ForwardsWhatARemoteUpdateChangedAndDeletionsDoNotReviveKeys) {
  FakeClock clock;
  KvStore kv(clock, Fast());
  ASSERT_EQ(kv.MergeMessage(Pair("ring", RingOf({{"x", Inst(10, ::ring::ACTIVE)}, {"y", Inst(10, ::ring::ACTIVE)}}))).changed, 1);
  Drain(kv);
  ASSERT_EQ(kv.MergeMessage(Pair("ring", RingOf({{"x", Inst(11, ::ring::ACTIVE)}, {"y", Inst(10, ::ring::ACTIVE)}}))).changed, 1);
  const auto sent = Sent(kv);
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(DecodeDesc(sent[0].value())->ingesters_size(), 1);  // only x
  Drain(kv);
  // An old message is no change and is not forwarded.
  EXPECT_EQ(kv.MergeMessage(Pair("ring", RingOf({{"x", Inst(9, ::ring::ACTIVE)}}))).changed, 0);
  EXPECT_TRUE(Sent(kv).empty());
  ::memberlist::KeyValuePair del;
  del.set_key("absent");
  del.set_codec(kRingCodecId);
  del.set_deleted(true);
  del.set_update_time_millis(clock.NowMillis());
  EXPECT_EQ(kv.MergeMessage(del.SerializeAsString()).changed, 0);
  EXPECT_FALSE(kv.Get("absent")->has_value());
}

}  // namespace
}  // namespace limits::ring::memberlist
