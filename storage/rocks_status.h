// The one conversion from rocksdb::Status to ours. Internal to storage/.
#pragma once

#include <rocksdb/status.h>

#include "common/status.h"

namespace limits::storage {

inline Status FromRocks(const rocksdb::Status& s) {
  if (s.ok()) return Status::OK();
  std::string msg = s.ToString();
  if (s.IsNotFound()) return Status::NotFound(std::move(msg));
  if (s.IsCorruption()) return Status::Corruption(std::move(msg));
  if (s.IsInvalidArgument()) return Status::InvalidArgument(std::move(msg));
  if (s.IsNotSupported()) return Status::FailedPrecondition(std::move(msg));
  if (s.IsShutdownInProgress()) return Status::Shutdown(std::move(msg));
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain() || s.IsIncomplete()) return Status::Unavailable(std::move(msg));
  return Status::IOError(std::move(msg));
}

}  // namespace limits::storage
