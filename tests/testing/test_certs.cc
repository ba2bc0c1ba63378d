#include "testing/test_certs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/subprocess.h"

namespace limits::testing {
namespace {

void Openssl(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"/usr/bin/openssl"};
  argv.insert(argv.end(), args.begin(), args.end());
  RunResult r = RunProgram(argv);
  ASSERT_EQ(r.exit_code, 0) << "openssl " << args[0] << ": " << r.err;
}

}  // namespace

TestCerts::TestCerts(const std::string& dir, const std::string& ca_name)
    : dir_(dir), ca_(dir + "/" + ca_name + ".pem"), ca_key_(dir + "/" + ca_name + ".key") {
  Openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
           "-subj", "/CN=limitsd test " + ca_name, "-keyout", ca_key_, "-out", ca_,
           "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"});
}

CertPair TestCerts::Issue(const std::string& name, const std::string& extensions) const {
  const CertPair p{dir_ + "/" + name + ".pem", dir_ + "/" + name + ".key"};
  const std::string csr = dir_ + "/" + name + ".csr";
  const std::string ext = dir_ + "/" + name + ".ext";
  std::ofstream(ext) << extensions;
  Openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=" + name, "-keyout",
           p.key, "-out", csr});
  Openssl({"x509", "-req", "-in", csr, "-CA", ca_, "-CAkey", ca_key_, "-CAcreateserial", "-days", "2", "-extfile",
           ext, "-out", p.cert});
  return p;
}

CertPair TestCerts::Server(const std::string& name) const {
  return Issue(name, "subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1\nextendedKeyUsage=serverAuth\n");
}

CertPair TestCerts::Client(const std::string& name) const { return Issue(name, "extendedKeyUsage=clientAuth\n"); }

SecretVolume::SecretVolume(const std::string& dir) : dir_(dir) { std::filesystem::create_directories(dir); }

void SecretVolume::Publish(const CertPair& pair) {
  namespace fs = std::filesystem;
  const fs::path root = dir_;
  const std::string version = "..v" + std::to_string(++version_);
  fs::create_directories(root / version);
  fs::copy_file(pair.cert, root / version / "tls.crt");
  fs::copy_file(pair.key, root / version / "tls.key");
  fs::create_directory_symlink(version, root / "..data_tmp");
  fs::rename(root / "..data_tmp", root / "..data");
  if (!fs::is_symlink(root / "tls.crt")) {
    fs::create_symlink("..data/tls.crt", root / "tls.crt");
    fs::create_symlink("..data/tls.key", root / "tls.key");
  }
}

std::string TestCerts::Read(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace limits::testing
