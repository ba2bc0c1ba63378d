#!/usr/bin/python3
"""Every line limitsd writes is one of its own log lines, also when the libraries it uses
have something to say: librdkafka (a broker that refuses connections), gRPC (a port in use),
the embedded mock cluster.

  check_logs.py LIMITSD EXAMPLE_CONFIG

Exit 0 when every line of stdout and stderr in each case is a JSON object with ts, level,
component and msg (or, with log.format = "logfmt", a logfmt line with those keys).
"""

import json
import os
import re
import socket
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from limitsd_process import Limitsd, wait_for  # noqa: E402
from problems import Problems  # noqa: E402

LOGFMT = re.compile(r'^ts=\S+ level=(debug|info|warn|error) component=\S+ msg=("(?:[^"\\]|\\.)*"|\S+)( |$)')

problems = Problems()
check = problems.check


def check_lines(case, node, fmt="json"):
    lines = node.lines()
    check(lines, "%s: no output at all" % case)
    for stream, line in lines:
        if fmt == "logfmt":
            check(LOGFMT.match(line) is not None, "%s: %s line is not logfmt: %r" % (case, stream, line))
            continue
        try:
            value = json.loads(line)
        except ValueError as e:
            check(False, "%s: %s line is not JSON (%s): %r" % (case, stream, e, line))
            continue
        check(isinstance(value, dict) and all(k in value for k in ("ts", "level", "component", "msg")),
              "%s: %s line lacks ts/level/component/msg: %r" % (case, stream, line))
    print("%s: %d lines checked" % (case, len(lines)))


def kafka_clients(node):
    return {r.get("client", "").split("#")[0] + "#" + re.sub(r"-\d+$", "", r.get("client", "#").split("#")[1])
            for r in node.records() if r.get("component") == "kafka"}


def unreachable_broker(limitsd, example, fmt):
    """A closed loopback port as the only broker: librdkafka reports connection failures from
    each client. The shared properties hold a consumer-only and a producer-only property;
    neither reaches the other client (librdkafka would log CONFWARN)."""
    case = "unreachable broker (%s)" % fmt
    args = ["--config=" + example, "--set=kafka.brokers=127.0.0.1:1", "--set=node.instance_id=json-logs",
            "--set=log.format=" + fmt, "--set=kafka.properties.session.timeout.ms=30000",
            "--set=kafka.properties.linger.ms=10"]
    with Limitsd(limitsd, args) as node:
        if fmt == "json":
            node.http_port()
            want = {"json-logs#consumer", "json-logs#producer", "json-logs-offsets#consumer"}
            wait_for(lambda: want <= kafka_clients(node), 60, "a librdkafka line from each client %s" % sorted(want))
            refused = [r for r in node.records() if r.get("component") == "kafka" and "127.0.0.1:1" in r["msg"]]
            check(any(r["level"] == "error" for r in refused), "%s: no error line about 127.0.0.1:1" % case)
            check(not [r for r in node.records() if r.get("fac") == "CONFWARN"],
                  "%s: librdkafka warned about its configuration: %s" % (
                      case, [r["msg"] for r in node.records() if r.get("fac") == "CONFWARN"]))
        else:
            wait_for(lambda: "component=kafka" in node.stderr() and "msg=started" in node.stderr(), 60,
                     "the started line and a librdkafka line")
        check(node.stop() == 0, "%s: exit code %s" % (case, node.proc.returncode))
        # RocksDB's info log stays in its own file, never on our streams.
        check(os.path.exists(os.path.join(node.store, "LOG")), "%s: no RocksDB LOG file in the store" % case)
        check_lines(case, node, fmt)


def grpc_port_in_use(limitsd):
    """The embedded mock cluster, and a gRPC port another socket holds: gRPC logs the bind
    failure (through gpr_log) and the node refuses to start."""
    case = "gRPC port in use"
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with Limitsd(limitsd, ["--set=node.instance_id=json-logs"], grpc_listen="127.0.0.1:%d" % port) as node:
            wait_for(lambda: node.proc.poll() is not None, 60, "limitsd to give up")
            check(node.proc.returncode == 1, "%s: exit code %s" % (case, node.proc.returncode))
            check(any(r.get("component") == "grpc" and r["level"] == "error" for r in node.records()),
                  "%s: no error line from gRPC" % case)
            check(any(r.get("component") == "node" and r["msg"] == "start failed" for r in node.records()),
                  "%s: no start failed line" % case)
            check_lines(case, node)


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    limitsd, example = argv[1], argv[2]
    unreachable_broker(limitsd, example, "json")
    unreachable_broker(limitsd, example, "logfmt")
    grpc_port_in_use(limitsd)
    return problems.finish("limitsd's output")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
