// TestEtcd: a real etcd server (Debian's etcd-server, /usr/bin/etcd) for one test, on
// loopback ports the kernel picked and a fresh data directory; stopped (and its directory
// removed) with the fixture. Kill() and Restart() simulate an outage on the same ports and
// data. Not thread-safe: one test thread drives it.
#pragma once

#include <sys/types.h>

#include <string>

#include "testing/temp_dir.h"

namespace limits::testing {

inline constexpr char kEtcdBinary[] = "/usr/bin/etcd";

class TestEtcd {
 public:
  // TLS on the client URL (https://): the server's certificate and key, and with
  // client_ca the client certificates it requires (--client-cert-auth).
  struct Tls {
    std::string cert, key, client_ca;
  };
  // Starts etcd and waits until it answers /health; check ok() (and log() when it is not).
  explicit TestEtcd(Tls tls = {});
  ~TestEtcd();
  TestEtcd(const TestEtcd&) = delete;
  TestEtcd& operator=(const TestEtcd&) = delete;

  bool ok() const { return pid_ > 0; }
  // host:port of the client URL (what [ring] etcd_endpoints takes).
  std::string endpoint() const { return "127.0.0.1:" + std::to_string(client_port_); }
  int client_port() const { return client_port_; }
  // SIGKILL, as a crashed or unreachable etcd.
  void Kill();
  // Starts it again on the same ports and data directory; false when it did not come up.
  bool Restart();
  // etcd's own log (stderr).
  std::string log() const;

 private:
  bool Launch();

  TempDir dir_;
  Tls tls_;
  int metrics_port_ = 0;  // plain /health, whatever the client URL speaks
  int client_port_ = 0;
  int peer_port_ = 0;
  pid_t pid_ = -1;
};

// A TCP port on 127.0.0.1 the kernel just handed out (bound, then released): for programs
// that cannot bind port 0 themselves and report it.
int PickFreePort();

}  // namespace limits::testing
