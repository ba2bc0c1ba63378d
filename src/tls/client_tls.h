// A gRPC client's TLS settings under dskit's grpcclient names (tls_enabled, tls_cert_path,
// tls_key_path, tls_ca_path, tls_server_name, tls_insecure_skip_verify), and the channel
// credentials they make: the files are re-read every reload_interval, so certificates rotate
// without a restart. Used by the etcd client and the zone's peer client.
#pragma once

#include <grpcpp/security/credentials.h>

#include <chrono>
#include <memory>
#include <string>

namespace limits::tls {

struct ClientTls {
  bool enabled = false;
  std::string cert_path = "";  // a client certificate and its key (the server's mTLS)
  std::string key_path = "";
  std::string ca_path = "";      // "": the system's roots
  std::string server_name = "";  // the name the server's certificate must carry; "": the dialled host
  bool insecure_skip_verify = false;
  std::chrono::seconds reload_interval{5};
};

// Plain-text credentials when not enabled. The server name is the channel's
// (grpc::ChannelArguments::SetSslTargetNameOverride), set by the caller.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentials(const ClientTls& t);

}  // namespace limits::tls
