#include "command.h"

namespace limits::ctl {

extern const Command kPartitionsCommand, kTenantsCommand, kStreamsCommand, kCheckpointCommand, kVerifyCommand,
    kStatsCommand, kCompactCommand, kDropPartitionCommand, kEvictExpiredCommand, kLoadgenCommand;

const std::vector<const Command*>& Commands() {
  static const std::vector<const Command*> all = {
      &kPartitionsCommand, &kTenantsCommand,  &kStreamsCommand,        &kCheckpointCommand,   &kVerifyCommand,
      &kStatsCommand,      &kCompactCommand,  &kDropPartitionCommand, &kEvictExpiredCommand, &kLoadgenCommand,
  };
  return all;
}

}  // namespace limits::ctl
