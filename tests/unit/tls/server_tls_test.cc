#include "tls/server_tls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "testing/temp_dir.h"
#include "testing/test_certs.h"

namespace limits::tls {
namespace {

using ::testing::HasSubstr;

std::map<std::string, std::string> Check(const ServerTls& t) {
  std::map<std::string, std::string> errors;
  CheckServerTls(t, "server.grpc_tls_config", [&](const std::string& key, const std::string& message) {
    errors[key] += message;
  });
  return errors;
}

TEST(ServerTlsTest, ClientAuthTypesAreDskitsNames) {
  EXPECT_EQ(*ParseClientAuth(""), ClientAuth::kNoClientCert);
  for (const char* name : {"NoClientCert", "RequestClientCert", "RequireAnyClientCert", "VerifyClientCertIfGiven",
                           "RequireAndVerifyClientCert"}) {
    Result<ClientAuth> a = ParseClientAuth(name);
    ASSERT_TRUE(a.ok()) << name;
    EXPECT_STREQ(ClientAuthName(*a), name);
  }
  EXPECT_EQ(*ParseClientAuth("RequireClientCert"), ClientAuth::kRequireAnyClientCert);
  Result<ClientAuth> bad = ParseClientAuth("requireandverifyclientcert");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("RequireAndVerifyClientCert"));
}

TEST(ServerTlsTest, CipherSuitesInGosNamesBecomeOpenSslsList) {
  EXPECT_EQ(*OpenSslCipherList(""), "");
  EXPECT_EQ(*OpenSslCipherList("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305"),
            "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-CHACHA20-POLY1305");
  // TLS 1.3's suites are always on, in Go too: accepted, nothing to configure.
  EXPECT_EQ(*OpenSslCipherList("TLS_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"),
            "ECDHE-ECDSA-AES256-GCM-SHA384");
  EXPECT_THAT(OpenSslCipherList("TLS_RSA_WITH_RC4_128_SHA").status().message(), HasSubstr("not offered by OpenSSL 3"));
  EXPECT_THAT(OpenSslCipherList("ECDHE-RSA-AES128-GCM-SHA256").status().message(), HasSubstr("unknown cipher suite"));
}

TEST(ServerTlsTest, MinVersionsAreGosNames) {
  for (const char* v : {"", "VersionTLS10", "VersionTLS11", "VersionTLS12", "VersionTLS13"}) EXPECT_TRUE(ValidMinVersion(v));
  EXPECT_FALSE(ValidMinVersion("TLS1.2"));
}

TEST(ServerTlsTest, WhatTheListenerWouldLoadIsCheckedNamingTheKey) {
  testing::TempDir dir;
  testing::TestCerts ca(dir.path());
  testing::TestCerts other(dir.path(), "other-ca");
  const testing::CertPair server = ca.Server("server");
  const testing::CertPair stranger = other.Server("stranger");

  EXPECT_TRUE(Check({}).empty());  // plain text
  EXPECT_TRUE(Check({.cert_file = server.cert, .key_file = server.key}).empty());
  EXPECT_TRUE(Check({.cert_file = server.cert, .key_file = server.key, .client_ca_file = ca.ca(),
                     .client_auth_type = "RequireAndVerifyClientCert"})
                  .empty());

  auto errors = Check({.cert_file = server.cert});
  EXPECT_THAT(errors["server.grpc_tls_config.key_file"], HasSubstr("required with server.grpc_tls_config.cert_file"));
  errors = Check({.cert_file = dir.Sub("missing.pem"), .key_file = server.key});
  EXPECT_THAT(errors["server.grpc_tls_config.cert_file"], HasSubstr("cannot read"));
  errors = Check({.cert_file = server.key, .key_file = server.key});
  EXPECT_THAT(errors["server.grpc_tls_config.cert_file"], HasSubstr("holds no PEM certificate"));
  errors = Check({.cert_file = server.cert, .key_file = server.cert});
  EXPECT_THAT(errors["server.grpc_tls_config.key_file"], HasSubstr("holds no PEM private key"));
  errors = Check({.cert_file = server.cert, .key_file = stranger.key});
  EXPECT_THAT(errors["server.grpc_tls_config.key_file"], HasSubstr("is not the key of server.grpc_tls_config.cert_file's certificate"));
  errors = Check({.cert_file = server.cert, .key_file = server.key, .client_ca_file = server.key,
                  .client_auth_type = "RequireAndVerifyClientCert"});
  EXPECT_THAT(errors["server.grpc_tls_config.client_ca_file"], HasSubstr("holds no PEM certificate"));
  // exporter-toolkit's rules: a CA without a policy that uses it, a verifying policy without a CA.
  errors = Check({.cert_file = server.cert, .key_file = server.key, .client_ca_file = ca.ca()});
  EXPECT_THAT(errors["server.grpc_tls_config.client_auth_type"], HasSubstr("NoClientCert"));
  errors = Check({.cert_file = server.cert, .key_file = server.key, .client_auth_type = "VerifyClientCertIfGiven"});
  EXPECT_THAT(errors["server.grpc_tls_config.client_ca_file"], HasSubstr("required by client_auth_type"));
  errors = Check({.client_auth_type = "RequireAndVerifyClientCert"});
  EXPECT_THAT(errors["server.grpc_tls_config.cert_file"], HasSubstr("need TLS"));
  errors = Check({.cert_file = server.cert, .key_file = server.key, .client_auth_type = "Always"});
  EXPECT_THAT(errors["server.grpc_tls_config.client_auth_type"], HasSubstr("unknown client_auth_type"));
}

}  // namespace
}  // namespace limits::tls
