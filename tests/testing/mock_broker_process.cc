#include "testing/mock_broker_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <vector>

#include "testing/wait_for.h"

namespace limits::testing {

Result<std::unique_ptr<MockBrokerProcess>> MockBrokerProcess::Start(const std::string& binary,
                                                                    const std::string& topic, int32_t partitions) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0) return Status::IOError("pipe");
  if (pipe2(out, O_CLOEXEC) != 0) {
    close(in[0]);
    close(in[1]);
    return Status::IOError("pipe");
  }
  std::vector<std::string> args = {binary, "--topic", topic, "--partitions", std::to_string(partitions)};
  const pid_t pid = fork();
  if (pid == 0) {
    // dup2 clears FD_CLOEXEC on the copies; stderr stays the test's.
    if (dup2(in[0], STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0) _exit(126);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    return Status::IOError("fork");
  }
  // Reads stdout up to the first line: "bootstrap host:port,...".
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(30'000 * TimeoutMultiplier()));
  bool eof = false;
  while (line.find('\n') == std::string::npos && !eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[512];
    const ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) eof = true;
    else line.append(buf, static_cast<size_t>(n));
  }
  close(out[0]);  // the broker prints nothing more; a write to the closed pipe would not be checked
  const std::string prefix = "bootstrap ";
  const size_t eol = line.find('\n');
  if (line.rfind(prefix, 0) != 0 || eol == std::string::npos) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(in[1]);
    return Status::Unavailable(binary + " printed no bootstrap address (got \"" + line + "\")");
  }
  return std::unique_ptr<MockBrokerProcess>(
      new MockBrokerProcess(pid, in[1], line.substr(prefix.size(), eol - prefix.size())));
}

MockBrokerProcess::~MockBrokerProcess() {
  kill(pid_, SIGTERM);
  close(stdin_fd_);
  waitpid(pid_, nullptr, 0);
}

}  // namespace limits::testing
