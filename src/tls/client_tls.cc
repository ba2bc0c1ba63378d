#include "tls/client_tls.h"

#include <grpcpp/security/tls_credentials_options.h>

#include <algorithm>

namespace limits::tls {

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const ClientTls& t) {
  if (!t.enabled) return grpc::InsecureChannelCredentials();
  const auto interval = static_cast<unsigned int>(std::max<int64_t>(1, t.reload_interval.count()));
  std::shared_ptr<grpc::experimental::CertificateProviderInterface> provider;
  if (!t.cert_path.empty() && !t.ca_path.empty()) {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(t.key_path, t.cert_path, t.ca_path,
                                                                                      interval);
  } else if (!t.cert_path.empty()) {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(t.key_path, t.cert_path, interval);
  } else if (!t.ca_path.empty()) {
    provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(t.ca_path, interval);
  }
  grpc::experimental::TlsChannelCredentialsOptions o;
  if (provider) o.set_certificate_provider(provider);
  if (!t.cert_path.empty()) o.watch_identity_key_cert_pairs();
  if (!t.ca_path.empty()) o.watch_root_certs();  // else gRPC's default roots (the system's)
  if (t.insecure_skip_verify) {
    o.set_verify_server_certs(false);
    o.set_check_call_host(false);
    o.set_certificate_verifier(std::make_shared<grpc::experimental::NoOpCertificateVerifier>());
  } else {
    o.set_certificate_verifier(std::make_shared<grpc::experimental::HostNameCertificateVerifier>());
  }
  return grpc::experimental::TlsCredentials(o);
}

}  // namespace limits::tls
