#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/corpus/<target>/) and the TOML dictionary.

Small valid inputs built here by hand, without protobuf, msgpack or snappy packages, so the
bytes are the same on any machine: protobuf's wire format, msgpack as HashiCorp memberlist
writes it, snappy's uncompressed (literal-only) block format, and LZW as Go's compress/lzw
writes it. The TOML and YAML seeds come from the repository's example configuration.
Regression inputs (crashes the fuzzers found) live beside the seeds as crash-<what>; this
script leaves them alone. Run from anywhere: python3 tests/fuzz/make_corpus.py
"""
import hashlib
import os
import re
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CORPUS = os.path.join(HERE, "corpus")


# --- protobuf wire format ---
def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def field(number, wire_type, payload=b""):
    tag = varint(number << 3 | wire_type)
    if wire_type == 2:
        return tag + varint(len(payload)) + payload
    return tag + payload


def vfield(number, v):
    return field(number, 0, varint(v))


def sfield(number, s):
    return field(number, 2, s.encode() if isinstance(s, str) else s)


def nested_groups(number, depth):
    out = b""
    for _ in range(depth):
        out = field(number, 3, out) + field(number, 4)
    return out


# --- snappy, literal-only ---
def snappy_literal(data):
    out = bytearray(varint(len(data)))
    pos = 0
    while pos < len(data):
        chunk = data[pos:pos + 65536]
        n = len(chunk) - 1
        if n < 60:
            out.append(n << 2)
        elif n < 256:
            out += bytes([60 << 2, n])
        else:
            out += bytes([61 << 2]) + struct.pack("<H", n)
        out += chunk
        pos += len(chunk)
    return bytes(out)


# --- msgpack as go-msgpack writes memberlist's structs ---
def mp(v):
    if v is None:
        return b"\xc0"
    if v is True:
        return b"\xc3"
    if v is False:
        return b"\xc2"
    if isinstance(v, int):
        if 0 <= v <= 0x7F:
            return bytes([v])
        if -32 <= v < 0:
            return struct.pack("b", v)
        if 0 <= v <= 0xFF:
            return b"\xcc" + bytes([v])
        if 0 <= v <= 0xFFFF:
            return b"\xcd" + struct.pack(">H", v)
        if 0 <= v <= 0xFFFFFFFF:
            return b"\xce" + struct.pack(">I", v)
        if v >= 0:
            return b"\xcf" + struct.pack(">Q", v)
        return b"\xd3" + struct.pack(">q", v)
    if isinstance(v, str):
        v = v.encode()
    if isinstance(v, bytes):
        n = len(v)
        if n < 32:
            return bytes([0xA0 | n]) + v
        if n < 65536:
            return b"\xda" + struct.pack(">H", n) + v
        return b"\xdb" + struct.pack(">I", n) + v
    if isinstance(v, dict):
        n = len(v)
        head = bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)
        return head + b"".join(mp(k) + mp(x) for k, x in v.items())
    if isinstance(v, list):
        n = len(v)
        head = bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)
        return head + b"".join(mp(x) for x in v)
    raise TypeError(v)


# --- LZW as Go's compress/lzw Writer (LSB, 8-bit literals) ---
def lzw(data):
    out = bytearray()
    st = {"bits": 0, "nbits": 0, "width": 9, "hi": 257, "overflow": 512}
    table = {}

    def write(code):
        st["bits"] |= code << st["nbits"]
        st["nbits"] += st["width"]
        while st["nbits"] >= 8:
            out.append(st["bits"] & 0xFF)
            st["bits"] >>= 8
            st["nbits"] -= 8

    def inc_hi():
        st["hi"] += 1
        if st["hi"] == st["overflow"]:
            st["width"] += 1
            st["overflow"] <<= 1
        if st["hi"] == 4095:
            write(256)
            st.update(width=9, hi=257, overflow=512)
            table.clear()
            return False
        return True

    write(256)
    if data:
        code = data[0]
        for x in data[1:]:
            key = code << 8 | x
            if key in table:
                code = table[key]
                continue
            write(code)
            code = x
            if inc_hi():
                table[key] = st["hi"]
        write(code)
        inc_hi()
    write(257)
    if st["nbits"] > 0:
        out.append(st["bits"] & 0xFF)
    return bytes(out)


# --- Loki's and dskit's messages ---
def record(zone, tenant, stream_hash, total_size, policy=""):
    meta = vfield(1, stream_hash) + vfield(2, total_size) + (sfield(3, policy) if policy else b"")
    return (sfield(1, zone) if zone else b"") + sfield(2, tenant) + sfield(3, meta)


def stream(stream_hash, size, policy=""):
    return sfield(2, vfield(1, stream_hash) + vfield(2, size) + (sfield(3, policy) if policy else b""))


def instance(addr, ts, state, tokens, zone="", iid="", registered=0):
    packed = b"".join(varint(t) for t in tokens)
    out = sfield(1, addr) + vfield(2, ts) + (vfield(3, state) if state else b"")
    if tokens:
        out += sfield(6, packed)
    if zone:
        out += sfield(7, zone)
    if registered:
        out += vfield(8, registered)
    if iid:
        out += sfield(9, iid)
    return out


def ring_desc(instances):
    return b"".join(sfield(1, sfield(1, name) + sfield(2, inst)) for name, inst in instances)


NOW = 1_700_000_000
RING = ring_desc([
    ("limits-a-0", instance("10.0.0.1:9095", NOW, 0, [5, 100, 7000, 4000000000], "zone-a", "limits-a-0", NOW - 60)),
    ("limits-b-0", instance("10.0.0.2:9095", NOW - 5, 3, [6, 200], "zone-b", "limits-b-0", NOW - 30)),
])
RING_LEFT = ring_desc([("limits-c-0", instance("10.0.0.3:9095", NOW - 10, 4, [], "zone-c"))])
RING_VALUE = snappy_literal(RING)


def kv_pair(key, value, codec="ringDesc", deleted=False, update_ms=0):
    out = sfield(1, key) + sfield(2, value) + sfield(3, codec)
    if deleted:
        out += vfield(4, 1)
    if update_ms:
        out += vfield(5, update_ms)
    return out


def user_state(pairs):
    return b"".join(struct.pack(">I", len(p)) + p for p in pairs)


IP_A = bytes([127, 0, 0, 3])
VSN = bytes([1, 5, 2, 0, 0, 0])


def alive(node, inc, ip=IP_A, port=7946, meta=b""):
    return {"Incarnation": inc, "Node": node, "Addr": ip, "Port": port, "Meta": meta or None, "Vsn": VSN}


def message(kind, body):
    return bytes([kind]) + mp(body)


def compound(parts):
    return bytes([7, len(parts)]) + b"".join(struct.pack(">H", len(p)) for p in parts) + b"".join(parts)


def label(name):
    return bytes([244, len(name)]) + name.encode()


def with_crc(msg):
    return bytes([12]) + struct.pack(">I", zlib.crc32(msg)) + msg


def compressed(msg):
    return message(9, {"Algo": 0, "Buf": lzw(msg)})


def push_pull(nodes, user=b"", join=False):
    head = {"Nodes": len(nodes), "UserStateLen": len(user), "Join": join}
    body = mp(head) + b"".join(
        mp({"Name": n, "Addr": IP_A, "Port": 7946, "Meta": None, "Incarnation": i, "State": s, "Vsn": VSN})
        for n, i, s in nodes)
    return bytes([6]) + body + user


def strip_comments(text):
    lines = [l for l in text.splitlines() if l.strip() and not l.lstrip().startswith("#")]
    return ("\n".join(lines) + "\n").encode()


def split_tables(text, limit):
    """Whole tables, as few pieces as fit in `limit` bytes each (toml_config runs -max_len=1024)."""
    tables = re.split(rb"\n(?=\[)", text)
    parts, cur = [], b""
    pieces = []
    for t in tables:  # a table too long by itself: its lines in pieces, each under its header
        lines = t.rstrip(b"\n").split(b"\n")
        head, chunk = lines[0], lines[0]
        for line in lines[1:]:
            if len(chunk) + len(line) + 2 > limit:
                pieces.append(chunk + b"\n")
                chunk = head
            chunk += b"\n" + line
        pieces.append(chunk + b"\n")
    for t in pieces:
        if cur and len(cur) + len(t) > limit:
            parts.append(cur)
            cur = b""
        cur += t
    return parts + [cur] if cur else parts


# --- limitsd.zone.v1 (src/proto/zone.proto); the first byte picks the message (zone_exchange_fuzz.cc) ---
def bucket_key(tenant, policy=""):
    return sfield(1, tenant) + (sfield(2, policy) if policy else b"")


def partition_count(p, active, consumed, horizon, admitted=0, generation=1, caught_up=True):
    return (vfield(1, p) + vfield(2, active) + vfield(3, consumed) + vfield(4, horizon) + vfield(5, admitted)
            + vfield(6, generation) + vfield(7, 1 if caught_up else 0))


def bucket_report(tenant, counts, seq=1, unused=0, home=0, applied=0, want=0, trigger=False, policy=""):
    report = vfield(1, seq) + b"".join(sfield(2, c) for c in counts) + vfield(3, unused) + vfield(4, home) + vfield(5, applied)
    return sfield(1, bucket_key(tenant, policy)) + sfield(2, report) + vfield(3, want) + vfield(4, 1 if trigger else 0)


def bucket_directive(tenant, delta, seq, home, policy=""):
    return sfield(1, bucket_key(tenant, policy)) + sfield(2, vfield(1, delta) + vfield(2, seq) + vfield(3, home))


def rate_report(tenant, demand, applied, policy=""):
    return sfield(1, bucket_key(tenant, policy)) + vfield(2, demand) + vfield(3, applied)


def rate_share(tenant, share, policy=""):
    return sfield(1, bucket_key(tenant, policy)) + vfield(2, share)


def seeds():
    s = {}
    s["record_value"] = {
        "full": record("zone-a", "tenant-1", 0x1234567890ABCDEF, 4096, "gold"),
        "no_zone": record("", "t", 1, 0),
        "unknown_fields": record("z", "tenant", 7, 9) + vfield(9, 5) + field(12, 1, b"12345678") + field(13, 5, b"abcd"),
        "metadata_twice": record("z", "t", 1, 2) + sfield(3, vfield(2, 99) + sfield(3, "p")),
        "group": record("z", "t", 3, 4) + nested_groups(7, 3),
    }
    s["stream_list"] = {
        "empty": b"",
        "tenant_only": sfield(1, "tenant-1"),
        "three_streams": sfield(1, "tenant-1") + stream(1, 100) + stream(0xFFFFFFFFFFFFFFFF, 0, "gold") + stream(3, 7),
        "unknown_fields": sfield(1, "t") + vfield(9, 1) + stream(5, 6) + field(10, 5, b"abcd") + sfield(1, "u"),
        "groups_99": sfield(1, "t") + nested_groups(6, 99) + stream(1, 2),
        "stream_groups": sfield(1, "t") + sfield(2, vfield(1, 9) + nested_groups(5, 4)),
    }
    s["ring_value"] = {
        "two_instances": RING_VALUE,
        "left": snappy_literal(RING_LEFT),
        "empty": snappy_literal(b""),
        "unknown_field": snappy_literal(RING + vfield(20, 1)),
    }
    kv = lambda key, value, version: sfield(1, key) + vfield(2, 10) + vfield(3, 12) + vfield(4, version) + sfield(5, value)
    header = sfield(1, vfield(1, 1) + vfield(2, 2) + vfield(3, 12) + vfield(4, 3))
    s["etcd_response"] = {
        "one_value": header + sfield(2, kv("collectors/ingest-limits", RING_VALUE, 3)) + vfield(4, 1),
        "absent": header,
        "two_values": header + sfield(2, kv("a", RING_VALUE, 1)) + sfield(2, kv("b", b"", 1)) + vfield(4, 2),
        "txn_succeeded": header + vfield(2, 1),
    }
    s["memberlist_messages"] = {
        "ping": mp({"SeqNo": 7, "Node": "self", "SourceAddr": IP_A, "SourcePort": 7946, "SourceNode": "peer"}),
        "indirect_ping": mp({"SeqNo": 8, "Target": IP_A, "Port": 7946, "Node": "n", "Nack": True,
                             "SourceAddr": IP_A, "SourcePort": 7946, "SourceNode": "peer"}),
        "ack": mp({"SeqNo": 9, "Payload": None}),
        "alive": mp(alive("peer", 3)),
        "suspect": mp({"Incarnation": 3, "Node": "peer", "From": "other"}),
        "push_pull_header": mp({"Nodes": 2, "UserStateLen": 10, "Join": False}),
        "compress": mp({"Algo": 0, "Buf": lzw(b"hello hello hello")}),
        "bytes_as_array": mp({"Error": [104, 105], "Node": b"\xc4\x02ab"}),
        "compound": compound([message(2, {"SeqNo": 1, "Payload": None}), message(11, {"SeqNo": 2})])[1:],
        "label": label("fuzz") + message(0, {"SeqNo": 1, "Node": ""}),
    }
    s["memberlist_lzw"] = {
        "text": lzw(b"the quick brown fox jumps over the lazy dog; the quick brown fox"),
        "empty": lzw(b""),
        "binary": lzw(bytes(range(256)) * 4),
        "widths": lzw(bytes((i * 7919 >> 3) & 0xFF for i in range(3000))),
    }
    payload = message(4, alive("peer", 1))
    s["memberlist_tcp_frame"] = {
        "alive": bytes([14]) + b"127.0.0.3:7946" + payload + hashlib.md5(payload).digest(),
        "empty_payload": bytes([0]) + hashlib.md5(b"").digest(),
        "bad_digest": bytes([4]) + b"a:12" + b"xyz" + bytes(16),
    }
    ring_msg = kv_pair("collectors/ingest-limits", RING_VALUE, update_ms=NOW * 1000)
    s["memberlist_packet"] = {
        "alive": message(4, alive("peer", 1)),
        "ping": message(0, {"SeqNo": 1, "Node": "self", "SourceAddr": IP_A, "SourcePort": 7946, "SourceNode": "peer"}),
        "compound": compound([message(4, alive("peer", 2)), message(3, {"Incarnation": 2, "Node": "peer", "From": "x"}),
                              message(5, {"Incarnation": 3, "Node": "peer", "From": "peer"})]),
        "user_ring": bytes([8]) + ring_msg,
        "compressed_crc_label": label("fuzz") + with_crc(compressed(compound([message(4, alive("peer", 1)),
                                                                             bytes([8]) + ring_msg]))),
        "self_suspected": compound([message(4, alive("self", 1, bytes([127, 0, 0, 1]))),
                                    message(4, alive("self", 2, bytes([127, 0, 0, 1]))),
                                    message(3, {"Incarnation": 5, "Node": "self", "From": "peer"})]),
        "indirect_ping": message(1, {"SeqNo": 8, "Target": IP_A, "Port": 7946, "Node": "n", "Nack": True}),
    }
    state = user_state([ring_msg, kv_pair("other", b"opaque", codec="json")])
    s["memberlist_stream"] = {
        "push_pull": push_pull([("peer", 1, 0), ("gone", 2, 3)], state, join=True),
        "labelled_push_pull": label("fuzz") + push_pull([("peer", 1, 1)], b""),
        "compressed_push_pull": compressed(push_pull([("peer", 4, 2)], state)),
        "ping": message(0, {"SeqNo": 3, "Node": "self"}),
        "user": message(8, {"UserMsgLen": len(ring_msg)}) + ring_msg,
    }
    s["memberlist_kv"] = {
        "ring": user_state([ring_msg]),
        "ring_and_left": user_state([ring_msg, kv_pair("collectors/ingest-limits", snappy_literal(RING_LEFT))]),
        "deleted": user_state([kv_pair("k", RING_VALUE, deleted=True, update_ms=NOW * 1000 + 1)]),
        "other_codec": user_state([kv_pair("other", b"{}", codec="json"), kv_pair("", b"")]),
        "gossip_pair": ring_msg,
    }
    example = open(os.path.join(ROOT, "deploy", "limitsd.example.toml")).read()
    k8s = open(os.path.join(ROOT, "deploy", "k8s", "base", "limitsd.toml")).read()
    s["toml_config"] = {
        **{f"example_keys_{i}": part for i, part in enumerate(split_tables(strip_comments(example), 1000))},
        "k8s": strip_comments(k8s),
        "empty": b"",
        "overrides": b'[tenants."tenant-a"]\nmax_global_streams_per_user = 100\ningestion_rate_mb = 4.5\n'
                     b'[tenants."tenant-a".policy_max_streams]\ngold = 10\n',
        "etcd_ring": b'[ring]\nstore = "etcd"\netcd_endpoints = ["http://etcd:2379/"]\n'
                     b'[windows]\nactive = "1h30m"\nrate = "5m"\n[store]\nblock_cache = "64MiB"\n',
    }
    s["loki_overrides"] = {
        "runtime": b"""overrides:
  tenant-a:
    max_global_streams_per_user: 20000
    ingestion_rate_mb: 10
    ingestion_burst_size_mb: 20.5
    retention_period: 744h
    policy_override_limits:
      gold:
        max_global_streams_per_user: 100
      silver:
        ingestion_rate_mb: 1
  "tenant.b":
    ingestion_rate_mb: 0.5
  tenant-c:
configs:
  tenant-a:
    log_push_request: true
""",
        "anchors": b"defaults: &d\n  ingestion_rate_mb: 3\noverrides:\n  a: *d\n  b:\n    <<: *d\n    max_global_streams_per_user: 7\n",
        "flow": b"overrides: {t: {max_global_streams_per_user: 5, ingestion_rate_mb: 1e2}}\n",
        "empty": b"",
    }
    s["http_request"] = {
        "get_live": b"GET /live HTTP/1.1\r\nHost: limitsd:3100\r\nUser-Agent: kube-probe/1.29\r\n\r\n",
        "absolute": b"GET http://limitsd:3100/metrics?name[]=x HTTP/1.1\nHost: a\n\n",
        "dots": b"HEAD /a/%2E%2e/./b/../usage/%74en%C3%A9?x=1#frag HTTP/1.0\r\n\r\n",
        "bad_escape": b"GET /usage/%zz%00 HTTP/1.1\r\nX-Empty:\r\n\r\nbody",
    }
    two = [partition_count(0, 3, 10, 12), partition_count(5, 1, 4, 4, admitted=1, caught_up=False)]
    s["zone_exchange"] = {
        "exchange_trigger": b"\x00" + sfield(1, "node-a@1700000000000") + sfield(2, bucket_report("t", two, want=4, trigger=True)),
        "exchange_hot": b"\x00" + sfield(1, "node-b@1")
        + sfield(2, bucket_report("t", two, seq=7, unused=5, home=1700000000000, applied=3, want=8))
        + sfield(2, bucket_report("t", [partition_count(15, 2, 0, 0x7FFFFFFFFFFFFFFF)], seq=2, policy="gold")),
        "exchange_empty": b"\x00" + sfield(1, "node-c@2"),
        "exchange_rates": b"\x00" + sfield(1, "node-a@3") + sfield(3, rate_report("t", 2000000, 250000))
        + sfield(3, rate_report("t", 0, 1000000, policy="gold")) + sfield(3, rate_report("u", 1 << 40, 0)),
        "answer_rates": b"\x01" + sfield(1, bucket_key("t")) + sfield(3, rate_share("t", 750000))
        + sfield(3, rate_share("t", 1000000, policy="gold")) + sfield(4, bucket_key("t", "gold")),
        "answer": b"\x01" + sfield(1, bucket_key("t")) + sfield(1, bucket_key("t", "gold"))
        + sfield(2, bucket_directive("t", 6, 1, 1700000000000)),
        "direct_recall": b"\x02" + sfield(1, "node-a@1700000000000") + sfield(2, bucket_directive("t", -3, 4, 1700000000000)),
        "direct_reports": b"\x02" + sfield(1, "node-a") + sfield(3, bucket_key("t")) + sfield(3, bucket_key("t", "gold")),
        "direct_answer": b"\x03" + sfield(1, bucket_report("t", two, seq=8, unused=2, home=1700000000000, applied=4)),
    }
    return s


def toml_dictionary(example):
    keys = sorted(set(re.findall(r"^#?\s*([a-z_]+)\s*=", example, re.M)))
    tables = sorted(set(re.findall(r"^#?\s*\[+([a-z_.\"-]+)\]+", example, re.M)))
    quote = lambda t: t.replace("\\", "\\\\").replace('"', '\\"')
    words = [f'"{k} = "' for k in keys] + [f'"[{quote(t)}]\\x0a"' for t in tables]
    words += ['"\\"\\"\\""', "\"'''\"", '"[["', '"]]"', '"= {"', '"1h30m"', '"512MiB"', '"0.0.0.0:9095"']
    return "# TOML keys and tables of deploy/limitsd.example.toml (make_corpus.py)\n" + "\n".join(words) + "\n"


def main():
    for target, files in seeds().items():
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        for name, data in files.items():
            assert len(data) < 4096, (target, name, len(data))
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
    example = open(os.path.join(ROOT, "deploy", "limitsd.example.toml")).read()
    os.makedirs(os.path.join(HERE, "dict"), exist_ok=True)
    with open(os.path.join(HERE, "dict", "toml_config.dict"), "w") as f:
        f.write(toml_dictionary(example))


if __name__ == "__main__":
    main()
