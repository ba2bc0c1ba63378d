// The address this instance advertises in the ring, as dskit's lifecycler picks it: the
// configured host, else the first non-loopback IPv4 address of an interface that is up;
// the configured port, else the gRPC server's listen port. Thread-safe (no state).
#pragma once

#include <string>

#include "common/result.h"

namespace limits::ring {

// kNotFound when no interface has a non-loopback IPv4 address.
Result<std::string> FirstNonLoopbackIPv4();

// "host:port" ("[v6]:port" for an IPv6 host). host "" picks FirstNonLoopbackIPv4(); port 0
// takes listen_port.
Result<std::string> AdvertisedAddr(const std::string& host, int port, int listen_port);

}  // namespace limits::ring
