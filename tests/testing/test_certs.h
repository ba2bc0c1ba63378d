// TestCerts: certificate authorities and certificates made with the openssl command for the
// TLS tests — a server certificate for localhost, 127.0.0.1 and ::1, client certificates, and
// a second CA whose certificates the first must refuse. EC P-256 keys: quick to make.
#pragma once

#include <string>

namespace limits::testing {

struct CertPair {
  std::string cert;  // PEM file paths
  std::string key;
};

class TestCerts {
 public:
  // Makes CA `ca_name` in `dir` (ca_name.pem / ca_name.key). Fails the test on error.
  TestCerts(const std::string& dir, const std::string& ca_name = "ca");

  const std::string& ca() const { return ca_; }
  // A certificate signed by this CA: for a server (SAN localhost, 127.0.0.1, ::1) or a client.
  CertPair Server(const std::string& name) const;
  CertPair Client(const std::string& name) const;

  static std::string Read(const std::string& path);

 private:
  CertPair Issue(const std::string& name, const std::string& extensions) const;
  std::string dir_;
  std::string ca_;
  std::string ca_key_;
};

// A certificate and key laid out as a Kubernetes Secret volume lays them out: tls.crt and
// tls.key link through "..data" to a directory of the current pair, and Publish swaps that
// link with one rename, so a reader never sees a new certificate with an old key.
class SecretVolume {
 public:
  explicit SecretVolume(const std::string& dir);
  void Publish(const CertPair& pair);
  std::string cert() const { return dir_ + "/tls.crt"; }
  std::string key() const { return dir_ + "/tls.key"; }

 private:
  std::string dir_;
  int version_ = 0;
};

}  // namespace limits::testing
