#include "peer_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "testing/http_client.h"

namespace limits::testing {

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& log_path) : log_path_(log_path) {
  int out[2];
  int in[2];
  if (pipe(out) != 0 || pipe(in) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDERR_FILENO);
    dup2(out[1], STDOUT_FILENO);
    dup2(in[0], STDIN_FILENO);
    close(out[0]);
    close(out[1]);
    close(in[0]);
    close(in[1]);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(in[0]);
  out_ = out[0];
  in_ = in[1];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (out_ >= 0) close(out_);
  if (in_ >= 0) close(in_);
}

std::string ChildProcess::ReadLine(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    const size_t nl = buffered_.find('\n');
    if (nl != std::string::npos) {
      std::string line = buffered_.substr(0, nl);
      buffered_.erase(0, nl + 1);
      return line;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0 || out_ < 0) return {};
    pollfd p{out_, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[4096];
    const ssize_t n = read(out_, buf, sizeof buf);
    if (n <= 0) return {};
    buffered_.append(buf, static_cast<size_t>(n));
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0) kill(pid_, sig);
}

int ChildProcess::Wait(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    const pid_t r = waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > deadline) return -1;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

std::string ChildProcess::Log() const {
  std::ifstream in(log_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ToString(const RingEntry& e) {
  return e.state + " ts=" + std::to_string(e.timestamp) + " registered=" + std::to_string(e.registered_timestamp) +
         " tokens=" + std::to_string(e.tokens) + " zone=" + e.zone + " addr=" + e.addr;
}

std::map<std::string, RingEntry> PeerRing(int http_port) {
  std::map<std::string, RingEntry> out;
  const HttpResult r = HttpGet(http_port, "/ring");
  if (r.status != 200) return out;
  std::istringstream lines(r.body);
  std::string id;
  RingEntry e;
  while (lines >> id >> e.state >> e.timestamp >> e.registered_timestamp >> e.tokens >> e.zone >> e.addr) {
    if (e.zone == "-") e.zone.clear();
    out[id] = e;
  }
  return out;
}

std::map<std::string, PeerMember> PeerMembers(int http_port) {
  std::map<std::string, PeerMember> out;
  const HttpResult r = HttpGet(http_port, "/members");
  if (r.status != 200) return out;
  std::istringstream lines(r.body);
  std::string name;
  PeerMember m;
  while (lines >> name >> m.state >> m.incarnation >> m.addr) out[name] = m;
  return out;
}

std::map<std::string, RingEntry> LimitsdRing(int http_port, const std::string& key) {
  std::map<std::string, RingEntry> out;
  const HttpResult r = HttpGet(http_port, "/memberlist");
  if (r.status != 200) return out;
  const size_t at = r.body.find("\"key\": \"" + key + "\"");
  if (at == std::string::npos) return out;
  const size_t end = r.body.find("\"key\": ", at + 1);
  const std::string section = r.body.substr(at, end == std::string::npos ? std::string::npos : end - at);
  static const std::regex re(
      "\"id\": \"([^\"]*)\",\\s*\"addr\": \"([^\"]*)\",\\s*\"zone\": \"([^\"]*)\",\\s*\"state\": \"([A-Z]+)\",\\s*"
      "\"timestamp\": (-?[0-9]+),\\s*\"heartbeat_age_s\": -?[0-9]+,\\s*\"registered_timestamp\": (-?[0-9]+),\\s*"
      "\"tokens\": ([0-9]+)");
  for (auto it = std::sregex_iterator(section.begin(), section.end(), re); it != std::sregex_iterator(); ++it) {
    RingEntry e;
    e.addr = (*it)[2];
    e.zone = (*it)[3];
    e.state = (*it)[4];
    e.timestamp = std::stoll((*it)[5]);
    e.registered_timestamp = std::stoll((*it)[6]);
    e.tokens = std::stoi((*it)[7]);
    out[(*it)[1]] = e;
  }
  return out;
}

std::map<std::string, std::string> LimitsdMembers(int http_port) {
  std::map<std::string, std::string> out;
  const HttpResult r = HttpGet(http_port, "/memberlist");
  if (r.status != 200) return out;
  static const std::regex re("\"name\": \"([^\"]*)\",\\s*\"addr\": \"[^\"]*\",\\s*\"state\": \"([a-z]+)\"");
  for (auto it = std::sregex_iterator(r.body.begin(), r.body.end(), re); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

}  // namespace limits::testing
