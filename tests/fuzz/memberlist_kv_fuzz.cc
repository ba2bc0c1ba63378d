// Feeds: any bytes as a push-pull user state ([u32 BE length][KeyValuePair]..., dskit's
// LocalState) to KvStore::MergeRemoteState, and as one gossiped user message (a
// KeyValuePair) to KvStore::MergeMessage: the pairs, their codec and ring values (snappy +
// ring.Desc, merged by dskit's rules) all come from any member of the gossip cluster.
// Checks: merging what the store already holds (its own LocalState) changes nothing and
// finds nothing invalid; a fresh store reads that state without an invalid pair; every key
// reads back (Get, GetWithTombstones) and queued broadcasts are KeyValuePairs that merge.
#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "ring/memberlist/kv.pb.h"
#include "ring/memberlist/kv_store.h"
#include "testing/fake_clock.h"

namespace ml = limits::ring::memberlist;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = limits::fuzz::AsView(data, size);
  limits::testing::FakeClock clock;
  ml::KvStore store(clock, ml::KvStoreOptions{});
  const ml::MergeStats remote = store.MergeRemoteState(in);
  FUZZ_CHECK(remote.changed <= remote.pairs && remote.invalid <= remote.pairs + 1);
  const ml::MergeStats gossip = store.MergeMessage(in);
  FUZZ_CHECK(gossip.pairs == 1 && gossip.changed + gossip.invalid <= 1);

  const std::string state = store.LocalState();
  const ml::MergeStats again = store.MergeRemoteState(state);
  FUZZ_CHECK(again.invalid == 0 && again.changed == 0);
  ml::KvStore fresh(clock, ml::KvStoreOptions{});
  const ml::MergeStats copied = fresh.MergeRemoteState(state);
  FUZZ_CHECK(copied.invalid == 0);

  for (const ml::KeyInfo& k : store.Keys()) {
    (void)store.Get(k.key);
    (void)store.GetWithTombstones(k.key);
  }
  store.CleanupObsolete();
  for (const std::string& msg : store.TakeBroadcasts(3, 1 << 20, 3)) {
    ::memberlist::KeyValuePair pair;
    FUZZ_CHECK(pair.ParseFromString(msg));
    FUZZ_CHECK(fresh.MergeMessage(msg).invalid == 0);
  }
  return 0;
}
