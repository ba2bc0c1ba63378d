#include "tls/listener_tls.h"

#include <openssl/err.h>

namespace limits::tls {
namespace {

// Go's RequestClientCert and RequireAnyClientCert take any certificate: verification runs
// (so the chain is known) but never fails the handshake.
int AcceptAny(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) { return 1; }

int ProtocolVersion(const std::string& go_name) {
  if (go_name == "VersionTLS10") return TLS1_VERSION;
  if (go_name == "VersionTLS11") return TLS1_1_VERSION;
  if (go_name == "VersionTLS13") return TLS1_3_VERSION;
  return TLS1_2_VERSION;  // "" and VersionTLS12: Go's default for servers
}

}  // namespace

Result<std::shared_ptr<ListenerTls>> ListenerTls::Create(ListenerTlsOptions options) {
  auto t = std::shared_ptr<ListenerTls>(new ListenerTls(std::move(options)));
  const ListenerTls* self = t.get();
  const ServerTls& s = self->options_.tls;
  ASSIGN_OR_RETURN(t->ctx_, ReloadingContext::Create({s.cert_file, s.key_file, s.client_ca_file},
                                                     self->options_.reload_interval, [self] { return self->Build(); }));
  return t;
}

Result<std::shared_ptr<SSL_CTX>> ListenerTls::Build() const {
  const ServerTls& s = options_.tls;
  ASSIGN_OR_RETURN(ClientAuth auth, ParseClientAuth(s.client_auth_type));
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_server_method()), SSL_CTX_free);
  if (!ctx) return Status::Internal("SSL_CTX_new: " + OpenSslError());
  SSL_CTX_set_min_proto_version(ctx.get(), ProtocolVersion(options_.min_version));
  if (!options_.cipher_suites.empty()) {
    ASSIGN_OR_RETURN(std::string list, OpenSslCipherList(options_.cipher_suites));
    if (!list.empty() && SSL_CTX_set_cipher_list(ctx.get(), list.c_str()) != 1) {
      return Status::InvalidArgument("tls_cipher_suites: " + OpenSslError());
    }
  }
  RETURN_IF_ERROR(UseCertificate(ctx.get(), s.cert_file, s.key_file));
  if (!s.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx.get(), s.client_ca_file.c_str(), nullptr) != 1) {
      return Status::InvalidArgument("client CA " + s.client_ca_file + ": " + OpenSslError());
    }
    // The CAs a client may pick its certificate by.
    SSL_CTX_set_client_CA_list(ctx.get(), SSL_load_client_CA_file(s.client_ca_file.c_str()));
  }
  switch (auth) {
    case ClientAuth::kNoClientCert: SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr); break;
    case ClientAuth::kRequestClientCert: SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, AcceptAny); break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, AcceptAny);
      break;
    case ClientAuth::kVerifyClientCertIfGiven: SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr); break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  // One request per connection: nothing to resume.
  SSL_CTX_set_num_tickets(ctx.get(), 0);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_OFF);
  return ctx;
}

Result<SSL*> ListenerTls::NewConnection(int fd) {
  ASSIGN_OR_RETURN(SSL* ssl, NewSsl(ctx_->Current().get(), fd));
  SSL_set_accept_state(ssl);
  return ssl;
}

}  // namespace limits::tls
