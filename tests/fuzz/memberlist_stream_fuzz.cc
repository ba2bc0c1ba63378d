// Feeds: any bytes as a memberlist stream connection after its stream type byte (dskit's TCP
// transport), read through a real socket pair by Connection and handed to
// Membership::HandleStream: optional label header, optional LZW compression, then push-pull
// (header, node states, the KV store's user state), ping or user message. The peer closes
// after sending; replies go to a socket nobody reads.
// Checks: nothing crashes, leaks or hangs (every read ends at the peer's close); the KV store
// still reads back its own state.
#include <fcntl.h>
#include <prometheus/registry.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "fuzz_check.h"
#include "kv_delegate.h"
#include "ring/memberlist/connection.h"
#include "ring/memberlist/kv_store.h"
#include "ring/memberlist/membership.h"
#include "testing/fake_clock.h"

namespace ml = limits::ring::memberlist;

namespace {

using limits::fuzz::KvDelegate;

ml::Metrics* metrics = nullptr;
// A socket pair's buffer holds the whole input: larger inputs are not run.
constexpr size_t kMaxInput = 64 * 1024;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  static prometheus::Registry registry;
  static ml::Metrics m(registry);
  metrics = &m;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > kMaxInput) return -1;  // not added to the corpus
  int fds[2];
  FUZZ_CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
  const int buf = 4 * kMaxInput;
  ::setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf);
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = ::send(fds[1], data + sent, size - sent, MSG_NOSIGNAL);
    FUZZ_CHECK(n > 0);
    sent += static_cast<size_t>(n);
  }
  ::shutdown(fds[1], SHUT_WR);
  ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);

  limits::testing::FakeClock clock;
  ml::KvStore kv(clock, ml::KvStoreOptions{});
  KvDelegate delegate(kv);
  ml::TcpTransport transport(ml::TransportOptions{}, *metrics);
  ml::MembershipOptions options;
  options.node_name = "self";
  options.advertise_host = "127.0.0.1";
  options.advertise_port = 7946;
  options.cluster_label = "fuzz";
  options.skip_label_check = true;
  ml::Membership membership(options, transport, delegate, *metrics);
  {
    ml::Connection conn(fds[0], "127.0.0.2:40000", 64u << 20);  // closes fds[0]
    membership.HandleStream(conn);
  }
  ::close(fds[1]);

  ml::KvStore fresh(clock, ml::KvStoreOptions{});
  FUZZ_CHECK(fresh.MergeRemoteState(kv.LocalState()).invalid == 0);
  return 0;
}
