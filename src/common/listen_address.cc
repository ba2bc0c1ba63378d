#include "common/listen_address.h"

#include <charconv>

namespace limits {

Result<ListenAddress> ParseListenAddress(std::string_view text) {
  const std::string problem = "expected host:port, [ipv6]:port or :port, got \"" + std::string(text) + "\"";
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon + 1 == text.size()) return Status::InvalidArgument(problem);
  std::string_view host = text.substr(0, colon);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return Status::InvalidArgument(problem);
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos || host.find(']') != std::string_view::npos) {
    return Status::InvalidArgument(problem);  // an IPv6 address needs brackets
  }
  const std::string_view digits = text.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || end != digits.data() + digits.size() || port < 0 || port > 65535) {
    return Status::InvalidArgument(problem);
  }
  return ListenAddress{std::string(host), port};
}

}  // namespace limits
