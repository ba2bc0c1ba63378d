#include "ring/memberlist/metrics.h"

namespace limits::ring::memberlist {

namespace {

prometheus::Family<prometheus::Counter>& Counter(prometheus::Registry& r, const std::string& name,
                                                 const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}

}  // namespace

Metrics::Metrics(prometheus::Registry& registry)
    : packets_in(Counter(registry, "limitsd_memberlist_packets_received_total",
                         "Gossip packets (one TCP connection each) received and accepted")
                     .Add({})),
      packets_out(Counter(registry, "limitsd_memberlist_packets_sent_total", "Gossip packets sent").Add({})),
      packets_dropped(Counter(registry, "limitsd_memberlist_packets_dropped_total",
                              "Gossip packets not sent: send queue full or the peer unreachable")
                          .Add({})),
      bytes_in(Counter(registry, "limitsd_memberlist_received_bytes_total",
                       "Bytes received by the gossip transport (packets and streams)")
                   .Add({})),
      bytes_out(Counter(registry, "limitsd_memberlist_sent_bytes_total",
                        "Bytes sent by the gossip transport (packets and streams)")
                    .Add({})),
      streams_in(Counter(registry, "limitsd_memberlist_incoming_streams_total", "Gossip streams accepted").Add({})),
      streams_out(Counter(registry, "limitsd_memberlist_outgoing_streams_total", "Gossip streams opened").Add({})),
      refutes(Counter(registry, "limitsd_memberlist_refutes_total",
                      "Times this node refuted a suspect or dead message about itself")
                  .Add({})),
      health_score(prometheus::BuildGauge()
                       .Name("limitsd_memberlist_health_score")
                       .Help("memberlist's awareness score: 0 is healthy; probes slow down as it grows")
                       .Register(registry)
                       .Add({})),
      received_(Counter(registry, "limitsd_memberlist_messages_received_total",
                        "memberlist messages received, by type")),
      sent_(Counter(registry, "limitsd_memberlist_messages_sent_total", "memberlist messages sent, by type")),
      rejected_(Counter(registry, "limitsd_memberlist_rejected_total",
                        "Gossip input refused (frames, headers, messages), by reason")),
      push_pull_(Counter(registry, "limitsd_memberlist_push_pull_total",
                         "Full state exchanges, by direction (in: a peer asked; out: we asked) and result")),
      probes_(Counter(registry, "limitsd_memberlist_probes_total",
                      "Failure-detector probes of other members, by result (ack, indirect_ack, failed)")),
      kv_received_(Counter(registry, "limitsd_memberlist_kv_pairs_received_total",
                           "KV pairs received by gossip or push-pull, by result (changed, unchanged, invalid)")),
      cas_(Counter(registry, "limitsd_memberlist_cas_total", "Local CAS operations on the KV store, by result")),
      joins_(Counter(registry, "limitsd_memberlist_join_attempts_total",
                     "Attempts to join the cluster through memberlist_join, by result")),
      members_(prometheus::BuildGauge()
                   .Name("limitsd_memberlist_members")
                   .Help("Members of the gossip cluster as this node sees them (itself included), by state")
                   .Register(registry)),
      queue_(prometheus::BuildGauge()
                 .Name("limitsd_memberlist_broadcast_queue_messages")
                 .Help("Messages waiting to be gossiped, by queue (membership, kv_local, kv_forward)")
                 .Register(registry)) {
  for (const char* s : {"alive", "suspect", "dead", "left"}) SetMembers(s, 0);
  for (const char* r : {"bad_frame_type", "short", "digest", "oversized", "label", "crc", "decode", "unsupported",
                        "timeout", "overload", "tls"}) {
    rejected_.Add({{"reason", r}});
  }
  for (const char* d : {"in", "out"}) {
    push_pull_.Add({{"direction", d}, {"result", "ok"}});
    push_pull_.Add({{"direction", d}, {"result", "error"}});
  }
}

}  // namespace limits::ring::memberlist
