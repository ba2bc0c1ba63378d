// Addresses as memberlist passes them: "host:port" strings (IPv6 hosts in brackets) and raw
// IPs (4 or 16 bytes, an IPv4 address possibly in its IPv4-mapped 16-byte form, as Go's
// net.IP). Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace limits::ring::memberlist {

struct HostPort {
  std::string host;  // without brackets
  uint16_t port = 0;
};

// "10.0.0.1:7946", "[::1]:7946", "loki-memberlist.loki.svc:7946"; a missing port is
// default_port (0: the port is required).
Result<HostPort> SplitHostPort(std::string_view s, uint16_t default_port = 0);
std::string JoinHostPort(std::string_view host, uint16_t port);

// Raw IP bytes -> text ("" when not 4 or 16 bytes). IPv4-mapped addresses print as IPv4.
std::string IpToString(std::string_view raw);
// A numeric IP -> raw bytes (4 for IPv4, 16 for IPv6); kInvalidArgument otherwise.
Result<std::string> IpFromString(std::string_view text);

// Resolves a host name (or numeric IP) to its IPs, text form, IPv4 first. Blocking.
Result<std::vector<std::string>> ResolveHost(const std::string& host);

}  // namespace limits::ring::memberlist
