// ParseEtcdEndpoint: one [ring] etcd_endpoints entry -> the gRPC target "host:port".
// Header-only, so the config loader validates endpoints with the very rule the etcd client
// applies, without linking the client.
#pragma once

#include <charconv>
#include <string>
#include <string_view>

#include "common/result.h"

namespace limits::ring {

// "host:port" of a configured endpoint ("http://" or "https://" and a trailing "/" dropped,
// as etcd's client URLs are written; whether TLS is spoken is ring.etcd_tls_enabled's to say,
// and the config refuses https:// without it); kInvalidArgument when it is not host:port with
// a port in 1..65535.
inline Result<std::string> ParseEtcdEndpoint(const std::string& endpoint) {
  std::string_view e = endpoint;
  if (e.rfind("http://", 0) == 0) e.remove_prefix(7);
  else if (e.rfind("https://", 0) == 0) e.remove_prefix(8);
  while (!e.empty() && e.back() == '/') e.remove_suffix(1);
  const size_t colon = e.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == e.size() ||
      e.substr(0, colon).find_first_of("/ \t") != std::string_view::npos) {
    return Status::InvalidArgument("\"" + endpoint + "\": expected host:port");
  }
  int port = 0;
  auto [end, ec] = std::from_chars(e.data() + colon + 1, e.data() + e.size(), port);
  if (ec != std::errc() || end != e.data() + e.size() || port < 1 || port > 65535) {
    return Status::InvalidArgument("\"" + endpoint + "\": expected host:port with a port in 1..65535");
  }
  return std::string(e);
}

}  // namespace limits::ring
