// Routes the log output of the libraries that write their own lines to stderr — protobuf
// (SetLogHandler) and gRPC (gpr_set_log_function) — into limitsd's log, so every line the
// process writes is one of ours (JSON or logfmt). librdkafka's handles are routed where they
// are built (kafka/kafka_log.h); RocksDB keeps its info log in its own file (<store.path>/LOG).
// Call once at startup, after log::Configure and before any gRPC or protobuf use; not thread-safe.
#pragma once

namespace limits {

void RouteLibraryLogs();

}  // namespace limits
