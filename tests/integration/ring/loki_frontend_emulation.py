#!/usr/bin/python3
"""Loki-frontend emulation: limitsd as Loki's limits frontend sees it.

Starts a real etcd (Debian's etcd-server) and one mock Kafka cluster (mock_broker), then two
zones x two limitsd processes joined to the ingest-limits ring in etcd. It then does what
Loki's limits frontend (pkg/limits/frontend/ring.go) and its client pool do:
  - read the ring from etcd (key collectors/ingest-limits) and decode it: snappy block
    format, then protobuf ring.Desc (src/proto/ring.proto, written from dskit's numbers);
  - keep ACTIVE instances whose heartbeat is within the heartbeat timeout;
  - health-check every instance with grpc.health.v1.Health/Check;
  - call GetAssignedPartitions on each and, per zone, route each stream to the instance with
    the newest assignment time for hash % 64;
  - query the zones in order, sending the next zone only the streams left unanswered;
    streams no zone answered become reason 1 (failed).
Checks: a tenant at limit L gets exactly L accepted across the first zone's two nodes (each
node its share, +-1), reason 1 never reaches a stream of a ready partition, the other zone
learns the accepted streams through Kafka and answers for them when a node is SIGKILLed;
the killed node's heartbeat goes stale after the heartbeat timeout and the frontend stops
routing to it; a SIGTERMed node leaves the ring at once.

With --zone, the nodes of each zone share their tenants' limits ([zone] enabled, issue 27):
the zone admits exactly L (not L + n - 1), and a tenant whose streams hash mostly to one
node's partitions is first rejected at 90 % of L or later (static shares: near 75 %). Zone-a
admits at most L while streams keep coming through faults: its bucket's home paused (a
rebalance moves its partitions and back), killed and restarted, and etcd paused past the
heartbeat timeout. With --zone, a tenant pushing twice its rate to one node's partitions gets
about its whole rate there (static shares: about half).

Usage: loki_frontend_emulation.py --limitsd PATH --mock-broker PATH --proto-python DIR [--zone]
Exit 0 when every check holds, 1 otherwise. Prints what it measured.
"""
import argparse
import base64
import json
import math
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

NUM_PARTITIONS = 64
RING_KEY = "collectors/ingest-limits"
HEARTBEAT_PERIOD = "500ms"
HEARTBEAT_TIMEOUT_S = 3.0
TENANT = "tenant-at-limit"
SKEWED = "tenant-skewed"
FAULTS = "tenant-faults"
RING_DOWN = "tenant-ring-down"
RATE = "tenant-rate"
RATE_MB = 0.2  # the rate tenant's ingestion_rate_mb; its burst is a quarter of a second of it
LIMIT = 100
TIMEOUT_MULTIPLIER = float(os.environ.get("LIMITSD_TEST_TIMEOUT_MULTIPLIER", "1") or 1)


class CheckFailed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise CheckFailed(what)


def wait_for(pred, timeout_s, what, interval_s=0.05):
    deadline = time.monotonic() + timeout_s * TIMEOUT_MULTIPLIER
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise CheckFailed("timed out waiting for " + what)
        time.sleep(interval_s)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(port, path):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (port, path), timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except OSError:
        return 0, ""


# --- processes ------------------------------------------------------------------------------

class Etcd:
    def __init__(self, workdir):
        self.client_port, self.peer_port = free_port(), free_port()
        client = "http://127.0.0.1:%d" % self.client_port
        peer = "http://127.0.0.1:%d" % self.peer_port
        self.log_path = os.path.join(workdir, "etcd.log")
        self.proc = subprocess.Popen(
            ["/usr/bin/etcd", "--name", "emulation", "--data-dir", os.path.join(workdir, "etcd"),
             "--listen-client-urls", client, "--advertise-client-urls", client,
             "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
             "--initial-cluster", "emulation=" + peer, "--logger", "zap", "--log-level", "warn"],
            stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        wait_for(lambda: '"health":"true"' in http_get(self.client_port, "/health")[1], 20, "etcd /health")

    @property
    def endpoint(self):
        return "127.0.0.1:%d" % self.client_port

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


class MockBroker:
    def __init__(self, binary):
        self.proc = subprocess.Popen([binary, "--partitions", str(NUM_PARTITIONS)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.proc.stdout.readline().split()
        check(len(line) == 2 and line[0] == "bootstrap", "mock_broker did not print its bootstrap address")
        self.bootstrap = line[1]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()  # it exits when stdin closes
            self.proc.wait(10)


class Node:
    def __init__(self, binary, workdir, instance, zone, etcd_endpoint, bootstrap, shared, extra_sets=None):
        self.instance, self.zone = instance, zone
        self.log_path = os.path.join(workdir, instance + ".log")
        sets = {
            "node.zone": zone,
            "node.instance_id": instance,
            "kafka.brokers": bootstrap,
            "kafka.num_partitions": str(NUM_PARTITIONS),
            "kafka.properties.session.timeout.ms": "4000",
            "kafka.properties.heartbeat.interval.ms": "500",
            "kafka.properties.reconnect.backoff.max.ms": "500",
            "kafka.properties.topic.metadata.refresh.interval.ms": "1000",
            "store.path": os.path.join(workdir, instance),
            "store.block_cache": "16MiB",
            "store.write_buffer": "8MiB",
            "server.grpc_listen": "127.0.0.1:0",
            "server.http_listen": "127.0.0.1:0",
            "windows.wait_assign": "5s",
            # Rate limiting (reason 3) is limitsd's addition; this test is about stream limits.
            "limits.defaults.ingestion_rate_mb": "1000",
            "limits.defaults.ingestion_burst_size_mb": "1000",
            "limits.tenants.%s.max_global_streams_per_user" % TENANT: str(LIMIT),
            "limits.tenants.%s.max_global_streams_per_user" % SKEWED: str(LIMIT),
            "limits.tenants.%s.max_global_streams_per_user" % FAULTS: str(LIMIT),
            "limits.tenants.%s.max_global_streams_per_user" % RING_DOWN: str(LIMIT),
            "limits.enforce_rate": "true",
            "limits.tenants.%s.ingestion_rate_mb" % RATE: str(RATE_MB),
            "limits.tenants.%s.ingestion_burst_size_mb" % RATE: str(RATE_MB / 4),
            "ring.store": "etcd",
            "ring.etcd_endpoints": etcd_endpoint,
            "ring.etcd_dial_timeout": "2s",
            "ring.instance_addr": "127.0.0.1",
            "ring.heartbeat_period": HEARTBEAT_PERIOD,
            "ring.heartbeat_timeout": "%ds" % HEARTBEAT_TIMEOUT_S,
        }
        if shared:
            sets["zone.enabled"] = "true"
            sets["zone.exchange_interval"] = "200ms"
            sets["zone.lease"] = "5s"
        sets.update(extra_sets or {})
        argv = [binary]
        for k, v in sets.items():
            argv += ["--set", "%s=%s" % (k, v)]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        self.grpc_port = self.http_port = 0

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def read_ports(self):
        m = re.search(r'"component":"node","msg":"started","grpc_port":(\d+),"http_port":(\d+)', self.log())
        if m:
            self.grpc_port, self.http_port = int(m.group(1)), int(m.group(2))
        return bool(m)

    @property
    def addr(self):
        return "127.0.0.1:%d" % self.grpc_port

    def usage_streams(self, tenant):
        status, body = http_get(self.http_port, "/ingest-limits/usage/" + tenant)
        return json.loads(body)["streams_total"] if status == 200 else -1

    def signal(self, sig):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)

    def stop(self):
        self.signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- what Loki's frontend does -----------------------------------------------------------------

def load_messages(proto_dir):
    sys.path.insert(0, proto_dir)
    global grpc, snappy, limits_pb2, ring_pb2, etcd_kv_pb2, health_pb2
    import grpc  # noqa: F401  Debian's python3-grpcio
    import snappy  # noqa: F401  Debian's python3-snappy
    from proto import etcd_kv_pb2, health_pb2, limits_pb2, ring_pb2  # noqa: F401  protoc --python_out


def unary(channel, method, response_type):
    return channel.unary_unary(method, request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=response_type.FromString)


def decode_ring(value):
    """dskit's proto codec: snappy block format around a protobuf ring.Desc."""
    desc = ring_pb2.Desc()
    desc.ParseFromString(snappy.uncompress(value))
    return desc


STATE_NAMES = {0: "ACTIVE", 1: "LEAVING", 2: "PENDING", 3: "JOINING", 4: "LEFT"}


def describe_instance(inst, now):
    return "%-9s addr=%s zone=%s state=%s tokens=%d heartbeat_age=%.1fs registered=%d" % (
        inst.id, inst.addr, inst.zone, STATE_NAMES.get(inst.state, inst.state), len(inst.tokens),
        now - inst.timestamp, inst.registered_timestamp)


class EtcdRing:
    """Reads the ring value with etcd's v3 gRPC API (KV/Range), as dskit's etcd client does."""

    def __init__(self, endpoint):
        self.channel = grpc.insecure_channel(endpoint)
        self.range = unary(self.channel, "/etcdserverpb.KV/Range", etcd_kv_pb2.RangeResponse)
        self.last = None

    def read(self):
        """The ring, or the last one read while etcd does not answer (as dskit's ring client keeps it)."""
        try:
            resp = self.range(etcd_kv_pb2.RangeRequest(key=RING_KEY.encode()), timeout=1)
        except grpc.RpcError:
            if self.last is None:
                raise
            return self.last
        self.last = decode_ring(resp.kvs[0].value) if resp.kvs else ring_pb2.Desc()
        return self.last


class Pool:
    """The client pool: one channel per address; health checks drop clients that fail."""

    def __init__(self):
        self.clients = {}
        self.dropped = []

    def get(self, addr):
        if addr not in self.clients:
            ch = grpc.insecure_channel(addr)
            self.clients[addr] = {
                "channel": ch,
                "health": unary(ch, "/grpc.health.v1.Health/Check", health_pb2.HealthCheckResponse),
                "exceeds": unary(ch, "/proto.IngestLimits/ExceedsLimits", limits_pb2.ExceedsLimitsResponse),
                "assigned": unary(ch, "/proto.IngestLimits/GetAssignedPartitions",
                                  limits_pb2.GetAssignedPartitionsResponse),
            }
        return self.clients[addr]

    def health_check(self, addr):
        try:
            resp = self.get(addr)["health"](health_pb2.HealthCheckRequest(service=""), timeout=2)
            ok = resp.status == health_pb2.HealthCheckResponse.SERVING
        except grpc.RpcError:
            ok = False
        if not ok:
            self.dropped.append(addr)
            self.clients.pop(addr)["channel"].close()
        return ok


class Frontend:
    def __init__(self, ring, pool, assigned_ttl_s=1.0):
        self.ring, self.pool = ring, pool
        self.assigned_ttl_s = assigned_ttl_s
        self.assigned_cache = {}  # addr -> (expires, {partition: assigned_at})

    def healthy_instances(self):
        now = time.time()
        return [i for i in self.ring.read().ingesters.values()
                if i.state == ring_pb2.ACTIVE and now - i.timestamp <= HEARTBEAT_TIMEOUT_S]

    def assigned(self, addr):
        cached = self.assigned_cache.get(addr)
        if cached and cached[0] > time.monotonic():
            return cached[1]
        try:
            resp = self.pool.get(addr)["assigned"](limits_pb2.GetAssignedPartitionsRequest(), timeout=2)
        except grpc.RpcError:
            return {}
        parts = dict(resp.assignedPartitions)
        self.assigned_cache[addr] = (time.monotonic() + self.assigned_ttl_s, parts)
        return parts

    def zone_consumers(self):
        """zone -> {partition: addr of the instance with the newest assignment time}."""
        by_zone = {}
        for inst in self.healthy_instances():
            by_zone.setdefault(inst.zone, []).append(inst)
        out = {}
        for zone in sorted(by_zone):  # Loki's tests sort zones; production shuffles them
            newest, owner = {}, {}
            for inst in by_zone[zone]:
                for p, t in self.assigned(inst.addr).items():
                    if newest.get(p, -1) < t:
                        newest[p], owner[p] = t, inst.addr
            out[zone] = owner
        return out

    def exceeds_limits(self, tenant, hashes):
        """Returns ({hash: reason}, {hash: addr that answered})."""
        results, answered_by = {}, {}
        unanswered = list(hashes)
        for zone, consumers in self.zone_consumers().items():
            if not unanswered:
                break
            by_addr = {}
            for h in unanswered:
                addr = consumers.get(h % NUM_PARTITIONS)
                if addr is not None:
                    by_addr.setdefault(addr, []).append(h)
            # All of a zone's owners at once, as Loki's frontend does (an errgroup per zone).
            calls = []
            for addr, hs in by_addr.items():
                req = limits_pb2.ExceedsLimitsRequest(tenant=tenant)
                for h in hs:
                    req.streams.add(streamHash=h, totalSize=1000)
                calls.append((addr, hs, self.pool.get(addr)["exceeds"].future(req, timeout=3)))
            for addr, hs, call in calls:
                try:
                    resp = call.result()
                except grpc.RpcError:
                    continue  # unanswered: the next zone gets these streams
                for r in resp.results:
                    results[r.streamHash] = r.reason
                for h in hs:
                    answered_by[h] = addr
            unanswered = [h for h in unanswered if h not in answered_by]
        for h in unanswered:
            results[h] = 1  # what Loki's frontend answers for streams no zone answered
        return results, answered_by


# --- the scenario -------------------------------------------------------------------------------

def run(args, workdir):
    load_messages(args.proto_python)
    started = time.monotonic()
    etcd = Etcd(workdir)
    broker = MockBroker(args.mock_broker)
    nodes = {}
    try:
        for name, zone in (("a-0", "zone-a"), ("a-1", "zone-a"), ("b-0", "zone-b"), ("b-1", "zone-b")):
            nodes[name] = Node(args.limitsd, workdir, name, zone, etcd.endpoint, broker.bootstrap, args.zone)
        for n in nodes.values():
            wait_for(n.read_ports, 20, n.instance + " to start")
        ring = EtcdRing(etcd.endpoint)
        pool = Pool()
        frontend = Frontend(ring, pool)

        # 1. The ring: four ACTIVE instances with fresh heartbeats, at the addresses they serve.
        wait_for(lambda: len(frontend.healthy_instances()) == 4, 20, "4 ACTIVE instances in the ring")
        now = time.time()
        instances = sorted(frontend.healthy_instances(), key=lambda i: i.id)
        print("instances found in the ring (%s in etcd):" % RING_KEY)
        for inst in instances:
            print("  " + describe_instance(inst, now))
        check({i.id: i.addr for i in instances} == {n.instance: n.addr for n in nodes.values()},
              "the ring advertises each node's gRPC address")
        check(all(len(i.tokens) == 128 for i in instances), "128 tokens each")
        for inst in instances:
            check(pool.health_check(inst.addr), "grpc.health.v1 Check SERVING on " + inst.id)
        print("health checks: %d SERVING, %d dropped" % (len(instances), len(pool.dropped)))

        # 2. Each zone's group split the 64 partitions between its two nodes, all ready.
        def split_done():
            for zone in ("zone-a", "zone-b"):
                zone_nodes = [n for n in nodes.values() if n.zone == zone]
                parts = [set(frontend.assigned(n.addr)) for n in zone_nodes]
                if any(not p for p in parts) or set().union(*parts) != set(range(NUM_PARTITIONS)) \
                        or sum(len(p) for p in parts) != NUM_PARTITIONS:
                    return False
            return True
        wait_for(split_done, 40, "each zone's two nodes to serve all 64 partitions, split")
        shares = {}
        for n in nodes.values():
            k = len(frontend.assigned(n.addr))
            shares[n.instance] = math.ceil(LIMIT * k / NUM_PARTITIONS)
            print("  %s (%s) serves %d ready partitions: its share of limit %d is %d"
                  % (n.instance, n.zone, k, LIMIT, shares[n.instance]))
        print("ring, health and partitions settled after %.1fs" % (time.monotonic() - started))

        # 3. A tenant at limit L: 3L new streams through the frontend, in batches as pushes come.
        rng = random.Random(10)
        hashes = [rng.getrandbits(64) for _ in range(3 * LIMIT)]
        results, answered_by = {}, {}
        for i in range(0, len(hashes), 25):
            r, a = frontend.exceeds_limits(TENANT, hashes[i:i + 25])
            results.update(r)
            answered_by.update(a)
        accepted = [h for h in hashes if h not in results]
        addr_to_node = {n.addr: n.instance for n in nodes.values()}
        per_node = {}
        for h in accepted:
            node = addr_to_node[answered_by[h]]
            per_node[node] = per_node.get(node, 0) + 1
        reasons = sorted(set(results.values()))
        print("tenant %s at limit %d: %d streams sent, %d accepted %s, reasons of the rest %s"
              % (TENANT, LIMIT, len(hashes), len(accepted), per_node, reasons))
        check(all(addr_to_node[answered_by[h]].startswith("a-") for h in hashes), "zone-a answered every stream")
        check(1 not in results.values(), "reason 1 never reaches a stream of a ready partition")
        check(reasons == [2], "the streams over the limit get reason 2 (stream limit)")
        if args.zone:
            check(len(accepted) == LIMIT, "exactly L accepted across the zone's two nodes (shared limits)")
        else:
            check(LIMIT <= len(accepted) <= LIMIT + 2, "exactly L accepted across the zone's two nodes (+-1 per node)")
            for node, n in per_node.items():
                check(abs(n - shares[node]) <= 1, "%s accepted its share %d (+-1), got %d" % (node, shares[node], n))

        # 3a. The rate: a tenant pushing twice its rate for 8 s, every stream on a-0's partitions.
        #     With static shares a-0 refills at its share (its partitions over all: about half);
        #     in the zone, the bucket's home gives it the whole rate once it hears a-0's demand.
        #     Refused streams get reason 1001 (limitsd's: Loki's distributors rate-limit earlier).
        a0 = set(frontend.assigned(nodes["a-0"].addr))
        rate_bytes = RATE_MB * 1024 * 1024
        burst = rate_bytes / 4
        pool_hashes = []
        while len(pool_hashes) < 50:
            h = rng.getrandbits(64)
            if h % NUM_PARTITIONS in a0:
                pool_hashes.append(h)
        sent = taken_bytes = 0
        rate_reasons = set()
        rate_started = time.monotonic()
        while time.monotonic() - rate_started < 8:
            batch = [pool_hashes[(sent + i) % len(pool_hashes)] for i in range(10)]
            r, a = frontend.exceeds_limits(RATE, batch)
            check(all(addr_to_node.get(a.get(h)) == "a-0" for h in batch), "a-0 answered the rate tenant's streams")
            sent += len(batch)
            taken_bytes += 1000 * sum(1 for h in batch if h not in r)
            rate_reasons |= set(r.values())
            # Paced at twice the rate (a pacing sleep, not a wait for something to happen).
            ahead = sent * 1000 / (2 * rate_bytes) - (time.monotonic() - rate_started)
            if ahead > 0:
                time.sleep(ahead)
        elapsed = time.monotonic() - rate_started
        static_share = len(a0) / NUM_PARTITIONS
        print("tenant %s at %.0f KiB/s pushed twice that for %.1f s, all to a-0 (%d of %d partitions): %.0f KiB "
              "accepted, %.0f %% of the rate over the push (static share %.0f %%), reasons of the rest %s"
              % (RATE, rate_bytes / 1024, elapsed, len(a0), NUM_PARTITIONS, taken_bytes / 1024,
                 100 * taken_bytes / (rate_bytes * elapsed), 100 * static_share, sorted(rate_reasons)))
        check(rate_reasons <= {1001}, "the rate tenant's refusals are reason 1001 (rate limited: limitsd's own)")
        # Bounded by the rate and the node's burst (and a round's timing).
        check(taken_bytes <= rate_bytes * (elapsed + 0.5) + burst, "a-0 took at most the rate and its burst")
        if args.zone:
            check(taken_bytes >= 0.75 * rate_bytes * elapsed, "a-0 took at least 75 % of the whole rate (shared)")
            status, body = http_get(nodes["a-0"].http_port, "/ingest-limits/usage/" + RATE)
            rates_doc = json.loads(body).get("zone_rates", [])
            print("usage on a-0, zone_rates: %s" % json.dumps(rates_doc))
            check(len(rates_doc) == 1 and (rates_doc[0].get("share") or 0) >= 0.9, "a-0 refills at 90 % of the "
                  "rate or more")
            held = []
            for n in (nodes["a-0"], nodes["a-1"]):
                doc = json.loads(http_get(n.http_port, "/ingest-limits/usage/" + RATE)[1]).get("zone_rates", [])
                held += [b["zone_held"] for b in doc if "zone_held" in b]
            check(len(held) == 1 and held[0] <= 1.0, "the home's shares sum to at most the rate (%s)" % held)
        else:
            check(taken_bytes <= static_share * rate_bytes * (elapsed + 0.5) + burst,
                  "a-0 took at most its static share of the rate and its burst")

        # 3b. With shared limits: a tenant whose streams land two to one on a-0's partitions, one
        #     stream per push. Static shares reject it when a-0's share fills (near 75 % of L).
        if args.zone:
            skewed, taken = [], 0
            while len(skewed) < 3 * LIMIT:
                h = rng.getrandbits(64)
                on_a0 = (h % NUM_PARTITIONS) in a0
                if on_a0 == (len(skewed) % 3 != 2):
                    skewed.append(h)
            first_rejection = None
            calls = []
            for h in skewed:
                t0 = time.monotonic()
                r, _ = frontend.exceeds_limits(SKEWED, [h])
                calls.append(time.monotonic() - t0)
                if r:
                    check(r[h] == 2, "a stream over the limit gets reason 2")
                    if first_rejection is None:
                        first_rejection = taken
                else:
                    taken += 1
            calls.sort()
            print("tenant %s (2:1 on a-0's partitions) at limit %d: first rejection at %d (%.0f %% of L), %d accepted; "
                  "call p50 %.1f ms, p99 %.1f ms" % (SKEWED, LIMIT, first_rejection, 100.0 * first_rejection / LIMIT,
                                                     taken, 1000 * calls[len(calls) // 2],
                                                     1000 * calls[int(len(calls) * 0.99)]))
            check(taken == LIMIT, "exactly L accepted for the skewed tenant")
            check(first_rejection >= 0.9 * LIMIT, "first rejection at 90 % of L or later")
            # The usage document says where the bucket lives and, on its home, the zone's count.
            homes = []
            for n in (nodes["a-0"], nodes["a-1"]):
                status, body = http_get(n.http_port, "/ingest-limits/usage/" + SKEWED)
                check(status == 200, "usage document of %s" % n.instance)
                doc = json.loads(body)
                buckets = doc.get("zone", [])
                check(len(buckets) == 1 and buckets[0]["limit"] == LIMIT, "one bucket of limit L in %s's document" % n.instance)
                check(buckets[0]["state"] == "hot", "the bucket is hot on %s" % n.instance)
                if "ledger" in buckets[0]:
                    homes.append(n.instance)
                    print("usage on %s (the home): %s" % (n.instance, json.dumps(buckets[0])))
            check(len(homes) == 1, "exactly one of zone-a's nodes is the bucket's home")

            # 3c. Faults while streams keep coming, with shared limits: the bucket's home paused
            #     (SIGSTOP) and resumed, then killed (SIGKILL) and restarted on its store. Zone-a's
            #     nodes never accept more than L between them (they fail closed: a node spends the
            #     headroom it holds, then rejects). What a node that does not answer cannot check
            #     falls over to zone-b, as in Loki: zone-b learns zone-a's streams from the topic,
            #     so the two zones together may pass L by what zone-a's nodes still held when
            #     zone-b began to answer (printed, not bounded here) — and by what a paused node
            #     had accepted and not yet produced (avoided here by pausing once zone-b holds it).
            taken_faults = {"zone-a": set(), "zone-b": set()}

            def push(count, batch=10, tenant=FAULTS, taken=taken_faults):
                zone_of = {n.addr: n.zone for n in nodes.values()}
                for i in range(0, count, batch):
                    hs = [rng.getrandbits(64) for _ in range(batch)]
                    r, a = frontend.exceeds_limits(tenant, hs)
                    for h in hs:
                        if h in a and h not in r:
                            taken[zone_of[a[h]]].add(h)

            def home_of(tenant):
                for n in (nodes["a-0"], nodes["a-1"]):
                    status, body = http_get(n.http_port, "/ingest-limits/usage/" + tenant)
                    if status == 200 and any("ledger" in b for b in json.loads(body).get("zone", [])):
                        return n
                return None

            def figures():
                return "zone-a %d, zone-b %d" % (len(taken_faults["zone-a"]), len(taken_faults["zone-b"]))

            push(60)
            home = home_of(FAULTS)
            check(home is not None, "the faults tenant's bucket has a home in zone-a")
            # Paused once zone-b holds what zone-a accepted: a node paused right after accepting
            # still holds records its producer had not sent yet (linger.ms), which zone-b cannot
            # count, so the zones together would pass L by those too.
            b_nodes = [n for n in nodes.values() if n.zone == "zone-b"]
            wait_for(lambda: sum(n.usage_streams(FAULTS) for n in b_nodes) == len(taken_faults["zone-a"]), 20,
                     "zone-b to hold the streams zone-a accepted")
            home.signal(signal.SIGSTOP)
            paused_at = time.monotonic()
            other = nodes["a-1" if home.instance == "a-0" else "a-0"]
            rebalanced = False
            while time.monotonic() - paused_at < (8 if rebalanced else 30) * TIMEOUT_MULTIPLIER:
                push(10)
                check(len(taken_faults["zone-a"]) <= LIMIT, "zone-a's nodes accept at most L with the home paused (%s)"
                      % figures())
                rebalanced = rebalanced or len(frontend.assigned(other.addr)) == NUM_PARTITIONS
            # The paused node's session timed out (4 s): the group gave all its partitions to the
            # other node mid-push (about 8 s after the pause here), and gives them back after SIGCONT.
            check(rebalanced, "zone-a's group moved the paused node's partitions to %s mid-push" % other.instance)
            during_pause = figures()
            paused_for = time.monotonic() - paused_at
            home.signal(signal.SIGCONT)
            wait_for(split_done, 40, "zone-a's two nodes to serve all 64 partitions again after SIGCONT")
            push(100)
            after_resume = figures()
            check(len(taken_faults["zone-a"]) <= LIMIT, "zone-a's nodes accept at most L after the home resumed (%s)"
                  % after_resume)
            home = home_of(FAULTS) or home
            home.signal(signal.SIGKILL)
            home.proc.wait()
            push(40)
            restarted = Node(args.limitsd, workdir, home.instance, home.zone, etcd.endpoint, broker.bootstrap, args.zone)
            nodes[home.instance] = restarted
            wait_for(restarted.read_ports, 20, home.instance + " to restart")
            wait_for(split_done, 40, "zone-a's two nodes to serve all 64 partitions after the restart")
            push(100)
            total = len(taken_faults["zone-a"] | taken_faults["zone-b"])
            print("tenant %s at limit %d under faults, streams accepted: %s while its home (%s) was paused %.0f s; %s "
                  "after it resumed; %s after it was killed and restarted: %d in all"
                  % (FAULTS, LIMIT, during_pause, home.instance, paused_for, after_resume, figures(), total))
            check(len(taken_faults["zone-a"]) <= LIMIT, "zone-a's nodes accept at most L after the restart (%s)"
                  % figures())
            check(total >= LIMIT, "the tenant reaches its limit")
            addr_to_node = {n.addr: n.instance for n in nodes.values()}

            # 3d. The ring store down (etcd paused: every read and heartbeat hangs) for twice the
            #     heartbeat timeout, while a fresh tenant's streams keep coming. The frontend keeps
            #     its last ring, whose heartbeats go stale with etcd's; the nodes keep theirs and go
            #     on exchanging. Once etcd answers again, each node writes its heartbeat at its
            #     own pace: until the others' are fresh, a node that dropped them would home their
            #     buckets too. Zone-a admits at most L throughout, and exactly L in the end (with
            #     zone-b's, when a call to zone-a failed over while heartbeats were stale).
            ring_down = {"zone-a": set(), "zone-b": set()}

            def push_ring_down(count):
                for _ in range(0, count, 10):
                    push(10, tenant=RING_DOWN, taken=ring_down)
                    check(len(ring_down["zone-a"]) <= LIMIT, "zone-a's nodes accept at most L around the ring "
                          "store's outage (%d)" % len(ring_down["zone-a"]))

            push_ring_down(40)
            before_outage = len(ring_down["zone-a"])
            etcd.proc.send_signal(signal.SIGSTOP)
            stopped_at = time.monotonic()
            while time.monotonic() - stopped_at < 2 * HEARTBEAT_TIMEOUT_S:
                push_ring_down(10)
            during_outage = len(ring_down["zone-a"])
            etcd.proc.send_signal(signal.SIGCONT)
            wait_for(lambda: len(frontend.healthy_instances()) == 4, 10 + HEARTBEAT_TIMEOUT_S,
                     "the four nodes' heartbeats to be fresh again")
            push_ring_down(3 * LIMIT)
            print("tenant %s at limit %d, etcd paused %.0f s: zone-a accepted %d before, %d by the end of the outage, "
                  "%d in all (zone-b %d)" % (RING_DOWN, LIMIT, 2 * HEARTBEAT_TIMEOUT_S, before_outage, during_outage,
                                             len(ring_down["zone-a"]), len(ring_down["zone-b"])))
            if ring_down["zone-b"]:  # a call to zone-a failed: its streams went to zone-b, which counts apart
                check(len(ring_down["zone-a"] | ring_down["zone-b"]) >= LIMIT, "the tenant reaches its limit")
            else:
                check(len(ring_down["zone-a"]) == LIMIT, "zone-a admits exactly L once the ring store is back")
            for n in (nodes["a-0"], nodes["a-1"]):
                check("the ring can be read again" in n.log(), n.instance + " logged the ring store's return")

        # 4. The other zone learns the accepted streams from the topic.
        b_nodes = [n for n in nodes.values() if n.zone == "zone-b"]
        wait_for(lambda: sum(n.usage_streams(TENANT) for n in b_nodes) == len(accepted), 20,
                 "zone-b to hold the %d streams zone-a accepted" % len(accepted))
        print("zone-b holds the %d accepted streams (consumed from Kafka)" % len(accepted))

        # 5. SIGKILL a-1: calls to it fail at once, so its streams fall over to zone-b; its
        #    heartbeat goes stale after the heartbeat timeout and the frontend stops routing to it.
        victim = nodes["a-1"]
        victim.signal(signal.SIGKILL)
        killed_at = time.monotonic()
        victim.proc.wait()
        r, a = frontend.exceeds_limits(TENANT, accepted)
        print("right after SIGKILL of a-1: %d accepted streams re-checked, %d rejected, answered by %s"
              % (len(accepted), len(r), sorted({addr_to_node[x] for x in a.values()})))
        check(not r, "streams accepted before stay accepted (zone-b answers for a-1's partitions)")
        check(any(addr_to_node[x] == "b-0" or addr_to_node[x] == "b-1" for x in a.values()),
              "zone-b answered the streams of a-1's partitions")
        wait_for(lambda: victim.addr not in {i.addr for i in frontend.healthy_instances()}, 3 * HEARTBEAT_TIMEOUT_S,
                 "a-1's heartbeat to go stale", interval_s=0.02)
        skipped_after = time.monotonic() - killed_at
        print("a-1 skipped by the frontend %.2fs after SIGKILL (heartbeat_timeout %.0fs, period %s)"
              % (skipped_after, HEARTBEAT_TIMEOUT_S, HEARTBEAT_PERIOD))
        # The last heartbeat's timestamp was taken up to one period (plus its write) before the
        # kill, in whole seconds as dskit's: stale between timeout - period - 1 s and timeout.
        check(HEARTBEAT_TIMEOUT_S - 0.5 - 1.0 - 0.5 <= skipped_after <= HEARTBEAT_TIMEOUT_S + 2.0 * TIMEOUT_MULTIPLIER,
              "stale once the last heartbeat is heartbeat_timeout old")
        new = [rng.getrandbits(64) for _ in range(20)]
        r, a = frontend.exceeds_limits(TENANT, accepted + new)
        check(victim.addr not in a.values(), "nothing routed to the skipped instance")
        check(all(h not in r for h in accepted), "accepted streams still accepted")
        check(1 not in r.values(), "no reason 1 after the failover")
        print("after a-1 is skipped: %d new streams -> %d rejected (reason 2), %d accepted; answered by %s"
              % (len(new), sum(1 for h in new if r.get(h) == 2), sum(1 for h in new if h not in r),
                 sorted({addr_to_node[x] for x in a.values()})))

        # 6. SIGTERM b-0: it leaves the ring at once (LEAVING, then removed) before exiting.
        leaver = nodes["b-0"]
        leaver.signal(signal.SIGTERM)
        termed_at = time.monotonic()
        wait_for(lambda: leaver.instance not in ring.read().ingesters, HEARTBEAT_TIMEOUT_S,
                 "b-0 to leave the ring", interval_s=0.01)
        left_after = time.monotonic() - termed_at
        leaver.proc.wait(20)
        exited_after = time.monotonic() - termed_at
        print("b-0 removed from the ring %.2fs after SIGTERM (process exited after %.2fs)" % (left_after, exited_after))
        check(left_after < 1.5, "a graceful stop leaves the ring at once, not after the heartbeat timeout")
        check(leaver.addr not in {i.addr for i in frontend.healthy_instances()}, "the frontend no longer sees b-0")

        # 7. The ring as etcdctl prints it, decoded once by this test's decoder.
        out = subprocess.run(["/usr/bin/etcdctl", "--endpoints", etcd.endpoint, "get", "--prefix", "collectors/",
                              "-w", "json"], env=dict(os.environ, ETCDCTL_API="3"), capture_output=True, check=True)
        kvs = json.loads(out.stdout).get("kvs", [])
        print("etcdctl get --prefix collectors/ (%d key), decoded:" % len(kvs))
        now = time.time()
        for kv in kvs:
            desc = decode_ring(base64.b64decode(kv["value"]))
            print("  %s (version %s, %d bytes snappy): %d instances"
                  % (base64.b64decode(kv["key"]).decode(), kv["version"], len(base64.b64decode(kv["value"])),
                     len(desc.ingesters)))
            for key in sorted(desc.ingesters):
                print("    " + describe_instance(desc.ingesters[key], now))
            check(sorted(desc.ingesters) == ["a-0", "a-1", "b-1"], "a-1 stays (killed: stale), b-0 is gone")
        check(len(kvs) == 1, "one key under collectors/")
        print("emulation passed in %.1fs" % (time.monotonic() - started))
        return 0
    except CheckFailed as e:
        print("FAILED: %s" % e)
        for n in nodes.values():
            print("--- last lines of %s's log ---" % n.instance)
            print("\n".join(n.log().splitlines()[-15:]))
        return 1
    finally:
        for n in nodes.values():
            n.signal(signal.SIGTERM)  # all at once: each takes a moment to leave its group
        for n in nodes.values():
            n.stop()
        broker.stop()
        etcd.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limitsd", required=True)
    parser.add_argument("--mock-broker", required=True)
    parser.add_argument("--proto-python", required=True)
    parser.add_argument("--zone", action="store_true", help="the nodes of each zone share their tenants' limits")
    args = parser.parse_args()
    workdir = tempfile.mkdtemp(prefix="limitsd-emulation-")
    try:
        return run(args, workdir)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
