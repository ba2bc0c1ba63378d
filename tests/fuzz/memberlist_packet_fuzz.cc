// Feeds: any bytes as one memberlist packet, the payload a gossip peer sends us over dskit's
// TCP transport, to Membership::HandlePacket: cluster label header, CRC header, compound and
// LZW-compressed messages (nested), ping / indirect ping / ack / nack / alive / suspect /
// dead, and user messages, which reach the KV store (KeyValuePair, ring values, merges) as
// MemberlistKv passes them. A fresh member per input (not started: no threads, no sockets;
// replies are queued on a transport that never sends).
// Checks: nothing crashes, leaks or hangs; every member in the table keeps either no protocol
// versions or exactly six; the store still reads back its own state.
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "fuzz_check.h"
#include "kv_delegate.h"
#include "ring/memberlist/kv_store.h"
#include "ring/memberlist/membership.h"
#include "testing/fake_clock.h"

namespace ml = limits::ring::memberlist;

namespace {

using limits::fuzz::KvDelegate;

ml::Metrics* metrics = nullptr;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  static prometheus::Registry registry;
  static ml::Metrics m(registry);
  metrics = &m;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  limits::testing::FakeClock clock;
  ml::KvStore kv(clock, ml::KvStoreOptions{});
  KvDelegate delegate(kv);
  ml::TcpTransport transport(ml::TransportOptions{}, *metrics);
  ml::MembershipOptions options;
  options.node_name = "self";
  options.advertise_host = "127.0.0.1";
  options.advertise_port = 7946;
  options.skip_label_check = true;  // labelled and unlabelled packets alike
  ml::Membership membership(options, transport, delegate, *metrics);

  membership.HandlePacket(std::string(limits::fuzz::AsView(data, size)), "127.0.0.2:7946");

  for (const ml::MemberView& m : membership.Members()) FUZZ_CHECK(m.vsn.empty() || m.vsn.size() == 6);
  ml::KvStore fresh(clock, ml::KvStoreOptions{});
  FUZZ_CHECK(fresh.MergeRemoteState(kv.LocalState()).invalid == 0);
  return 0;
}
