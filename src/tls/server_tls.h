// A listener's TLS settings under the names dskit's server gives them (Loki's `server:` block:
// grpc_tls_config {cert_file, key_file, client_auth_type, client_ca_file}, tls_min_version,
// tls_cipher_suites), and the checks that make a bad one a start-up error naming its key
// instead of a listener whose every handshake fails.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::tls {

struct ServerTls {
  std::string cert_file = "";         // PEM certificate chain; with key_file, the listener speaks TLS
  std::string key_file = "";          // PEM private key of the chain's first certificate
  std::string client_ca_file = "";    // PEM CAs that verify client certificates
  std::string client_auth_type = "";  // dskit's names; "" is NoClientCert
  bool enabled() const { return !cert_file.empty() || !key_file.empty(); }
};

// Go's tls.ClientAuthType, as dskit (exporter-toolkit) names it.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,           // asked for, not required, not verified
  kRequireAnyClientCert,        // required, not verified
  kVerifyClientCertIfGiven,     // verified when sent
  kRequireAndVerifyClientCert,  // mTLS
};
Result<ClientAuth> ParseClientAuth(std::string_view name);
const char* ClientAuthName(ClientAuth auth);

using ErrorFn = std::function<void(const std::string& key, const std::string& message)>;

// A client's certificate, key and CA files (each optional, cert and key together), checked as
// CheckServerTls checks a listener's; `keys` names them in messages.
struct FileKeys {
  std::string cert, key, ca;
};
void CheckClientFiles(const std::string& cert, const std::string& key, const std::string& ca, const FileKeys& keys,
                      const std::function<void(const std::string&, const std::string&)>& err);

// What the listener would load, checked now: both files named and readable, PEM that parses,
// a key that matches the certificate, a CA file that holds a certificate, and a
// client_auth_type that fits the CA file (exporter-toolkit's rules). Keys are named under
// `prefix`, e.g. "server.grpc_tls_config".
void CheckServerTls(const ServerTls& tls, const std::string& prefix, const ErrorFn& err);

// dskit's tls_min_version values (Go's names): VersionTLS10 .. VersionTLS13; "" is the default.
bool ValidMinVersion(std::string_view name);

// dskit's tls_cipher_suites (comma-separated Go names) as an OpenSSL cipher list. TLS 1.3's
// suites are always on (Go does not configure them either) and are accepted and skipped; a
// name Go does not know, or one OpenSSL 3 no longer offers (RC4), is an error. "" gives "".
Result<std::string> OpenSslCipherList(std::string_view go_names);

}  // namespace limits::tls
