// Feeds: any bytes as the msgpack body of each HashiCorp memberlist message (ping, indirect
// ping, ack, nack, err, suspect/dead, alive, push-pull header, push node state, user message
// header, compress: what a gossip peer sends after the type byte), as a compound message's
// body, and as a packet that may start with a cluster label header.
// Checks: a decoded message written back (memberlist's encoding) decodes to the same fields;
// msgpack Skip never recurses without bound; compound parts lie inside the body and, when
// none is missing, EncodeCompound rebuilds the bytes they came from; a stripped label header
// rebuilds the packet (LabelHeader + rest).
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "fuzz_check.h"
#include "ring/memberlist/messages.h"

namespace ml = limits::ring::memberlist;
using limits::fuzz::Within;

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  limits::fuzz::QuietLogs();
  return 0;
}

namespace {

auto Fields(const ml::PingMsg& m) { return std::tie(m.seq_no, m.node, m.source_addr, m.source_port, m.source_node); }
auto Fields(const ml::IndirectPingMsg& m) {
  return std::tie(m.seq_no, m.target, m.port, m.node, m.nack, m.source_addr, m.source_port, m.source_node);
}
auto Fields(const ml::AckMsg& m) { return std::tie(m.seq_no, m.payload); }
auto Fields(const ml::NackMsg& m) { return std::tie(m.seq_no); }
auto Fields(const ml::ErrMsg& m) { return std::tie(m.error); }
auto Fields(const ml::SuspectMsg& m) { return std::tie(m.incarnation, m.node, m.from); }
auto Fields(const ml::AliveMsg& m) { return std::tie(m.incarnation, m.node, m.addr, m.port, m.meta, m.vsn); }
auto Fields(const ml::PushPullHeader& m) { return std::tie(m.nodes, m.user_state_len, m.join); }
auto Fields(const ml::PushNodeState& m) {
  return std::tie(m.name, m.addr, m.port, m.meta, m.incarnation, m.state, m.vsn);
}
auto Fields(const ml::UserMsgHeader& m) { return std::tie(m.user_msg_len); }
auto Fields(const ml::CompressMsg& m) { return std::tie(m.algo, m.buf); }

template <typename M>
void RoundTrip(std::string_view body) {
  limits::Result<M> m = ml::DecodeBody<M>(body);
  if (!m.ok()) return;
  ml::MsgpackWriter w;
  ml::Write(w, *m);
  limits::Result<M> again = ml::DecodeBody<M>(w.bytes());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(Fields(*again) == Fields(*m));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view in = limits::fuzz::AsView(data, size);

  RoundTrip<ml::PingMsg>(in);
  RoundTrip<ml::IndirectPingMsg>(in);
  RoundTrip<ml::AckMsg>(in);
  RoundTrip<ml::NackMsg>(in);
  RoundTrip<ml::ErrMsg>(in);
  RoundTrip<ml::SuspectMsg>(in);
  RoundTrip<ml::AliveMsg>(in);
  RoundTrip<ml::PushPullHeader>(in);
  RoundTrip<ml::PushNodeState>(in);
  RoundTrip<ml::UserMsgHeader>(in);
  RoundTrip<ml::CompressMsg>(in);

  {
    ml::SpanSource src(in);
    ml::MsgpackReader r(src);
    while (r.Skip().ok()) {
    }
  }

  limits::Result<ml::CompoundParts> parts = ml::DecodeCompound(in);
  if (parts.ok()) {
    const size_t n = static_cast<uint8_t>(in[0]);
    FUZZ_CHECK(parts->parts.size() + static_cast<size_t>(parts->truncated) == n);
    size_t total = 0;
    std::vector<std::string> copies;
    for (std::string_view p : parts->parts) {
      FUZZ_CHECK(Within(p, in));
      total += p.size();
      copies.emplace_back(p);
    }
    if (parts->truncated == 0) {
      FUZZ_CHECK(1 + 2 * n + total <= in.size());
      const std::string rebuilt = ml::EncodeCompound(copies);
      FUZZ_CHECK(rebuilt.substr(1) == in.substr(0, 1 + 2 * n + total));
    }
  }

  limits::Result<std::pair<std::string, std::string_view>> labelled = ml::StripPacketLabel(in);
  if (labelled.ok()) {
    FUZZ_CHECK(labelled->first.size() <= ml::kMaxLabelSize);
    FUZZ_CHECK(Within(labelled->second, in));
    FUZZ_CHECK(ml::LabelHeader(labelled->first) + std::string(labelled->second) == in);
  }
  return 0;
}
