#include "node/library_logs.h"

#include <google/protobuf/stubs/logging.h>
#include <grpc/support/log.h>

#include <string>

#include "common/log.h"

namespace limits {
namespace {

void ProtobufLine(google::protobuf::LogLevel level, const char* file, int line, const std::string& message) {
  log::Level ours = log::Level::kInfo;
  if (level == google::protobuf::LOGLEVEL_WARNING) ours = log::Level::kWarn;
  else if (level >= google::protobuf::LOGLEVEL_ERROR) ours = log::Level::kError;  // FATAL aborts after this
  if (!log::Enabled(ours)) return;
  log::Line(ours, "protobuf", message).Kv("file", file).Kv("line", line);
}

// gRPC calls this only for what passes GRPC_VERBOSITY (default: errors only).
void GrpcLine(gpr_log_func_args* args) {
  log::Level ours = log::Level::kInfo;
  if (args->severity == GPR_LOG_SEVERITY_DEBUG) ours = log::Level::kDebug;
  else if (args->severity == GPR_LOG_SEVERITY_ERROR) ours = log::Level::kError;
  if (!log::Enabled(ours)) return;
  log::Line(ours, "grpc", args->message).Kv("file", args->file).Kv("line", args->line);
}

}  // namespace

void RouteLibraryLogs() {
  google::protobuf::SetLogHandler(&ProtobufLine);
  gpr_set_log_function(&GrpcLine);
}

}  // namespace limits
