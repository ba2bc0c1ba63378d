"""A limitsd process for the deploy checks: started with loopback servers on ports the kernel
picks (port 0) and a store in a temporary directory, its stdout and stderr kept in files,
its HTTP port read from its "started" log line. Waits poll with a deadline scaled by
LIMITSD_TEST_TIMEOUT_MULTIPLIER, as the C++ tests' WaitFor does.
"""

import json
import os
import signal
import subprocess
import tempfile
import time
import urllib.request


def timeout_multiplier():
    try:
        m = float(os.environ.get("LIMITSD_TEST_TIMEOUT_MULTIPLIER", "1"))
    except ValueError:
        return 1.0
    return m if m > 0 else 1.0


def wait_for(predicate, seconds, what):
    deadline = time.monotonic() + seconds * timeout_multiplier()
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError("gave up after %.0f s waiting for %s" % (seconds * timeout_multiplier(), what))
        time.sleep(0.02)


class Limitsd:
    def __init__(self, binary, args, grpc_listen="127.0.0.1:0"):
        self.dir = tempfile.TemporaryDirectory(prefix="limitsd-deploy-")
        self.store = os.path.join(self.dir.name, "db")
        self.out_path = os.path.join(self.dir.name, "stdout")
        self.err_path = os.path.join(self.dir.name, "stderr")
        argv = [binary] + list(args) + [
            "--set=store.path=" + self.store,
            "--set=server.http_listen=127.0.0.1:0",
            "--set=server.grpc_listen=" + grpc_listen,
        ]
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.dir.cleanup()

    def stdout(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def stderr(self):
        with open(self.err_path, "rb") as f:
            return f.read().decode("utf-8", errors="replace")

    def lines(self):
        """Every complete line either stream holds, as (stream, text)."""
        out = []
        for name, text in (("stdout", self.stdout()), ("stderr", self.stderr())):
            out += [(name, line) for line in text.split("\n")[:-1]]
        return out

    def records(self):
        """The lines that parse as JSON objects."""
        parsed = []
        for _, line in self.lines():
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                parsed.append(value)
        return parsed

    def http_port(self, seconds=60):
        def port():
            if self.proc.poll() is not None:
                raise RuntimeError("limitsd exited with %s:\n%s" % (self.proc.returncode, self.stderr()))
            for r in self.records():
                if r.get("component") == "node" and r.get("msg") == "started":
                    return r["http_port"]
            return None
        return wait_for(port, seconds, "limitsd's \"started\" line")

    def get(self, path):
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (self.http_port(), path), timeout=10) as r:
            return r.status, r.read().decode("utf-8")

    def stop(self, seconds=60):
        """SIGTERM, then the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        wait_for(lambda: self.proc.poll() is not None, seconds, "limitsd to exit after SIGTERM")
        return self.proc.returncode
