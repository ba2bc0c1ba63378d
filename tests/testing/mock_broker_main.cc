// mock_broker: librdkafka's mock cluster (MOCK-KAFKA.md) as a program, so several limitsd
// processes can share one cluster. Creates the topic, prints "bootstrap <host:port,...>" on
// stdout, and runs until SIGTERM/SIGINT or until stdin closes (its parent died).
// Usage: mock_broker [--topic T] [--partitions N] [--brokers B]
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

#include "kafka/mock_cluster.h"

int main(int argc, char** argv) {
  std::string topic = "ingest-limits-metadata";
  int partitions = 64, brokers = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--topic") == 0) topic = argv[i + 1];
    else if (std::strcmp(argv[i], "--partitions") == 0) partitions = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--brokers") == 0) brokers = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: mock_broker [--topic T] [--partitions N] [--brokers B]\n");
      return 2;
    }
  }
  // Signals are taken by sigwait below, in this thread only.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto cluster = limits::kafka::MockCluster::Start(topic, partitions, brokers);
  if (!cluster.ok()) {
    std::fprintf(stderr, "mock_broker: %s\n", cluster.status().ToString().c_str());
    return 1;
  }
  std::printf("bootstrap %s\n", (*cluster)->bootstrap().c_str());
  std::fflush(stdout);
  std::thread([] {
    char buf[256];
    while (read(STDIN_FILENO, buf, sizeof buf) > 0) {
    }
    kill(getpid(), SIGTERM);
  }).detach();
  int sig = 0;
  sigwait(&set, &sig);
  return 0;
}
