// Child: fork/exec with output to a file and a held stdin pipe (see child.h).
#include "child.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>

namespace limits::bench {

Child::Child(const std::vector<std::string>& argv, const std::string& output_path) : output_path_(output_path) {
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) return;
  started_wall_ms_ = WallMs();
  const pid_t parent = getpid();
  pid_ = fork();
  if (pid_ == 0) {
    // Killed with the bench, however it ends (a child forked by the main thread: the signal
    // follows the forking thread's death, and the bench's main thread lives until it exits).
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
    const int fd = open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0 || dup2(in[0], STDIN_FILENO) < 0) _exit(126);
    std::vector<std::string> args = argv;
    std::vector<char*> raw;
    for (auto& a : args) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  close(in[0]);
  stdin_fd_ = in[1];
}

Child::~Child() {
  if (Running()) Kill(SIGKILL);
  if (stdin_fd_ >= 0) close(stdin_fd_);
}

int Child::Kill(int sig) {
  if (pid_ > 0 && !status_) kill(pid_, sig);
  Wait();
  return status_.value_or(-1);
}

int Child::Wait() {
  if (pid_ > 0 && !status_) {
    int st = 0;
    if (waitpid(pid_, &st, 0) == pid_) status_ = st;
  }
  return status_ && WIFEXITED(*status_) ? WEXITSTATUS(*status_) : -1;
}

bool Child::Running() {
  if (pid_ <= 0 || status_) return false;
  int st = 0;
  if (waitpid(pid_, &st, WNOHANG) == pid_) {
    status_ = st;
    return false;
  }
  return true;
}

std::string Child::Output() const { return ReadFile(output_path_); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int64_t ProcStatusBytes(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1)) * 1024;  // "kB"
  }
  return 0;
}

double ProcCpuSeconds(pid_t pid) {
  if (pid <= 0) return -1;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return -1;
  // Fields after "(comm)", which may hold spaces: state is field 3, utime 14, stime 15.
  std::istringstream rest(stat.substr(stat.rfind(')') + 2));
  std::string field;
  double utime = 0, stime = 0;
  for (int i = 3; i <= 15 && rest >> field; ++i) {
    if (i == 14) utime = std::stod(field);
    if (i == 15) stime = std::stod(field);
  }
  if (!rest) return -1;
  return (utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t WallMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace limits::bench
