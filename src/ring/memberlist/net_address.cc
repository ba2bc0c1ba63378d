#include "ring/memberlist/net_address.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace limits::ring::memberlist {

namespace {

Status Bad(std::string_view address, std::string_view problem) {
  std::string msg;
  msg.append("address \"").append(address).append("\": ").append(problem);
  return Status::InvalidArgument(std::move(msg));
}

}  // namespace

Result<HostPort> SplitHostPort(std::string_view s, uint16_t default_port) {
  HostPort out;
  std::string_view port_text;
  if (!s.empty() && s.front() == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return Bad(s, "missing ']'");
    out.host.assign(s.substr(1, close - 1));
    std::string_view rest = s.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') return Bad(s, "junk after ']'");
      port_text = rest.substr(1);
    }
  } else {
    const size_t colon = s.rfind(':');
    if (colon != std::string_view::npos && s.find(':') != colon) {
      // Several colons without brackets: a bare IPv6 address, no port.
      out.host.assign(s);
    } else if (colon != std::string_view::npos) {
      out.host.assign(s.substr(0, colon));
      port_text = s.substr(colon + 1);
    } else {
      out.host.assign(s);
    }
  }
  if (out.host.empty()) return Bad(s, "empty host");
  if (port_text.empty()) {
    if (default_port == 0) return Bad(s, "no port");
    out.port = default_port;
    return out;
  }
  uint32_t port = 0;
  for (char c : port_text) {
    if (c < '0' || c > '9' || port > 65535) {
      return Bad(s, "bad port");
    }
    port = port * 10 + static_cast<uint32_t>(c - '0');
  }
  if (port == 0 || port > 65535) return Bad(s, "bad port");
  out.port = static_cast<uint16_t>(port);
  return out;
}

std::string JoinHostPort(std::string_view host, uint16_t port) {
  // Built by appending (GCC 12 warns falsely about "[" + std::string(...) + ...).
  std::string out;
  const bool v6 = host.find(':') != std::string_view::npos;
  if (v6) out.append(1, '[');
  out.append(host);
  if (v6) out.append(1, ']');
  out.append(1, ':').append(std::to_string(port));
  return out;
}

std::string IpToString(std::string_view raw) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (raw.size() == 4) {
    if (!inet_ntop(AF_INET, raw.data(), buf, sizeof buf)) return {};
    return buf;
  }
  if (raw.size() == 16) {
    static const char kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\xff', '\xff'};
    if (std::memcmp(raw.data(), kMapped, 12) == 0) return IpToString(raw.substr(12));
    if (!inet_ntop(AF_INET6, raw.data(), buf, sizeof buf)) return {};
    return buf;
  }
  return {};
}

Result<std::string> IpFromString(std::string_view text) {
  const std::string t(text);
  unsigned char buf[16];
  if (inet_pton(AF_INET, t.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 4);
  if (inet_pton(AF_INET6, t.c_str(), buf) == 1) return std::string(reinterpret_cast<char*>(buf), 16);
  std::string msg;
  msg.append(1, '"').append(t).append("\" is not an IP address");
  return Status::InvalidArgument(std::move(msg));
}

Result<std::vector<std::string>> ResolveHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) return Status::Unavailable("resolve " + host + ": " + gai_strerror(rc));
  std::vector<std::string> v4;
  std::vector<std::string> v6;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    if (ai->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_addr, buf, sizeof buf);
      if (std::find(v4.begin(), v4.end(), buf) == v4.end()) v4.emplace_back(buf);
    } else if (ai->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_addr, buf, sizeof buf);
      if (std::find(v6.begin(), v6.end(), buf) == v6.end()) v6.emplace_back(buf);
    }
  }
  freeaddrinfo(res);
  v4.insert(v4.end(), v6.begin(), v6.end());
  if (v4.empty()) return Status::Unavailable("resolve " + host + ": no addresses");
  return v4;
}

}  // namespace limits::ring::memberlist
