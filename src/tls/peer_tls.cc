#include "tls/peer_tls.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

namespace limits::tls {
namespace {

bool IsIp(const std::string& host) {
  unsigned char buf[16];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

// "host" of "host:port" or "[v6]:port".
std::string HostOf(const std::string& address) {
  if (!address.empty() && address.front() == '[') {
    const size_t close = address.find(']');
    return close == std::string::npos ? address : address.substr(1, close - 1);
  }
  const size_t colon = address.rfind(':');
  return colon == std::string::npos ? address : address.substr(0, colon);
}

}  // namespace

Result<std::shared_ptr<PeerTls>> PeerTls::Create(PeerTlsOptions options) {
  auto t = std::shared_ptr<PeerTls>(new PeerTls(std::move(options)));
  const PeerTls* self = t.get();
  ASSIGN_OR_RETURN(t->ctx_, ReloadingContext::Create({self->options_.cert_file, self->options_.key_file,
                                                      self->options_.ca_file},
                                                     self->options_.reload_interval, [self] { return self->Build(); }));
  return t;
}

Result<std::shared_ptr<SSL_CTX>> PeerTls::Build() const {
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) return Status::Internal("SSL_CTX_new: " + OpenSslError());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  // A connection carries one packet or stream and is closed: no session to resume, and a
  // ticket the dialler never reads would make its close a reset that can cost the packet.
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  RETURN_IF_ERROR(UseCertificate(ctx.get(), options_.cert_file, options_.key_file));
  const int loaded = options_.ca_file.empty()
                         ? SSL_CTX_set_default_verify_paths(ctx.get())
                         : SSL_CTX_load_verify_locations(ctx.get(), options_.ca_file.c_str(), nullptr);
  if (loaded != 1) return Status::InvalidArgument("CA " + options_.ca_file + ": " + OpenSslError());
  // Accepting: a certificate is asked for and, when sent, verified (a dskit peer sends its
  // own); dialling: the peer's certificate is required.
  SSL_CTX_set_verify(ctx.get(), options_.insecure_skip_verify ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, nullptr);
  return ctx;
}

Result<SSL*> PeerTls::NewConnection(int fd, bool server, const std::string& address) {
  ASSIGN_OR_RETURN(SSL* ssl, NewSsl(ctx_->Current().get(), fd));
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  if (server) {
    // The chain to our CA is what counts: dskit's peers present a server certificate as
    // client too.
    X509_VERIFY_PARAM_set_purpose(param, X509_PURPOSE_ANY);
    SSL_set_accept_state(ssl);
    return ssl;
  }
  SSL_set_connect_state(ssl);
  const std::string name = options_.server_name.empty() ? HostOf(address) : options_.server_name;
  if (!IsIp(name)) SSL_set_tlsext_host_name(ssl, name.c_str());
  if (!options_.insecure_skip_verify) {
    const int ok = IsIp(name) ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
                              : X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0);
    if (ok != 1) {
      SSL_free(ssl);
      return Status::InvalidArgument("cannot verify the name \"" + name + "\"");
    }
  }
  return ssl;
}

}  // namespace limits::tls
