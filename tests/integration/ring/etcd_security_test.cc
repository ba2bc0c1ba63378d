// The ring's etcd client against a real etcd with TLS and client-certificate auth, and with
// a user and password (issue 25, item 3): dskit's kvstore.etcd options, each tried with what
// must work and what must be refused.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ring/etcd_kv.h"
#include "testing/subprocess.h"
#include "testing/temp_dir.h"
#include "testing/test_certs.h"
#include "testing/test_etcd.h"

namespace limits::ring {
namespace {

using namespace std::chrono_literals;
constexpr char kKey[] = "collectors/ingest-limits";

KvClient::CasFn AddInstance(const std::string& id) {
  return [id](::ring::Desc& desc) -> Result<KvClient::CasAction> {
    (*desc.mutable_ingesters())[id].set_id(id);
    return KvClient::CasAction::kWrite;
  };
}

// A write and a read back through a client made with `o`; the error when either fails.
Status RoundTrip(EtcdKvOptions o, const std::string& id) {
  o.dial_timeout = 2s;
  o.request_timeout = 2s;
  Result<std::unique_ptr<EtcdKv>> kv = EtcdKv::Create(o);
  if (!kv.ok()) return kv.status();
  if (Status s = (*kv)->Cas(kKey, AddInstance(id)); !s.ok()) return s;
  Result<std::optional<::ring::Desc>> got = (*kv)->Get(kKey);
  if (!got.ok()) return got.status();
  if (!got->has_value() || (*got)->ingesters().count(id) == 0) return Status::Internal("not written");
  return Status::OK();
}

class EtcdTlsTest : public ::testing::Test {
 protected:
  testing::TempDir dir_;
  testing::TestCerts ca_{dir_.path()};
  testing::TestCerts other_{dir_.path(), "other-ca"};
  testing::CertPair server_ = ca_.Server("etcd");
  testing::CertPair client_ = ca_.Client("limitsd");
  testing::CertPair stranger_ = other_.Client("stranger");
};

TEST_F(EtcdTlsTest, MutualTlsWorksAndEveryWrongPartIsRefused) {
  testing::TestEtcd etcd({.cert = server_.cert, .key = server_.key, .client_ca = ca_.ca()});
  ASSERT_TRUE(etcd.ok()) << etcd.log();
  EtcdKvOptions o;
  o.endpoints = {"https://" + etcd.endpoint()};
  o.tls = {.enabled = true, .cert_path = client_.cert, .key_path = client_.key, .ca_path = ca_.ca()};
  Status ok = RoundTrip(o, "a");
  EXPECT_TRUE(ok.ok()) << ok.ToString();

  // The name the certificate carries, asked for explicitly.
  EtcdKvOptions named = o;
  named.tls.server_name = "localhost";
  EXPECT_TRUE(RoundTrip(named, "b").ok());
  // A name the certificate does not carry.
  EtcdKvOptions misnamed = o;
  misnamed.tls.server_name = "etcd.example";
  EXPECT_FALSE(RoundTrip(misnamed, "c").ok());
  // No client certificate, or one of another CA: etcd refuses.
  EtcdKvOptions anonymous = o;
  anonymous.tls.cert_path = anonymous.tls.key_path = "";
  EXPECT_FALSE(RoundTrip(anonymous, "d").ok());
  EtcdKvOptions stranger = o;
  stranger.tls.cert_path = stranger_.cert;
  stranger.tls.key_path = stranger_.key;
  EXPECT_FALSE(RoundTrip(stranger, "e").ok());
  // A server this client does not trust; then the same with verification switched off.
  EtcdKvOptions untrusted = o;
  untrusted.tls.ca_path = other_.ca();
  EXPECT_FALSE(RoundTrip(untrusted, "f").ok());
  untrusted.tls.insecure_skip_verify = true;
  Status skipped = RoundTrip(untrusted, "g");
  EXPECT_TRUE(skipped.ok()) << skipped.ToString();
  // Plain text to a TLS etcd.
  EtcdKvOptions plain;
  plain.endpoints = {etcd.endpoint()};
  EXPECT_FALSE(RoundTrip(plain, "h").ok());
}

class EtcdAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(etcd_.ok()) << etcd_.log();
    // etcdctl as an operator enables auth: root first, then a user with a role on the prefix.
    for (std::vector<std::string> args :
         {std::vector<std::string>{"user", "add", "root", "--new-user-password=root-secret"},
          {"user", "add", "limitsd", "--new-user-password=ring-secret"},
          {"role", "add", "ring"},
          {"role", "grant-permission", "ring", "readwrite", "collectors/", "--prefix=true"},
          {"user", "grant-role", "limitsd", "ring"},
          {"auth", "enable"}}) {
      args.insert(args.begin(), {"/usr/bin/etcdctl", "--endpoints=" + etcd_.endpoint()});
      testing::RunResult r = testing::RunProgram(args);
      ASSERT_EQ(r.exit_code, 0) << args[2] << " " << args[3] << ": " << r.out << r.err;
    }
  }
  testing::TestEtcd etcd_;
};

TEST_F(EtcdAuthTest, AUserWithItsPasswordWritesTheRingAndAWrongOneIsANamedError) {
  EtcdKvOptions o;
  o.endpoints = {etcd_.endpoint()};
  o.username = "limitsd";
  o.password = "ring-secret";
  Status ok = RoundTrip(o, "a");
  EXPECT_TRUE(ok.ok()) << ok.ToString();

  o.password = "wrong";
  Status wrong = RoundTrip(o, "b");
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("ring.etcd_username"), std::string::npos) << wrong.ToString();
  EXPECT_NE(wrong.message().find("authentication failed"), std::string::npos) << wrong.ToString();

  EtcdKvOptions anonymous;
  anonymous.endpoints = {etcd_.endpoint()};
  EXPECT_FALSE(RoundTrip(anonymous, "c").ok());
}

// etcd's simple tokens die with the process: after a restart the client authenticates anew.
TEST_F(EtcdAuthTest, ATokenEtcdNoLongerKnowsIsRenewed) {
  EtcdKvOptions o;
  o.endpoints = {etcd_.endpoint()};
  o.username = "limitsd";
  o.password = "ring-secret";
  o.dial_timeout = 5s;
  o.request_timeout = 5s;
  Result<std::unique_ptr<EtcdKv>> kv = EtcdKv::Create(o);
  ASSERT_TRUE(kv.ok());
  ASSERT_TRUE((*kv)->Cas(kKey, AddInstance("a")).ok());
  ASSERT_TRUE(etcd_.Restart()) << etcd_.log();
  Status s = (*kv)->Cas(kKey, AddInstance("b"));
  if (!s.ok()) s = (*kv)->Cas(kKey, AddInstance("b"));  // the first call may still meet the reconnect
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace limits::ring
