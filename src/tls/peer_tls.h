// PeerTls: TLS for a transport whose every member both listens and dials — dskit's memberlist
// TCP transport with tls_enabled. One certificate and key serve both roles; the CA (or the
// system's roots) verifies the peer we dial, by tls_server_name or the dialled address, and
// the certificate a dialling peer presents (chain only, any key usage: dskit presents its one
// certificate as client too). The context is rebuilt when a file changes on disk; files that
// do not load leave the last good context in place. Thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/result.h"
#include "tls/reloading_context.h"

namespace limits::tls {

struct PeerTlsOptions {
  std::string cert_file = "";
  std::string key_file = "";
  std::string ca_file = "";      // "": the system's roots
  std::string server_name = "";  // the name a dialled peer's certificate must carry; "": its address
  bool insecure_skip_verify = false;
  std::chrono::seconds reload_interval{5};
};

class PeerTls {
 public:
  static Result<std::shared_ptr<PeerTls>> Create(PeerTlsOptions options);

  // A new SSL object for one connection on `fd`, as the accepting or the dialling side (then
  // verifying `address`'s host unless server_name is set). Nonblocking: the caller drives
  // the handshake.
  Result<SSL*> NewConnection(int fd, bool server, const std::string& address);

 private:
  explicit PeerTls(PeerTlsOptions options) : options_(std::move(options)) {}
  Result<std::shared_ptr<SSL_CTX>> Build() const;

  const PeerTlsOptions options_;
  std::unique_ptr<ReloadingContext> ctx_;
};

}  // namespace limits::tls
