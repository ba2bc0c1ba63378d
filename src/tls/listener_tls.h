// ListenerTls: the OpenSSL context of a TLS listener of our own (the HTTP server), from the
// settings dskit's server has for its HTTP listener: http_tls_config {cert_file, key_file,
// client_ca_file, client_auth_type}, tls_min_version, tls_cipher_suites. Every client_auth_type
// behaves as Go's (exporter-toolkit's). Files are re-read when they change. Thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "common/result.h"
#include "tls/reloading_context.h"
#include "tls/server_tls.h"

namespace limits::tls {

struct ListenerTlsOptions {
  ServerTls tls;
  std::string min_version = "";    // Go's names; "": TLS 1.2
  std::string cipher_suites = "";  // Go's names; "": OpenSSL's defaults
  std::chrono::seconds reload_interval{5};
};

class ListenerTls {
 public:
  static Result<std::shared_ptr<ListenerTls>> Create(ListenerTlsOptions options);
  // A new accepting-side SSL object for the connection on `fd`; the handshake happens in the
  // first reads and writes.
  Result<SSL*> NewConnection(int fd);

 private:
  explicit ListenerTls(ListenerTlsOptions options) : options_(std::move(options)) {}
  Result<std::shared_ptr<SSL_CTX>> Build() const;

  const ListenerTlsOptions options_;
  std::unique_ptr<ReloadingContext> ctx_;
};

}  // namespace limits::tls
