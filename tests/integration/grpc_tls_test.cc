// The gRPC listener over TLS (issue 25, item 1): each of dskit's client_auth_types against
// clients with no certificate, a certificate of the trusted CA and one of another CA; plain
// text against TLS; the certificate rotated on disk without a restart.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <optional>

#include "proto/health.grpc.pb.h"
#include "proto/limits.grpc.pb.h"
#include "rpc/grpc_server.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"
#include "testing/wait_for.h"

namespace limits::rpc {
namespace {

using namespace std::chrono_literals;
using testing::CertPair;
using testing::TestCerts;

// How a client dials: plain text, or TLS trusting `ca` with an optional client certificate.
struct Dial {
  bool tls = true;
  std::string ca = "";
  std::optional<CertPair> client = std::nullopt;
};

// The health check's answer over a fresh connection: true for SERVING, false when the call
// fails (a refused handshake surfaces as UNAVAILABLE).
bool Serving(int port, const Dial& d) {
  static std::atomic<int> n{0};
  std::shared_ptr<grpc::ChannelCredentials> creds = grpc::InsecureChannelCredentials();
  if (d.tls) {
    grpc::SslCredentialsOptions o;
    o.pem_root_certs = TestCerts::Read(d.ca);
    if (d.client) {
      o.pem_cert_chain = TestCerts::Read(d.client->cert);
      o.pem_private_key = TestCerts::Read(d.client->key);
    }
    creds = grpc::SslCredentials(o);
  }
  grpc::ChannelArguments args;
  args.SetInt("limitsd.test.channel", n++);  // a connection of its own, never one shared with an earlier check
  auto channel = grpc::CreateCustomChannel("localhost:" + std::to_string(port), creds, args);
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::health::v1::HealthCheckRequest req;
  grpc::health::v1::HealthCheckResponse resp;
  const grpc::Status s = stub->Check(&ctx, req, &resp);
  return s.ok() && resp.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

class GrpcTlsTest : public ::testing::Test {
 protected:
  void Start(tls::ServerTls t, std::chrono::seconds reload = 5s) {
    server_.reset();
    Result<std::unique_ptr<GrpcServer>> s =
        GrpcServer::Start({.listen = "127.0.0.1:0", .tls = std::move(t), .tls_reload_interval = reload}, service_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  int port() const { return server_->port(); }

  testing::TempDir dir_;
  TestCerts ca_{dir_.path()};
  TestCerts other_{dir_.path(), "other-ca"};
  CertPair server_cert_ = ca_.Server("server");
  CertPair client_ = ca_.Client("client");
  CertPair stranger_ = other_.Client("stranger");
  proto::IngestLimits::Service service_;
  std::unique_ptr<GrpcServer> server_;
};

TEST_F(GrpcTlsTest, PlainTextStaysTheDefault) {
  Start({});
  EXPECT_TRUE(Serving(port(), {.tls = false}));
  EXPECT_FALSE(Serving(port(), {.ca = ca_.ca()}));
}

TEST_F(GrpcTlsTest, ServerTlsRefusesPlainTextAndAnUntrustedServer) {
  Start({.cert_file = server_cert_.cert, .key_file = server_cert_.key});
  EXPECT_TRUE(Serving(port(), {.ca = ca_.ca()}));
  EXPECT_TRUE(Serving(port(), {.ca = ca_.ca(), .client = stranger_}));  // NoClientCert: not asked for
  EXPECT_FALSE(Serving(port(), {.tls = false}));
  EXPECT_FALSE(Serving(port(), {.ca = other_.ca()}));  // the client does not trust this server
}

// Each client_auth_type against no certificate, the trusted CA's and another CA's.
TEST_F(GrpcTlsTest, EachClientAuthTypeAsDskitDefinesIt) {
  struct Case {
    const char* type;
    bool none, trusted, untrusted;
  };
  for (const Case& c : {Case{"RequestClientCert", true, true, true}, Case{"RequireAnyClientCert", false, true, true},
                        Case{"VerifyClientCertIfGiven", true, true, false},
                        Case{"RequireAndVerifyClientCert", false, true, false}}) {
    SCOPED_TRACE(c.type);
    const bool verifies = std::string(c.type).find("Verify") != std::string::npos;
    Start({.cert_file = server_cert_.cert,
           .key_file = server_cert_.key,
           .client_ca_file = verifies ? ca_.ca() : "",
           .client_auth_type = c.type});
    EXPECT_EQ(Serving(port(), {.ca = ca_.ca()}), c.none);
    EXPECT_EQ(Serving(port(), {.ca = ca_.ca(), .client = client_}), c.trusted);
    EXPECT_EQ(Serving(port(), {.ca = ca_.ca(), .client = stranger_}), c.untrusted);
  }
}

// A certificate rotated on disk is served without a restart. The files change as a
// Kubernetes Secret volume changes them: tls.crt and tls.key are links through "..data", a
// link to a directory of the current pair that is swapped by one rename, so both change at
// once (gRPC 1.51 takes whatever pair it reads: ARCHITECTURE.md, "TLS").
TEST_F(GrpcTlsTest, ARotatedCertificateIsServedWithoutARestart) {
  testing::SecretVolume secret(dir_.Sub("secret"));
  secret.Publish(server_cert_);
  Start({.cert_file = secret.cert(), .key_file = secret.key()}, 1s);
  ASSERT_TRUE(Serving(port(), {.ca = ca_.ca()}));

  secret.Publish(other_.Server("next-server"));
  EXPECT_TRUE(testing::WaitFor([&] { return Serving(port(), {.ca = other_.ca()}); }, 15s));
  EXPECT_FALSE(Serving(port(), {.ca = ca_.ca()}));
}

TEST_F(GrpcTlsTest, ASecondCipherListInOneProcessIsRefused) {
  Result<std::unique_ptr<GrpcServer>> first = GrpcServer::Start(
      {.listen = "127.0.0.1:0",
       .tls = {.cert_file = server_cert_.cert, .key_file = server_cert_.key},
       .cipher_suites = ""},
      service_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  Result<std::unique_ptr<GrpcServer>> second = GrpcServer::Start(
      {.listen = "127.0.0.1:0",
       .tls = {.cert_file = server_cert_.cert, .key_file = server_cert_.key},
       .cipher_suites = "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256"},
      service_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("tls_cipher_suites"), std::string::npos);
}

}  // namespace
}  // namespace limits::rpc
