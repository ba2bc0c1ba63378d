#include "testing/test_etcd.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <vector>

#include "testing/http_client.h"
#include "testing/wait_for.h"

namespace limits::testing {

int PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

TestEtcd::TestEtcd(Tls tls) : tls_(std::move(tls)) {
  // The ports are free when picked; another process could take one before etcd binds it,
  // so a failed start is retried on new ports.
  for (int attempt = 0; attempt < 3 && pid_ <= 0; ++attempt) {
    client_port_ = PickFreePort();
    peer_port_ = PickFreePort();
    metrics_port_ = PickFreePort();
    if (client_port_ > 0 && peer_port_ > 0 && metrics_port_ > 0 && client_port_ != peer_port_ &&
        metrics_port_ != client_port_ && metrics_port_ != peer_port_) {
      Launch();
    }
  }
}

TestEtcd::~TestEtcd() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

void TestEtcd::Kill() {
  if (pid_ <= 0) return;
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

bool TestEtcd::Restart() {
  Kill();
  return Launch();
}

std::string TestEtcd::log() const {
  std::ifstream in(dir_.Sub("etcd.log"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool TestEtcd::Launch() {
  const std::string client =
      (tls_.cert.empty() ? "http://127.0.0.1:" : "https://127.0.0.1:") + std::to_string(client_port_);
  const std::string peer = "http://127.0.0.1:" + std::to_string(peer_port_);
  std::vector<std::string> args = {kEtcdBinary,
                                   "--name", "test",
                                   "--data-dir", dir_.Sub("data"),
                                   "--listen-client-urls", client,
                                   "--advertise-client-urls", client,
                                   "--listen-peer-urls", peer,
                                   "--initial-advertise-peer-urls", peer,
                                   "--initial-cluster", "test=" + peer,
                                   "--logger", "zap",
                                   "--log-level", "warn",
                                   "--listen-metrics-urls", "http://127.0.0.1:" + std::to_string(metrics_port_)};
  if (!tls_.cert.empty()) {
    args.insert(args.end(), {"--cert-file", tls_.cert, "--key-file", tls_.key});
    if (!tls_.client_ca.empty()) args.insert(args.end(), {"--client-cert-auth", "--trusted-ca-file", tls_.client_ca});
  }
  const std::string log_path = dir_.Sub("etcd.log");
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  if (pid < 0) return false;
  pid_ = pid;
  const bool up = WaitFor(
      [&] {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {  // exited: port taken, bad flags...
          pid_ = -1;
          return true;
        }
        return HttpGet(metrics_port_, "/health").body.find("\"health\":\"true\"") != std::string::npos;
      },
      std::chrono::seconds(20));
  if (!up && pid_ > 0) Kill();
  return pid_ > 0;
}

}  // namespace limits::testing
