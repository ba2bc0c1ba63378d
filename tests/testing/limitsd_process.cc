#include "testing/limitsd_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "testing/http_client.h"

namespace limits::testing {

LimitsdProcess::LimitsdProcess(const std::string& binary, const config::Config& c, const std::string& log_path,
                               const std::vector<std::string>& extra)
    : log_path_(log_path) {
  std::vector<std::string> args = {binary,
                                   "--set", "kafka.brokers=" + c.kafka.brokers,
                                   "--set", "kafka.topic=" + c.kafka.topic,
                                   "--set", "kafka.consumer_group=" + c.kafka.consumer_group,
                                   "--set", "kafka.num_partitions=" + std::to_string(c.kafka.num_partitions),
                                   "--set", "store.path=" + c.store.path,
                                   "--set", "node.zone=" + c.node.zone,
                                   "--set", "node.instance_id=" + c.node.instance_id,
                                   "--set", std::string("kafka.static_membership=") +
                                                (c.kafka.static_membership ? "true" : "false"),
                                   "--set", "server.http_listen=127.0.0.1:0",
                                   "--set", "server.grpc_listen=127.0.0.1:0",
                                   "--set", "windows.wait_assign=2s"};
  for (const auto& [k, v] : c.kafka.properties) {
    args.push_back("--set");
    args.push_back("kafka.properties." + k + "=" + v);
  }
  for (const std::string& e : extra) {
    args.push_back("--set");
    args.push_back(e);
  }
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(fd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
}

LimitsdProcess::~LimitsdProcess() { Kill(SIGKILL); }

void LimitsdProcess::Kill(int sig) {
  if (pid_ <= 0 || status_) return;
  kill(pid_, sig);
  int status = 0;
  waitpid(pid_, &status, 0);
  status_ = status;
}

std::optional<int> LimitsdProcess::Exited() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
  return status_;
}

std::string LimitsdProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int LimitsdProcess::ListeningPort(const std::string& component) const {
  return ListeningPortFromLog(Log(), component);
}

bool LimitsdProcess::ReadyWith(size_t n) const {
  const int port = HttpPort();
  return port > 0 && HttpGet(port, "/ready").body.find(ReadyWithPartitions(n)) != std::string::npos;
}

std::set<int32_t> LimitsdProcess::ReadyPartitions() const {
  std::set<int32_t> out;
  const int port = HttpPort();
  if (port == 0) return out;
  const std::string body = HttpGet(port, "/partitions").body;
  static const std::regex re("\"partition\":\\s*([0-9]+),\\s*\"state\":\\s*\"ready\"");
  for (auto it = std::sregex_iterator(body.begin(), body.end(), re); it != std::sregex_iterator(); ++it) {
    out.insert(std::stoi((*it)[1]));
  }
  return out;
}

}  // namespace limits::testing
