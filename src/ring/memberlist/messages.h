// HashiCorp memberlist's messages (net.go): a type byte followed by the msgpack of a struct,
// field names as keys. Field names, types and message numbers are part of the protocol and
// match memberlist's; IP addresses are raw bytes (4 or 16) kept exactly as received, since
// memberlist compares them bytewise. Also the compound message (several messages in one
// packet) and the two packet headers: the cluster label and the CRC (protocol version 5).
// Pure functions and plain structs; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"
#include "ring/memberlist/msgpack.h"

namespace limits::ring::memberlist {

enum class MessageType : uint8_t {
  kPing = 0,
  kIndirectPing = 1,
  kAck = 2,
  kSuspect = 3,
  kAlive = 4,
  kDead = 5,
  kPushPull = 6,
  kCompound = 7,
  kUser = 8,
  kCompress = 9,
  kEncrypt = 10,
  kNack = 11,
  kHasCrc = 12,
  kErr = 13,
  kHasLabel = 244,
};
const char* MessageTypeName(uint8_t type);

// The protocol versions we understand and speak, as dskit's memberlist advertises them:
// [pmin, pmax, pcur, dmin, dmax, dcur] = [1, 5, 2, 0, 0, 0].
inline constexpr uint8_t kProtocolMin = 1;
inline constexpr uint8_t kProtocolMax = 5;
inline constexpr uint8_t kProtocolCur = 2;
std::string OurVsn();

// Node states as memberlist numbers them (pushNodeState.State).
enum class NodeStateType : int { kAlive = 0, kSuspect = 1, kDead = 2, kLeft = 3 };
const char* NodeStateName(NodeStateType state);

struct PingMsg {
  uint32_t seq_no = 0;
  std::string node;         // the intended recipient; "" = whoever answers
  std::string source_addr;  // raw IP; omitted when empty
  uint16_t source_port = 0;
  std::string source_node;
};
struct IndirectPingMsg {
  uint32_t seq_no = 0;
  std::string target;  // raw IP
  uint16_t port = 0;
  std::string node;
  bool nack = false;
  std::string source_addr;
  uint16_t source_port = 0;
  std::string source_node;
};
struct AckMsg {
  uint32_t seq_no = 0;
  std::string payload;
};
struct NackMsg {
  uint32_t seq_no = 0;
};
struct ErrMsg {
  std::string error;
};
// suspect and dead carry the same fields.
struct SuspectMsg {
  uint32_t incarnation = 0;
  std::string node;
  std::string from;
};
using DeadMsg = SuspectMsg;
struct AliveMsg {
  uint32_t incarnation = 0;
  std::string node;
  std::string addr;  // raw IP
  uint16_t port = 0;
  std::string meta;
  std::string vsn;  // six protocol version bytes
};
struct PushPullHeader {
  int64_t nodes = 0;
  int64_t user_state_len = 0;
  bool join = false;
};
struct PushNodeState {
  std::string name;
  std::string addr;
  uint16_t port = 0;
  std::string meta;
  uint32_t incarnation = 0;
  int64_t state = 0;  // NodeStateType
  std::string vsn;
};
struct UserMsgHeader {
  int64_t user_msg_len = 0;
};
struct CompressMsg {
  uint8_t algo = 0;  // 0 = LZW
  std::string buf;
};

void Write(MsgpackWriter& w, const PingMsg& m);
void Write(MsgpackWriter& w, const IndirectPingMsg& m);
void Write(MsgpackWriter& w, const AckMsg& m);
void Write(MsgpackWriter& w, const NackMsg& m);
void Write(MsgpackWriter& w, const ErrMsg& m);
void Write(MsgpackWriter& w, const SuspectMsg& m);
void Write(MsgpackWriter& w, const AliveMsg& m);
void Write(MsgpackWriter& w, const PushPullHeader& m);
void Write(MsgpackWriter& w, const PushNodeState& m);
void Write(MsgpackWriter& w, const UserMsgHeader& m);
void Write(MsgpackWriter& w, const CompressMsg& m);

Status Read(MsgpackReader& r, PingMsg* m);
Status Read(MsgpackReader& r, IndirectPingMsg* m);
Status Read(MsgpackReader& r, AckMsg* m);
Status Read(MsgpackReader& r, NackMsg* m);
Status Read(MsgpackReader& r, ErrMsg* m);
Status Read(MsgpackReader& r, SuspectMsg* m);
Status Read(MsgpackReader& r, AliveMsg* m);
Status Read(MsgpackReader& r, PushPullHeader* m);
Status Read(MsgpackReader& r, PushNodeState* m);
Status Read(MsgpackReader& r, UserMsgHeader* m);
Status Read(MsgpackReader& r, CompressMsg* m);

// Type byte + msgpack body, as memberlist's encode().
template <typename M>
std::string EncodeMessage(MessageType type, const M& m) {
  MsgpackWriter w;
  Write(w, m);
  std::string out(1, static_cast<char>(type));
  out += w.bytes();
  return out;
}

// The msgpack body of a message whose type byte was already consumed.
template <typename M>
Result<M> DecodeBody(std::string_view body) {
  SpanSource src(body);
  MsgpackReader r(src);
  M m;
  RETURN_IF_ERROR(Read(r, &m));
  return m;
}

// compoundMsg: [7][count u8][count x u16 BE length][messages]. At most 255 parts, each at most
// 65535 bytes (the caller sends longer ones alone).
std::string EncodeCompound(const std::vector<std::string>& parts);
struct CompoundParts {
  std::vector<std::string_view> parts;
  int truncated = 0;  // parts announced but missing from the buffer
};
// `body` follows the type byte.
Result<CompoundParts> DecodeCompound(std::string_view body);

// The cluster label header, [244][len][label], first on every packet and stream when a label
// is configured. At most 255 bytes; an empty label sends no header.
inline constexpr size_t kMaxLabelSize = 255;
std::string LabelHeader(std::string_view label);
// Splits a packet into its label ("" when absent) and the rest; kCorruption when truncated
// or when the header is present with an empty label.
Result<std::pair<std::string, std::string_view>> StripPacketLabel(std::string_view packet);

// hasCrcMsg: [12][crc32 BE of msg][msg], sent to nodes that understand protocol 5.
std::string WithCrc(std::string_view msg);

}  // namespace limits::ring::memberlist
