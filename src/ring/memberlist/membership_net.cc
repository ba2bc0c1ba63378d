// Membership: what arrives from and goes to the network (memberlist's net.go) — packets
// (label, CRC, compound, compressed, ping/ack/nack, indirect pings, alive/suspect/dead, user)
// and streams (push-pull, ping, user messages).
#include <algorithm>
#include <optional>

#include "common/log.h"
#include "ring/memberlist/digest.h"
#include "ring/memberlist/lzw.h"
#include "ring/memberlist/membership.h"
#include "ring/memberlist/net_address.h"

namespace limits::ring::memberlist {

namespace {

constexpr char kComponent[] = "memberlist";
constexpr int kMaxNesting = 4;
constexpr size_t kMaxDecompressed = 64u << 20;
constexpr int64_t kMaxPushNodes = 100000;

uint32_t ReadU32Be(std::string_view b) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[0])) << 24 | static_cast<uint32_t>(static_cast<uint8_t>(b[1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[2])) << 8 | static_cast<uint8_t>(b[3]);
}

}  // namespace

void Membership::HandlePacket(std::string payload, const std::string& from) {
  Result<std::pair<std::string, std::string_view>> labelled = StripPacketLabel(payload);
  if (!labelled.ok()) {
    metrics_.Rejected("decode");
    log::Debug(kComponent, "packet refused").Kv("from", from).Kv("error", labelled.status().ToString());
    return;
  }
  if (!options_.skip_label_check && labelled->first != options_.cluster_label) {
    metrics_.Rejected("label");
    log::Debug(kComponent, "packet with another cluster label").Kv("from", from).Kv("label", labelled->first);
    return;
  }
  std::string_view buf = labelled->second;
  if (buf.size() >= 5 && static_cast<uint8_t>(buf[0]) == static_cast<uint8_t>(MessageType::kHasCrc)) {
    if (Crc32Ieee(buf.substr(5)) != ReadU32Be(buf.substr(1, 4))) {
      metrics_.Rejected("crc");
      log::Debug(kComponent, "packet with a bad checksum").Kv("from", from);
      return;
    }
    buf.remove_prefix(5);
  }
  HandleCommand(buf, from, 0);
}

void Membership::HandleCommand(std::string_view buf, const std::string& from, int depth) {
  if (buf.empty()) {
    metrics_.Rejected("short");
    return;
  }
  const auto type = static_cast<uint8_t>(buf[0]);
  const std::string_view body = buf.substr(1);
  metrics_.Received(MessageTypeName(type));
  auto bad = [&](const Status& s) {
    metrics_.Rejected("decode");
    log::Debug(kComponent, "message refused")
        .Kv("from", from)
        .Kv("type", MessageTypeName(type))
        .Kv("error", s.ToString());
  };
  switch (static_cast<MessageType>(type)) {
    case MessageType::kCompound: {
      if (depth >= kMaxNesting) return bad(Status::Corruption("messages nested too deep"));
      Result<CompoundParts> parts = DecodeCompound(body);
      if (!parts.ok()) return bad(parts.status());
      if (parts->truncated > 0) metrics_.Rejected("short");
      for (std::string_view part : parts->parts) HandleCommand(part, from, depth + 1);
      return;
    }
    case MessageType::kCompress: {
      if (depth >= kMaxNesting) return bad(Status::Corruption("messages nested too deep"));
      Result<CompressMsg> c = DecodeBody<CompressMsg>(body);
      if (!c.ok()) return bad(c.status());
      if (c->algo != 0) {
        metrics_.Rejected("unsupported");
        log::Debug(kComponent, "compressed with an unknown algorithm").Kv("algo", c->algo).Kv("from", from);
        return;
      }
      Result<std::string> plain = LzwDecompress(c->buf, kMaxDecompressed);
      if (!plain.ok()) return bad(plain.status());
      HandleCommand(*plain, from, depth + 1);
      return;
    }
    case MessageType::kPing:
      return HandlePing(body, from);
    case MessageType::kIndirectPing:
      return HandleIndirectPing(body, from);
    case MessageType::kAck: {
      Result<AckMsg> ack = DecodeBody<AckMsg>(body);
      if (!ack.ok()) return bad(ack.status());
      return HandleAck(ack->seq_no);
    }
    case MessageType::kNack: {
      Result<NackMsg> nack = DecodeBody<NackMsg>(body);
      if (!nack.ok()) return bad(nack.status());
      return HandleNack(nack->seq_no);
    }
    case MessageType::kAlive: {
      Result<AliveMsg> a = DecodeBody<AliveMsg>(body);
      if (!a.ok()) return bad(a.status());
      // Protocol version 1 sent no port: memberlist then assumes its own.
      if (a->port == 0) a->port = options_.advertise_port;
      std::lock_guard<std::mutex> lock(mu_);
      AliveNodeLocked(*a, false);
      return;
    }
    case MessageType::kSuspect: {
      Result<SuspectMsg> s = DecodeBody<SuspectMsg>(body);
      if (!s.ok()) return bad(s.status());
      std::lock_guard<std::mutex> lock(mu_);
      SuspectNodeLocked(*s);
      return;
    }
    case MessageType::kDead: {
      Result<DeadMsg> d = DecodeBody<DeadMsg>(body);
      if (!d.ok()) return bad(d.status());
      std::lock_guard<std::mutex> lock(mu_);
      DeadNodeLocked(*d);
      return;
    }
    case MessageType::kUser:
      delegate_.NotifyMsg(body);
      return;
    default:
      // Encrypted packets (no keyring here), stream-only types, or garbage.
      metrics_.Rejected("unsupported");
      log::Debug(kComponent, "unsupported packet message").Kv("from", from).Kv("type", static_cast<int>(type));
      return;
  }
}

void Membership::HandlePing(std::string_view body, const std::string& from) {
  Result<PingMsg> p = DecodeBody<PingMsg>(body);
  if (!p.ok()) {
    metrics_.Rejected("decode");
    return;
  }
  if (!p->node.empty() && p->node != options_.node_name) {
    log::Warn(kComponent, "ping for another node").Kv("node", p->node).Kv("from", from);
    return;
  }
  AckMsg ack;
  ack.seq_no = p->seq_no;
  const std::string addr = !p->source_addr.empty() && p->source_port > 0
                               ? JoinHostPort(IpToString(p->source_addr), p->source_port)
                               : from;
  SendPacket(addr, p->source_node, EncodeMessage(MessageType::kAck, ack), "ack");
}

void Membership::HandleIndirectPing(std::string_view body, const std::string& from) {
  Result<IndirectPingMsg> ind = DecodeBody<IndirectPingMsg>(body);
  if (!ind.ok()) {
    metrics_.Rejected("decode");
    return;
  }
  if (ind->port == 0) ind->port = options_.advertise_port;
  const uint32_t seq = NextSeq();
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    AckWaiter w;
    w.relay = true;
    w.relay_seq = ind->seq_no;
    w.relay_addr = !ind->source_addr.empty() && ind->source_port > 0
                       ? JoinHostPort(IpToString(ind->source_addr), ind->source_port)
                       : from;
    w.relay_node = ind->source_node;
    w.relay_nack = ind->nack;
    w.deadline = std::chrono::steady_clock::now() + options_.probe_timeout;
    acks_[seq] = std::move(w);
  }
  PingMsg ping;
  ping.seq_no = seq;
  ping.node = ind->node;
  ping.source_addr = self_ip_;
  ping.source_port = options_.advertise_port;
  ping.source_node = options_.node_name;
  SendPacket(JoinHostPort(IpToString(ind->target), ind->port), ind->node, EncodeMessage(MessageType::kPing, ping),
             "ping");
}

void Membership::HandleAck(uint32_t seq) {
  std::string relay_addr;
  std::string relay_node;
  uint32_t relay_seq = 0;
  {
    std::lock_guard<std::mutex> lock(ack_mu_);
    auto it = acks_.find(seq);
    if (it == acks_.end()) return;
    if (!it->second.relay) {
      it->second.acked = true;
      ack_cv_.notify_all();
      return;
    }
    relay_addr = it->second.relay_addr;
    relay_node = it->second.relay_node;
    relay_seq = it->second.relay_seq;
    acks_.erase(it);
  }
  AckMsg ack;
  ack.seq_no = relay_seq;
  SendPacket(relay_addr, relay_node, EncodeMessage(MessageType::kAck, ack), "ack");
}

void Membership::HandleNack(uint32_t seq) {
  std::lock_guard<std::mutex> lock(ack_mu_);
  auto it = acks_.find(seq);
  if (it != acks_.end() && !it->second.relay) ++it->second.nacks;
}

void Membership::SendPacket(const std::string& addr, const std::string& node_name, std::string msg, const char* type) {
  uint8_t pmax = 0;
  if (!node_name.empty()) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = nodes_.find(node_name);
    if (it != nodes_.end()) pmax = it->second.pmax();
  }
  metrics_.Sent(type);
  SendRaw(addr, pmax, std::move(msg));
}

void Membership::SendRaw(const std::string& addr, uint8_t pmax, std::string msg) {
  if (pmax >= 5) msg = WithCrc(msg);
  transport_.SendPacket(addr, LabelHeader(options_.cluster_label) + msg);
}

std::string Membership::EncodeLocalState(bool join) {
  std::vector<PushNodeState> nodes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [name, n] : nodes_) {
      PushNodeState p;
      p.name = name;
      p.addr = n.addr;
      p.port = n.port;
      p.meta = n.meta;
      p.incarnation = n.incarnation;
      p.state = static_cast<int64_t>(n.state);
      p.vsn = n.vsn;
      nodes.push_back(std::move(p));
    }
  }
  const std::string user = delegate_.LocalState(join);
  MsgpackWriter w;
  PushPullHeader h;
  h.nodes = static_cast<int64_t>(nodes.size());
  h.user_state_len = static_cast<int64_t>(user.size());
  h.join = join;
  Write(w, h);
  for (const auto& n : nodes) Write(w, n);
  std::string out(1, static_cast<char>(MessageType::kPushPull));
  out += w.bytes();
  out += user;
  return out;
}

Status Membership::ReadRemoteState(MsgpackReader& r, ByteSource& src, bool* join, std::vector<PushNodeState>* nodes,
                                   std::string* user) {
  PushPullHeader h;
  RETURN_IF_ERROR(Read(r, &h));
  if (h.nodes < 0 || h.nodes > kMaxPushNodes) return Status::Corruption("push-pull announces " + std::to_string(h.nodes) + " nodes");
  if (h.user_state_len < 0) return Status::Corruption("push-pull announces a negative user state");
  nodes->resize(static_cast<size_t>(h.nodes));
  for (auto& n : *nodes) {
    RETURN_IF_ERROR(Read(r, &n));
    if (n.port == 0) n.port = options_.advertise_port;
  }
  user->clear();
  if (h.user_state_len > 0) {
    ASSIGN_OR_RETURN(std::string_view u, src.Take(static_cast<size_t>(h.user_state_len)));
    user->assign(u);
  }
  *join = h.join;
  return Status::OK();
}

void Membership::MergeRemote(bool join, const std::vector<PushNodeState>& nodes, const std::string& user) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    MergeStateLocked(nodes);
  }
  if (!user.empty()) delegate_.MergeRemoteState(user, join);
}

namespace {

// A stream message after the label: its type and a source positioned on its body. A
// compressed message is decompressed into `plain` and read from there. `plain` lives on the
// heap: the message is moved on its way out (Result, ASSIGN_OR_RETURN), and a short string
// would move its bytes out of the buffer `span` points into.
struct StreamMessage {
  uint8_t type = 0;
  std::unique_ptr<std::string> plain;
  std::unique_ptr<SpanSource> span;
};

Result<StreamMessage> ReadStreamMessage(Connection& conn, std::optional<uint8_t> first) {
  StreamMessage m;
  if (first) {
    m.type = *first;
  } else {
    ASSIGN_OR_RETURN(std::string_view t, conn.Take(1));
    m.type = static_cast<uint8_t>(t[0]);
  }
  if (m.type == static_cast<uint8_t>(MessageType::kCompress)) {
    MsgpackReader r(conn);
    CompressMsg c;
    RETURN_IF_ERROR(Read(r, &c));
    if (c.algo != 0) return Status::InvalidArgument("compressed with unknown algorithm " + std::to_string(c.algo));
    ASSIGN_OR_RETURN(std::string plain, LzwDecompress(c.buf, kMaxDecompressed));
    if (plain.empty()) return Status::Corruption("empty compressed message");
    m.plain = std::make_unique<std::string>(std::move(plain));
    m.type = static_cast<uint8_t>((*m.plain)[0]);
    m.span = std::make_unique<SpanSource>(std::string_view(*m.plain).substr(1));
  }
  return m;
}

}  // namespace

void Membership::HandleStream(Connection& conn) {
  conn.SetTimeout(options_.stream_timeout);
  Result<std::string_view> first = conn.Take(1);
  if (!first.ok()) {
    metrics_.Rejected("short");
    return;
  }
  auto type = static_cast<uint8_t>((*first)[0]);
  std::string label;
  if (type == static_cast<uint8_t>(MessageType::kHasLabel)) {
    Result<std::string_view> len = conn.Take(1);
    if (!len.ok() || (*len)[0] == 0) {
      metrics_.Rejected("decode");
      return;
    }
    Result<std::string_view> l = conn.Take(static_cast<uint8_t>((*len)[0]));
    if (!l.ok()) {
      metrics_.Rejected("short");
      return;
    }
    label.assign(*l);
    Result<std::string_view> t = conn.Take(1);
    if (!t.ok()) {
      metrics_.Rejected("short");
      return;
    }
    type = static_cast<uint8_t>((*t)[0]);
  }
  if (!options_.skip_label_check && label != options_.cluster_label) {
    metrics_.Rejected("label");
    log::Debug(kComponent, "stream with another cluster label").Kv("peer", conn.peer()).Kv("label", label);
    return;
  }
  auto reply_error = [&](const std::string& error) {
    ErrMsg e;
    e.error = error;
    (void)conn.WriteAll(EncodeMessage(MessageType::kErr, e));
  };
  if (type == static_cast<uint8_t>(MessageType::kEncrypt)) {
    metrics_.Rejected("unsupported");
    reply_error("remote state is encrypted and encryption is not configured");
    return;
  }
  Result<StreamMessage> msg = ReadStreamMessage(conn, type);
  if (!msg.ok()) {
    metrics_.Rejected("decode");
    reply_error(msg.status().message());
    return;
  }
  ByteSource& src = msg->span ? static_cast<ByteSource&>(*msg->span) : static_cast<ByteSource&>(conn);
  MsgpackReader r(src);
  metrics_.Received(MessageTypeName(msg->type));
  switch (static_cast<MessageType>(msg->type)) {
    case MessageType::kPushPull: {
      bool join = false;
      std::vector<PushNodeState> nodes;
      std::string user;
      Status s = ReadRemoteState(r, src, &join, &nodes, &user);
      if (!s.ok()) {
        metrics_.PushPull("in", false);
        metrics_.Rejected(s.code() == StatusCode::kUnavailable ? "timeout" : "decode");
        log::Debug(kComponent, "push-pull refused").Kv("peer", conn.peer()).Kv("error", s.ToString());
        reply_error(s.message());
        return;
      }
      s = conn.WriteAll(EncodeLocalState(join));
      metrics_.Sent("push_pull");
      metrics_.PushPull("in", s.ok());
      if (!s.ok()) {
        log::Debug(kComponent, "push-pull reply failed").Kv("peer", conn.peer()).Kv("error", s.ToString());
        return;
      }
      MergeRemote(join, nodes, user);
      return;
    }
    case MessageType::kPing: {
      PingMsg p;
      if (!Read(r, &p).ok()) {
        metrics_.Rejected("decode");
        return;
      }
      if (!p.node.empty() && p.node != options_.node_name) return;
      AckMsg ack;
      ack.seq_no = p.seq_no;
      metrics_.Sent("ack");
      (void)conn.WriteAll(EncodeMessage(MessageType::kAck, ack));
      return;
    }
    case MessageType::kUser: {
      UserMsgHeader h;
      if (!Read(r, &h).ok() || h.user_msg_len < 0) {
        metrics_.Rejected("decode");
        return;
      }
      if (h.user_msg_len == 0) return;
      Result<std::string_view> body = src.Take(static_cast<size_t>(h.user_msg_len));
      if (!body.ok()) {
        metrics_.Rejected("short");
        return;
      }
      delegate_.NotifyMsg(*body);
      return;
    }
    default:
      metrics_.Rejected("unsupported");
      log::Debug(kComponent, "unsupported stream message").Kv("peer", conn.peer()).Kv("type", static_cast<int>(msg->type));
      return;
  }
}

Status Membership::PushPull(const std::string& addr, bool join) {
  Status result = [&]() -> Status {
    ASSIGN_OR_RETURN(auto conn, transport_.DialStream(addr, options_.stream_timeout));
    conn->SetTimeout(options_.stream_timeout);
    RETURN_IF_ERROR(conn->WriteAll(LabelHeader(options_.cluster_label) + EncodeLocalState(join)));
    metrics_.Sent("push_pull");
    ASSIGN_OR_RETURN(StreamMessage msg, ReadStreamMessage(*conn, std::nullopt));
    ByteSource& src = msg.span ? static_cast<ByteSource&>(*msg.span) : static_cast<ByteSource&>(*conn);
    MsgpackReader r(src);
    if (msg.type == static_cast<uint8_t>(MessageType::kErr)) {
      ErrMsg e;
      RETURN_IF_ERROR(Read(r, &e));
      return Status::Unavailable("remote error: " + e.error);
    }
    if (msg.type != static_cast<uint8_t>(MessageType::kPushPull)) {
      return Status::Corruption(std::string("expected a push-pull reply, got ") + MessageTypeName(msg.type));
    }
    metrics_.Received("push_pull");
    bool remote_join = false;
    std::vector<PushNodeState> nodes;
    std::string user;
    RETURN_IF_ERROR(ReadRemoteState(r, src, &remote_join, &nodes, &user));
    MergeRemote(join, nodes, user);
    return Status::OK();
  }();
  metrics_.PushPull("out", result.ok());
  return result;
}

}  // namespace limits::ring::memberlist
