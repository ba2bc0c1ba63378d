// The HTTP listener over TLS (issue 25, item 2): Python's ssl module as the client, with and
// without a client certificate, of the trusted CA or another; plain HTTP against TLS; the
// minimum version; a probe answered on the loop while TLS clients stall mid-handshake; a
// certificate rotated on disk.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "http/http_server.h"
#include "testing/http_client.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"
#include "testing/wait_for.h"

namespace limits::http {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class HttpTlsTest : public ::testing::Test {
 protected:
  void Start(tls::ServerTls t, std::string min_version = "", std::chrono::seconds reload = 5s) {
    server_.reset();
    Result<std::shared_ptr<tls::ListenerTls>> listener_tls = tls::ListenerTls::Create(
        {.tls = std::move(t), .min_version = std::move(min_version), .reload_interval = reload});
    ASSERT_TRUE(listener_tls.ok()) << listener_tls.status().ToString();
    HttpServerOptions o;
    o.probes = {"/live"};
    o.tls = *listener_tls;
    auto s = HttpServer::Start("127.0.0.1:0",
                               {{"/live", [](const Request&) { return Response{200, "text/plain", "ok\n"}; }},
                                {"/metrics", [](const Request&) { return Response{200, "text/plain", "m 1\n"}; }}},
                               o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  // "<status> <body>" or "ERROR ...", from Python's ssl client.
  std::string Get(const std::string& path, const std::string& ca, std::optional<testing::CertPair> client = {},
                  bool max_tls12 = false) {
    std::vector<std::string> argv = {"/usr/bin/python3", HTTPS_GET,
                                     "https://localhost:" + std::to_string(server_->port()) + path, ca};
    if (client) argv.insert(argv.end(), {"--cert", client->cert, "--key", client->key});
    if (max_tls12) argv.push_back("--max-tls12");
    testing::RunResult r = testing::RunProgram(argv);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out;
  }

  testing::TempDir dir_;
  testing::TestCerts ca_{dir_.path()};
  testing::TestCerts other_{dir_.path(), "other-ca"};
  testing::CertPair server_cert_ = ca_.Server("server");
  testing::CertPair client_ = ca_.Client("client");
  testing::CertPair stranger_ = other_.Client("stranger");
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpTlsTest, ServesOverTlsAndRefusesPlainHttp) {
  Start({.cert_file = server_cert_.cert, .key_file = server_cert_.key});
  EXPECT_THAT(Get("/live", ca_.ca()), StartsWith("200 ok"));
  EXPECT_THAT(Get("/metrics", ca_.ca()), StartsWith("200 m 1"));
  EXPECT_THAT(Get("/live", other_.ca()), StartsWith("ERROR"));  // the client does not trust us
  EXPECT_NE(testing::HttpGet(server_->port(), "/live").status, 200);
}

TEST_F(HttpTlsTest, MutualTlsTakesOnlyTheTrustedCasCertificates) {
  Start({.cert_file = server_cert_.cert,
         .key_file = server_cert_.key,
         .client_ca_file = ca_.ca(),
         .client_auth_type = "RequireAndVerifyClientCert"});
  EXPECT_THAT(Get("/live", ca_.ca(), client_), StartsWith("200 ok"));
  EXPECT_THAT(Get("/live", ca_.ca()), StartsWith("ERROR"));
  EXPECT_THAT(Get("/live", ca_.ca(), stranger_), StartsWith("ERROR"));
  // VerifyClientCertIfGiven: no certificate is fine (Kubernetes' HTTPS probes send none).
  Start({.cert_file = server_cert_.cert,
         .key_file = server_cert_.key,
         .client_ca_file = ca_.ca(),
         .client_auth_type = "VerifyClientCertIfGiven"});
  EXPECT_THAT(Get("/live", ca_.ca()), StartsWith("200 ok"));
  EXPECT_THAT(Get("/live", ca_.ca(), stranger_), StartsWith("ERROR"));
}

TEST_F(HttpTlsTest, TheMinimumVersionIsHeld) {
  Start({.cert_file = server_cert_.cert, .key_file = server_cert_.key}, "VersionTLS13");
  EXPECT_THAT(Get("/live", ca_.ca()), StartsWith("200 ok"));
  EXPECT_THAT(Get("/live", ca_.ca(), std::nullopt, /*max_tls12=*/true), StartsWith("ERROR"));
}

// Clients that connect and never finish the handshake hold a socket each, not the loop: the
// probe is answered meanwhile, and they are closed at the request deadline.
TEST_F(HttpTlsTest, StalledHandshakesDoNotDelayTheProbe) {
  Start({.cert_file = server_cert_.cert, .key_file = server_cert_.key});
  std::vector<int> stalled;
  for (int i = 0; i < 100; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(server_->port()));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const char partial[] = "\x16\x03\x01\x02\x00\x01";  // the start of a ClientHello, never finished
    ASSERT_EQ(send(fd, partial, sizeof partial - 1, 0), static_cast<ssize_t>(sizeof partial - 1));
    stalled.push_back(fd);
  }
  EXPECT_THAT(Get("/live", ca_.ca()), StartsWith("200 ok"));
  for (int fd : stalled) close(fd);
}

TEST_F(HttpTlsTest, ARotatedCertificateIsServedWithoutARestart) {
  testing::SecretVolume secret(dir_.Sub("secret"));
  secret.Publish(server_cert_);
  Start({.cert_file = secret.cert(), .key_file = secret.key()}, "", 1s);
  ASSERT_THAT(Get("/live", ca_.ca()), StartsWith("200 ok"));
  secret.Publish(other_.Server("next"));
  EXPECT_TRUE(testing::WaitFor([&] { return Get("/live", other_.ca()).rfind("200 ok", 0) == 0; }, 15s));
}

}  // namespace
}  // namespace limits::http
