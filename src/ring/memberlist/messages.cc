#include "ring/memberlist/messages.h"

#include "ring/memberlist/digest.h"

namespace limits::ring::memberlist {

namespace {

template <typename F>
Status ReadStruct(MsgpackReader& r, F&& field) {
  ASSIGN_OR_RETURN(uint32_t n, r.ReadMapHeader());
  for (uint32_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(std::string key, r.ReadBytes());
    RETURN_IF_ERROR(field(std::string_view(key)));
  }
  return Status::OK();
}

Status U32(MsgpackReader& r, uint32_t* out) {
  ASSIGN_OR_RETURN(uint64_t v, r.ReadUint(UINT32_MAX));
  *out = static_cast<uint32_t>(v);
  return Status::OK();
}
Status U16(MsgpackReader& r, uint16_t* out) {
  ASSIGN_OR_RETURN(uint64_t v, r.ReadUint(UINT16_MAX));
  *out = static_cast<uint16_t>(v);
  return Status::OK();
}
Status U8(MsgpackReader& r, uint8_t* out) {
  ASSIGN_OR_RETURN(uint64_t v, r.ReadUint(UINT8_MAX));
  *out = static_cast<uint8_t>(v);
  return Status::OK();
}
Status I64(MsgpackReader& r, int64_t* out) {
  ASSIGN_OR_RETURN(*out, r.ReadInt());
  return Status::OK();
}
Status Bytes(MsgpackReader& r, std::string* out) {
  ASSIGN_OR_RETURN(*out, r.ReadBytes());
  return Status::OK();
}
Status Flag(MsgpackReader& r, bool* out) {
  ASSIGN_OR_RETURN(*out, r.ReadBool());
  return Status::OK();
}

// []byte fields: Go writes a nil slice as msgpack nil.
void BytesOrNil(MsgpackWriter& w, std::string_view v) {
  if (v.empty()) {
    w.Nil();
  } else {
    w.Raw(v);
  }
}

}  // namespace

const char* MessageTypeName(uint8_t type) {
  switch (type) {
    case 0: return "ping";
    case 1: return "indirect_ping";
    case 2: return "ack";
    case 3: return "suspect";
    case 4: return "alive";
    case 5: return "dead";
    case 6: return "push_pull";
    case 7: return "compound";
    case 8: return "user";
    case 9: return "compress";
    case 10: return "encrypt";
    case 11: return "nack";
    case 12: return "has_crc";
    case 13: return "err";
    case 244: return "has_label";
    default: return "unknown";
  }
}

std::string OurVsn() {
  return std::string{static_cast<char>(kProtocolMin), static_cast<char>(kProtocolMax),
                     static_cast<char>(kProtocolCur), 0, 0, 0};
}

const char* NodeStateName(NodeStateType state) {
  switch (state) {
    case NodeStateType::kAlive: return "alive";
    case NodeStateType::kSuspect: return "suspect";
    case NodeStateType::kDead: return "dead";
    case NodeStateType::kLeft: return "left";
  }
  return "unknown";
}

void Write(MsgpackWriter& w, const PingMsg& m) {
  // SourceAddr, SourcePort and SourceNode are omitempty.
  const uint32_t n = 2 + !m.source_addr.empty() + (m.source_port != 0) + !m.source_node.empty();
  w.MapHeader(n);
  w.Key("SeqNo");
  w.Uint(m.seq_no);
  w.Key("Node");
  w.Raw(m.node);
  if (!m.source_addr.empty()) {
    w.Key("SourceAddr");
    w.Raw(m.source_addr);
  }
  if (m.source_port != 0) {
    w.Key("SourcePort");
    w.Uint(m.source_port);
  }
  if (!m.source_node.empty()) {
    w.Key("SourceNode");
    w.Raw(m.source_node);
  }
}

void Write(MsgpackWriter& w, const IndirectPingMsg& m) {
  const uint32_t n = 5 + !m.source_addr.empty() + (m.source_port != 0) + !m.source_node.empty();
  w.MapHeader(n);
  w.Key("SeqNo");
  w.Uint(m.seq_no);
  w.Key("Target");
  BytesOrNil(w, m.target);
  w.Key("Port");
  w.Uint(m.port);
  w.Key("Node");
  w.Raw(m.node);
  w.Key("Nack");
  w.Bool(m.nack);
  if (!m.source_addr.empty()) {
    w.Key("SourceAddr");
    w.Raw(m.source_addr);
  }
  if (m.source_port != 0) {
    w.Key("SourcePort");
    w.Uint(m.source_port);
  }
  if (!m.source_node.empty()) {
    w.Key("SourceNode");
    w.Raw(m.source_node);
  }
}

void Write(MsgpackWriter& w, const AckMsg& m) {
  w.MapHeader(2);
  w.Key("SeqNo");
  w.Uint(m.seq_no);
  w.Key("Payload");
  BytesOrNil(w, m.payload);
}

void Write(MsgpackWriter& w, const NackMsg& m) {
  w.MapHeader(1);
  w.Key("SeqNo");
  w.Uint(m.seq_no);
}

void Write(MsgpackWriter& w, const ErrMsg& m) {
  w.MapHeader(1);
  w.Key("Error");
  w.Raw(m.error);
}

void Write(MsgpackWriter& w, const SuspectMsg& m) {
  w.MapHeader(3);
  w.Key("Incarnation");
  w.Uint(m.incarnation);
  w.Key("Node");
  w.Raw(m.node);
  w.Key("From");
  w.Raw(m.from);
}

void Write(MsgpackWriter& w, const AliveMsg& m) {
  w.MapHeader(6);
  w.Key("Incarnation");
  w.Uint(m.incarnation);
  w.Key("Node");
  w.Raw(m.node);
  w.Key("Addr");
  BytesOrNil(w, m.addr);
  w.Key("Port");
  w.Uint(m.port);
  w.Key("Meta");
  BytesOrNil(w, m.meta);
  w.Key("Vsn");
  BytesOrNil(w, m.vsn);
}

void Write(MsgpackWriter& w, const PushPullHeader& m) {
  w.MapHeader(3);
  w.Key("Nodes");
  w.Int(m.nodes);
  w.Key("UserStateLen");
  w.Int(m.user_state_len);
  w.Key("Join");
  w.Bool(m.join);
}

void Write(MsgpackWriter& w, const PushNodeState& m) {
  w.MapHeader(7);
  w.Key("Name");
  w.Raw(m.name);
  w.Key("Addr");
  BytesOrNil(w, m.addr);
  w.Key("Port");
  w.Uint(m.port);
  w.Key("Meta");
  BytesOrNil(w, m.meta);
  w.Key("Incarnation");
  w.Uint(m.incarnation);
  w.Key("State");
  w.Int(m.state);
  w.Key("Vsn");
  BytesOrNil(w, m.vsn);
}

void Write(MsgpackWriter& w, const UserMsgHeader& m) {
  w.MapHeader(1);
  w.Key("UserMsgLen");
  w.Int(m.user_msg_len);
}

void Write(MsgpackWriter& w, const CompressMsg& m) {
  w.MapHeader(2);
  w.Key("Algo");
  w.Uint(m.algo);
  w.Key("Buf");
  BytesOrNil(w, m.buf);
}

Status Read(MsgpackReader& r, PingMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "SeqNo") return U32(r, &m->seq_no);
    if (k == "Node") return Bytes(r, &m->node);
    if (k == "SourceAddr") return Bytes(r, &m->source_addr);
    if (k == "SourcePort") return U16(r, &m->source_port);
    if (k == "SourceNode") return Bytes(r, &m->source_node);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, IndirectPingMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "SeqNo") return U32(r, &m->seq_no);
    if (k == "Target") return Bytes(r, &m->target);
    if (k == "Port") return U16(r, &m->port);
    if (k == "Node") return Bytes(r, &m->node);
    if (k == "Nack") return Flag(r, &m->nack);
    if (k == "SourceAddr") return Bytes(r, &m->source_addr);
    if (k == "SourcePort") return U16(r, &m->source_port);
    if (k == "SourceNode") return Bytes(r, &m->source_node);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, AckMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "SeqNo") return U32(r, &m->seq_no);
    if (k == "Payload") return Bytes(r, &m->payload);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, NackMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "SeqNo") return U32(r, &m->seq_no);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, ErrMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Error") return Bytes(r, &m->error);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, SuspectMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Incarnation") return U32(r, &m->incarnation);
    if (k == "Node") return Bytes(r, &m->node);
    if (k == "From") return Bytes(r, &m->from);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, AliveMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Incarnation") return U32(r, &m->incarnation);
    if (k == "Node") return Bytes(r, &m->node);
    if (k == "Addr") return Bytes(r, &m->addr);
    if (k == "Port") return U16(r, &m->port);
    if (k == "Meta") return Bytes(r, &m->meta);
    if (k == "Vsn") return Bytes(r, &m->vsn);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, PushPullHeader* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Nodes") return I64(r, &m->nodes);
    if (k == "UserStateLen") return I64(r, &m->user_state_len);
    if (k == "Join") return Flag(r, &m->join);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, PushNodeState* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Name") return Bytes(r, &m->name);
    if (k == "Addr") return Bytes(r, &m->addr);
    if (k == "Port") return U16(r, &m->port);
    if (k == "Meta") return Bytes(r, &m->meta);
    if (k == "Incarnation") return U32(r, &m->incarnation);
    if (k == "State") return I64(r, &m->state);
    if (k == "Vsn") return Bytes(r, &m->vsn);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, UserMsgHeader* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "UserMsgLen") return I64(r, &m->user_msg_len);
    return r.Skip();
  });
}

Status Read(MsgpackReader& r, CompressMsg* m) {
  return ReadStruct(r, [&](std::string_view k) {
    if (k == "Algo") return U8(r, &m->algo);
    if (k == "Buf") return Bytes(r, &m->buf);
    return r.Skip();
  });
}

std::string EncodeCompound(const std::vector<std::string>& parts) {
  LIMITS_CHECK(parts.size() <= 255, "compound message with more than 255 parts");
  std::string out;
  out.push_back(static_cast<char>(MessageType::kCompound));
  out.push_back(static_cast<char>(parts.size()));
  for (const auto& p : parts) {
    LIMITS_CHECK(p.size() <= 65535, "compound part over 65535 bytes");
    out.push_back(static_cast<char>(p.size() >> 8));
    out.push_back(static_cast<char>(p.size() & 0xff));
  }
  for (const auto& p : parts) out += p;
  return out;
}

Result<CompoundParts> DecodeCompound(std::string_view body) {
  if (body.empty()) return Status::Corruption("compound: missing length byte");
  const size_t n = static_cast<uint8_t>(body[0]);
  body.remove_prefix(1);
  if (body.size() < 2 * n) return Status::Corruption("compound: truncated length table");
  std::vector<size_t> lengths(n);
  for (size_t i = 0; i < n; ++i) {
    lengths[i] = static_cast<size_t>(static_cast<uint8_t>(body[2 * i])) << 8 | static_cast<uint8_t>(body[2 * i + 1]);
  }
  body.remove_prefix(2 * n);
  CompoundParts out;
  for (size_t i = 0; i < n; ++i) {
    if (body.size() < lengths[i]) {
      out.truncated = static_cast<int>(n - i);
      break;
    }
    out.parts.push_back(body.substr(0, lengths[i]));
    body.remove_prefix(lengths[i]);
  }
  return out;
}

std::string LabelHeader(std::string_view label) {
  if (label.empty()) return {};
  LIMITS_CHECK(label.size() <= kMaxLabelSize, "cluster label over 255 bytes");
  std::string out;
  out.push_back(static_cast<char>(MessageType::kHasLabel));
  out.push_back(static_cast<char>(label.size()));
  out += label;
  return out;
}

Result<std::pair<std::string, std::string_view>> StripPacketLabel(std::string_view packet) {
  if (packet.empty() || static_cast<uint8_t>(packet[0]) != static_cast<uint8_t>(MessageType::kHasLabel)) {
    return std::pair<std::string, std::string_view>{std::string(), packet};
  }
  if (packet.size() < 2) return Status::Corruption("label header truncated");
  const size_t n = static_cast<uint8_t>(packet[1]);
  if (n == 0) return Status::Corruption("label header present with an empty label");
  if (packet.size() < 2 + n) return Status::Corruption("label header truncated");
  return std::pair<std::string, std::string_view>{std::string(packet.substr(2, n)), packet.substr(2 + n)};
}

std::string WithCrc(std::string_view msg) {
  const uint32_t crc = Crc32Ieee(msg);
  std::string out;
  out.reserve(5 + msg.size());
  out.push_back(static_cast<char>(MessageType::kHasCrc));
  for (int i = 3; i >= 0; --i) out.push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
  out += msg;
  return out;
}

}  // namespace limits::ring::memberlist
