#!/usr/bin/python3
"""Issue 27's bench: how close to its limit a tenant gets before its first rejection, with and
without the zone's shared limits ([zone] enabled), on real limitsd processes.

For each n (nodes in one zone) it starts a real etcd, one mock Kafka cluster (mock_broker) and
n limitsd processes in zone "zone-a" (and, with --two-zones, n more in "zone-b"), then pushes
new streams of fresh tenants through an emulation of Loki's limits frontend (the ring from
etcd, GetAssignedPartitions, each stream to the newest owner of its partition, one
ExceedsLimits per owner per push, all of a zone's at once as Loki's errgroup sends them;
tests/integration/ring/loki_frontend_emulation.py) until
each tenant has seen twice its limit. Per (n, L, hash shape, push shape) it prints: the
accepted total once the first push with a rejection was answered (% of L), the accepted
total at the end (overshoot),
and the p99 of ExceedsLimits calls while the tenant is far from its limit (< 50 % of L) and
at it (>= 95 %). Hash shapes: uniform, or skewed (two thirds of the streams on the
partitions of the node serving the fewest). Push shapes: steady (10 streams a push) or bursty
(200 a push). Figures only: nothing here asserts. When the first push with a rejection had
rejections other than reason 2 (the limit), a line under its row says which (1: a stream no
zone answered in time, which Loki would accept).

Usage: zone_bench.py --limitsd PATH --mock-broker PATH --proto-python DIR
                     [--nodes 1,2,4,8] [--limits 64,640,6400] [--modes shared,static] [--two-zones]
"""
import argparse
import importlib.util
import os
import random
import shutil
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "emulation", os.path.join(HERE, "..", "integration", "ring", "loki_frontend_emulation.py"))
emu = importlib.util.module_from_spec(spec)
spec.loader.exec_module(emu)


def percentile(values, q):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * q))]


def run_tenant(frontend, tenant, limit, hashes, batch):
    """Pushes `hashes` in pushes of `batch`; returns the figures."""
    accepted, first_rejection, first_push = 0, None, None
    far, near = [], []
    for i in range(0, len(hashes), batch):
        part = hashes[i:i + batch]
        before = accepted
        t0 = time.monotonic()
        results, answered = frontend.exceeds_limits(tenant, part)
        elapsed = time.monotonic() - t0
        rejected = [h for h in part if h in results]
        accepted += len(part) - len(rejected)
        if before < 0.5 * limit:
            far.append(elapsed)
        elif before >= 0.95 * limit:
            near.append(elapsed)
        if rejected and first_rejection is None:
            # A push is checked whole: the tenant's total once the first push with a rejection is
            # answered (a push that fills the limit exactly and rejects the rest is not early).
            first_rejection = accepted
            # Why: reason 2 is the limit; 1 is a stream no zone answered (the frontend's timeout,
            # a node not ready), which Loki would accept.
            why = {}
            for h in rejected:
                why[results[h]] = why.get(results[h], 0) + 1
            first_push = {"reasons": why, "ms": 1000 * elapsed}
    return {"first": first_rejection if first_rejection is not None else accepted, "end": accepted,
            "p99_far": percentile(far, 0.99), "p99_at": percentile(near, 0.99),
            "first_push": first_push if first_rejection is not None else None}


# (hash shape, push shape) of each run; a push is `PUSH_STREAMS[push shape]` streams.
RUNS = [(shape, pushes) for shape in ("uniform", "skewed") for pushes in ("steady", "bursty")]
PUSH_STREAMS = {"steady": 10, "bursty": 200}


def tenant_of(limit, shape, pushes):
    return "bench-%d-%s-%s" % (limit, shape, pushes)


def cluster(args, workdir, n, shared, limits):
    etcd = emu.Etcd(workdir)
    broker = emu.MockBroker(args.mock_broker)
    extra = {"zone.exchange_interval": "200ms", "zone.lease": "5s"} if shared else {}
    for limit in limits:
        for shape, pushes in RUNS:
            extra["limits.tenants.%s.max_global_streams_per_user" % tenant_of(limit, shape, pushes)] = str(limit)
    zones = ["zone-a", "zone-b"] if args.two_zones else ["zone-a"]
    nodes = {}
    for zone in zones:
        for i in range(n):
            name = "%s-%d" % (zone[-1], i)
            nodes[name] = emu.Node(args.limitsd, workdir, name, zone, etcd.endpoint, broker.bootstrap, shared, extra)
    return etcd, broker, nodes


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--limitsd", required=True)
    parser.add_argument("--mock-broker", required=True)
    parser.add_argument("--proto-python", required=True)
    parser.add_argument("--nodes", default="1,2,4,8")
    parser.add_argument("--limits", default="64,640,6400")
    parser.add_argument("--modes", default="shared,static")
    parser.add_argument("--two-zones", action="store_true")
    args = parser.parse_args()
    emu.load_messages(args.proto_python)
    limits = [int(x) for x in args.limits.split(",")]
    print("zone bench: %d partitions, limits %s, nodes %s per zone, %s; machine: %d cores" % (
        emu.NUM_PARTITIONS, limits, args.nodes, "two zones" if args.two_zones else "one zone", os.cpu_count()))
    print("%-6s %-5s %5s %-8s %-6s %9s %9s %10s %10s" % (
        "mode", "nodes", "L", "hashes", "pushes", "first %L", "end %L", "p99 far", "p99 at"))
    for n in [int(x) for x in args.nodes.split(",")]:
        for mode in args.modes.split(","):
            workdir = tempfile.mkdtemp(prefix="limitsd-zone-bench-")
            etcd, broker, nodes = cluster(args, workdir, n, mode == "shared", limits)
            try:
                for node in nodes.values():
                    emu.wait_for(node.read_ports, 60, node.instance + " to start")
                frontend = emu.Frontend(emu.EtcdRing(etcd.endpoint), emu.Pool())
                zone_a = [x for x in nodes.values() if x.zone == "zone-a"]

                def settled():
                    if len(frontend.healthy_instances()) != len(nodes):
                        return False
                    parts = [set(frontend.assigned(x.addr)) for x in zone_a]
                    return all(parts) and sum(len(p) for p in parts) == emu.NUM_PARTITIONS and \
                        set().union(*parts) == set(range(emu.NUM_PARTITIONS))
                emu.wait_for(settled, 120, "every node ACTIVE and zone-a's partitions split and ready")
                parts = sorted((set(frontend.assigned(x.addr)) for x in zone_a), key=len)
                smallest = parts[0]
                rng = random.Random(27)
                for limit in limits:
                    for shape, pushes in RUNS:
                        hashes = []
                        while len(hashes) < 2 * limit:
                            h = rng.getrandbits(64)
                            on_smallest = (h % emu.NUM_PARTITIONS) in smallest
                            # One node serves every partition: nothing to skew towards.
                            if shape == "uniform" or n == 1 or on_smallest == (len(hashes) % 3 != 2):
                                hashes.append(h)
                        f = run_tenant(frontend, tenant_of(limit, shape, pushes), limit, hashes, PUSH_STREAMS[pushes])
                        print("%-6s %-5d %5d %-8s %-6s %8.1f%% %8.1f%% %8.1fms %8.1fms" % (
                            mode, n, limit, shape, pushes, 100.0 * f["first"] / limit, 100.0 * f["end"] / limit,
                            1000 * f["p99_far"], 1000 * f["p99_at"]))
                        fp = f["first_push"]
                        if fp and set(fp["reasons"]) != {2}:
                            print("       the first push with a rejection (%.0f ms) had reasons %s" % (
                                fp["ms"], ", ".join("%d x%d" % (r, c) for r, c in sorted(fp["reasons"].items()))))
                        sys.stdout.flush()
            finally:
                for node in nodes.values():
                    node.signal(signal.SIGTERM)
                for node in nodes.values():
                    node.stop()
                broker.stop()
                etcd.stop()
                # LIMITSD_BENCH_KEEP=1 keeps each run's logs and stores (the path is printed).
                if os.environ.get("LIMITSD_BENCH_KEEP"):
                    print("kept %s" % workdir)
                else:
                    shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
