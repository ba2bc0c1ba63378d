#include "tls/server_tls.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <array>
#include <fstream>
#include <memory>
#include <sstream>
#include <utility>

namespace limits::tls {
namespace {

constexpr std::array<std::pair<std::string_view, ClientAuth>, 5> kClientAuthNames = {{
    {"NoClientCert", ClientAuth::kNoClientCert},
    {"RequestClientCert", ClientAuth::kRequestClientCert},
    {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
    {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
}};

// Go's crypto/tls names of TLS 1.0-1.2 suites, and OpenSSL's. Empty: Go knows it, OpenSSL 3
// does not offer it.
constexpr std::array<std::pair<std::string_view, std::string_view>, 24> kSuites = {{
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA-AES128-GCM-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA-AES256-GCM-SHA384"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA-CHACHA20-POLY1305"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA-AES128-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA-AES256-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA-AES128-SHA"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA-AES256-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA-AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA-AES128-SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "AES128-GCM-SHA256"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "AES256-GCM-SHA384"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "AES128-SHA"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "AES256-SHA"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "AES128-SHA256"},
    {"TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "ECDHE-RSA-DES-CBC3-SHA"},
    {"TLS_RSA_WITH_3DES_EDE_CBC_SHA", "DES-CBC3-SHA"},
    {"TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", ""},
    {"TLS_ECDHE_RSA_WITH_RC4_128_SHA", ""},
    {"TLS_RSA_WITH_RC4_128_SHA", ""},
}};
constexpr std::array<std::string_view, 3> kTls13Suites = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
                                                          "TLS_CHACHA20_POLY1305_SHA256"};

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

// The file's bytes, or an error saying why it cannot be read.
Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::InvalidArgument("cannot read \"" + path + "\"");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<BIO, BioFree> Bio(const std::string& pem) {
  return std::unique_ptr<BIO, BioFree>(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

std::unique_ptr<X509, X509Free> FirstCertificate(const std::string& pem) {
  auto bio = Bio(pem);
  return std::unique_ptr<X509, X509Free>(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
}

}  // namespace

Result<ClientAuth> ParseClientAuth(std::string_view name) {
  if (name.empty()) return ClientAuth::kNoClientCert;
  for (const auto& [n, auth] : kClientAuthNames) {
    if (n == name) return auth;
  }
  // exporter-toolkit takes this older spelling too.
  if (name == "RequireClientCert") return ClientAuth::kRequireAnyClientCert;
  return Status::InvalidArgument("unknown client_auth_type \"" + std::string(name) +
                                 "\"; one of NoClientCert, RequestClientCert, RequireAnyClientCert, "
                                 "VerifyClientCertIfGiven, RequireAndVerifyClientCert");
}

const char* ClientAuthName(ClientAuth auth) {
  for (const auto& [n, a] : kClientAuthNames) {
    if (a == auth) return n.data();
  }
  return "?";
}

void CheckClientFiles(const std::string& cert_file, const std::string& key_file, const std::string& ca_file,
                      const FileKeys& keys, const ErrorFn& err) {
  if (!key_file.empty() && cert_file.empty()) err(keys.cert, "required with " + keys.key);
  if (!cert_file.empty() && key_file.empty()) err(keys.key, "required with " + keys.cert);
  std::unique_ptr<X509, X509Free> cert;
  if (!cert_file.empty()) {
    if (Result<std::string> pem = ReadFile(cert_file); !pem.ok()) {
      err(keys.cert, pem.status().message());
    } else if (cert = FirstCertificate(*pem); cert == nullptr) {
      err(keys.cert, "\"" + cert_file + "\" holds no PEM certificate");
    }
  }
  if (!key_file.empty()) {
    if (Result<std::string> pem = ReadFile(key_file); !pem.ok()) {
      err(keys.key, pem.status().message());
    } else {
      auto bio = Bio(*pem);
      std::unique_ptr<EVP_PKEY, KeyFree> key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
      if (key == nullptr) {
        err(keys.key, "\"" + key_file + "\" holds no PEM private key (or it is encrypted)");
      } else if (cert != nullptr && X509_check_private_key(cert.get(), key.get()) != 1) {
        err(keys.key, "\"" + key_file + "\" is not the key of " + keys.cert + "'s certificate");
      }
    }
  }
  if (!ca_file.empty()) {
    if (Result<std::string> pem = ReadFile(ca_file); !pem.ok()) {
      err(keys.ca, pem.status().message());
    } else if (FirstCertificate(*pem) == nullptr) {
      err(keys.ca, "\"" + ca_file + "\" holds no PEM certificate");
    }
  }
  ERR_clear_error();
}

void CheckServerTls(const ServerTls& tls, const std::string& prefix, const ErrorFn& err) {
  const Result<ClientAuth> auth = ParseClientAuth(tls.client_auth_type);
  if (!auth.ok()) err(prefix + ".client_auth_type", auth.status().message());
  if (!tls.enabled()) {
    if (!tls.client_ca_file.empty() || !tls.client_auth_type.empty()) {
      err(prefix + ".cert_file", "client_ca_file and client_auth_type need TLS: set cert_file and key_file");
    }
    return;
  }
  // enabled(): one of the two is set, so a missing other is "required with" it.
  CheckClientFiles(tls.cert_file, tls.key_file, tls.client_ca_file,
                   {.cert = prefix + ".cert_file", .key = prefix + ".key_file", .ca = prefix + ".client_ca_file"},
                   err);
  if (!auth.ok()) return;
  if (*auth == ClientAuth::kNoClientCert && !tls.client_ca_file.empty()) {
    // exporter-toolkit refuses it too: a CA that verifies nothing is a mistake.
    err(prefix + ".client_auth_type",
        "client_ca_file is set but client_auth_type is NoClientCert: set RequireAndVerifyClientCert for mTLS");
  }
  if ((*auth == ClientAuth::kVerifyClientCertIfGiven || *auth == ClientAuth::kRequireAndVerifyClientCert) &&
      tls.client_ca_file.empty()) {
    err(prefix + ".client_ca_file", std::string("required by client_auth_type ") + ClientAuthName(*auth));
  }
}

bool ValidMinVersion(std::string_view name) {
  return name.empty() || name == "VersionTLS10" || name == "VersionTLS11" || name == "VersionTLS12" ||
         name == "VersionTLS13";
}

Result<std::string> OpenSslCipherList(std::string_view go_names) {
  std::string out;
  size_t start = 0;
  while (start <= go_names.size()) {
    size_t end = go_names.find(',', start);
    if (end == std::string_view::npos) end = go_names.size();
    std::string_view name = go_names.substr(start, end - start);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    start = end + 1;
    if (name.empty()) continue;
    bool known = false;
    for (std::string_view t : kTls13Suites) known = known || t == name;
    if (known) continue;
    for (const auto& [go, openssl] : kSuites) {
      if (go != name) continue;
      known = true;
      if (openssl.empty()) return Status::InvalidArgument(std::string(name) + " is not offered by OpenSSL 3");
      if (!out.empty()) out += ':';
      out += openssl;
    }
    if (!known) return Status::InvalidArgument("unknown cipher suite \"" + std::string(name) + "\" (Go's names)");
  }
  return out;
}

}  // namespace limits::tls
