#include "ring/instance_addr.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>

namespace limits::ring {

Result<std::string> FirstNonLoopbackIPv4() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return Status::IOError("getifaddrs failed");
  std::string found;
  for (ifaddrs* i = list; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    if (!(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK)) continue;
    const auto* in = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) continue;
    char buf[INET_ADDRSTRLEN] = {};
    if (inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf) != nullptr) found = buf;
  }
  freeifaddrs(list);
  if (found.empty()) {
    return Status::NotFound("no network interface has a non-loopback IPv4 address; set ring.instance_addr");
  }
  return found;
}

Result<std::string> AdvertisedAddr(const std::string& host, int port, int listen_port) {
  std::string h = host;
  if (h.empty()) {
    ASSIGN_OR_RETURN(h, FirstNonLoopbackIPv4());
  }
  const int p = port != 0 ? port : listen_port;
  if (p <= 0 || p > 65535) return Status::InvalidArgument("no port to advertise in the ring");
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  return h + ":" + std::to_string(p);
}

}  // namespace limits::ring
