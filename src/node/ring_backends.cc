#include "node/ring_backends.h"

#include <map>
#include <string_view>

#include "ring/etcd_kv.h"

namespace limits {
namespace {

Result<std::unique_ptr<ring::KvClient>> MakeEtcd(const config::Config& c, prometheus::Registry&) {
  ring::EtcdKvOptions o;
  o.endpoints = c.ring.etcd_endpoints;
  o.dial_timeout = c.ring.etcd_dial_timeout;
  ASSIGN_OR_RETURN(std::unique_ptr<ring::EtcdKv> kv, ring::EtcdKv::Create(o));
  return std::unique_ptr<ring::KvClient>(std::move(kv));
}

const std::map<std::string_view, RingKvFactory>& Backends() {
  static const std::map<std::string_view, RingKvFactory> backends = {
      {"etcd", MakeEtcd},
      // {"memberlist", memberlist::MakeKv},  (issue 11)
  };
  return backends;
}

}  // namespace

Result<std::unique_ptr<ring::KvClient>> MakeRingKv(const config::Config& config, prometheus::Registry& registry) {
  auto it = Backends().find(config.ring.store);
  if (it == Backends().end()) {
    return Status::InvalidArgument("ring.store: this build of limitsd has no \"" + config.ring.store + "\" backend");
  }
  Result<std::unique_ptr<ring::KvClient>> kv = it->second(config, registry);
  if (!kv.ok()) return kv.status().Prefixed("ring (store " + config.ring.store + ")");
  return kv;
}

}  // namespace limits
