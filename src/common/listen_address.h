// Listen addresses as the config writes them: "host:port", "[v6]:port", or Loki's ":port"
// (every interface). One parser for the config check and both servers, so what --check-config
// accepts is what the servers bind. Plain values; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "common/result.h"

namespace limits {

struct ListenAddress {
  std::string host;  // without brackets; empty means every interface
  int port = 0;      // 0: the kernel picks

  // Every interface: "", "0.0.0.0" or "::".
  bool wildcard() const { return host.empty() || host == "0.0.0.0" || host == "::"; }
};

// InvalidArgument("expected host:port, ...") on anything else (no port, port > 65535, an
// unbracketed IPv6 address).
Result<ListenAddress> ParseListenAddress(std::string_view text);

}  // namespace limits
