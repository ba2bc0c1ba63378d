#!/usr/bin/env bash
# Builds deploy/Dockerfile and runs the image, as CI does (.ci/run), with no registry:
#   1. bootstraps a Debian 12 base image (mmdebstrap --variant=minbase, podman import), unless
#      one from an earlier run exists (LIMITSD_IMAGE_REBOOTSTRAP=1 makes a fresh one);
#   2. podman build of deploy/Dockerfile on it (apt reaches Debian's mirror: --network host);
#   3. runs the image's default command (the example configuration: embedded mock Kafka) as
#      its non-root user with a host directory as the data volume, and checks /ready, /metrics,
#      limitsctl --help and a live limitsctl read inside it, that the database is on the volume,
#      that every log line is JSON, and a graceful stop;
#   4. runs the zone-a StatefulSet's exact arguments with --check-config inside the image,
#      against the ConfigMaps kustomize generates (tests/deploy/check_k8s.py materialise_pod).
# Needs root and the packages podman runc mmdebstrap uidmap (scripts/install-deps.sh). Prints
# how long each step took. Exit 0 when every check holds.
set -euo pipefail
cd "$(dirname "$0")/.."

# crun fails here on hybrid cgroups and on raising rlimits; runc with cgroupfs works.
podman=(podman --runtime runc --cgroup-manager cgroupfs)
ulimits=(--ulimit nofile=1024:1024 --ulimit nproc=1024:1024)
base=localhost/limitsd-base:bookworm
image=localhost/limitsd:test
name="limitsd-image-test-$$"
work=$(mktemp -d /tmp/limitsd-image.XXXXXX)
python=/usr/bin/python3

cleanup() {
  "${podman[@]}" rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "test-image: FAIL: $*" >&2
  "${podman[@]}" logs "$name" 2>&1 | tail -n 20 >&2 || true
  exit 1
}

started=$SECONDS
step_started=$SECONDS
step() {
  echo "test-image: $1 ($((SECONDS - step_started)) s)"
  step_started=$SECONDS
}

# 1. The base image.
if [ -n "${LIMITSD_IMAGE_REBOOTSTRAP:-}" ] || ! "${podman[@]}" image exists "$base"; then
  mmdebstrap --quiet --variant=minbase bookworm "$work/base.tar"
  "${podman[@]}" import --quiet "$work/base.tar" "$base" >/dev/null
  rm -f "$work/base.tar"
  step "bootstrapped $base with mmdebstrap"
else
  step "reusing $base"
fi

# 2. The image.
"${podman[@]}" build --network host "${ulimits[@]}" \
  --build-arg BASE="$base" --build-arg RUNTIME_BASE="$base" -f deploy/Dockerfile -t "$image" .
step "built $image from deploy/Dockerfile ($("${podman[@]}" image inspect --format '{{.Size}}' "$image") bytes)"

# 3. The image's default command, with a data volume the image's user (65534) owns.
mkdir -p "$work/data"
chown 65534:65534 "$work/data"
"${podman[@]}" run -d --name "$name" --network none "${ulimits[@]}" -v "$work/data:/var/lib/limitsd" "$image" >/dev/null

# An HTTP GET from inside the container (its network is only loopback): bash's /dev/tcp.
http_get() {
  "${podman[@]}" exec "$name" bash -c \
    'exec 3<>/dev/tcp/127.0.0.1/3100 && printf "GET %s HTTP/1.0\r\n\r\n" "$1" >&3 && cat <&3' _ "$1"
}

deadline=$((SECONDS + 120))
until http_get /ready 2>/dev/null | head -n 1 | grep -q " 200 "; do
  [ "$("${podman[@]}" inspect --format '{{.State.Running}}' "$name" 2>/dev/null)" = true ] ||
    fail "the container exited before /ready"
  [ $SECONDS -lt $deadline ] || fail "/ready did not answer 200 within 120 s: $(http_get /ready 2>&1 | tail -n 1)"
  sleep 0.5  # polling period
done
step "the container is ready: $(http_get /ready | tail -n 1)"

metrics=$(http_get /metrics)
for family in loki_ingest_limits_partitions limitsd_store_streams limitsd_grpc_requests_total; do
  grep -q "^# TYPE $family " <<<"$metrics" || fail "/metrics has no $family"
done
user=$("${podman[@]}" exec "$name" id -u)
[ "$user" = 65534 ] || fail "exec runs as uid $user, not the image's user 65534"
node_uid=$("${podman[@]}" exec "$name" awk '/^Uid:/ {print $2}' /proc/1/status)
[ "$node_uid" = 65534 ] || fail "limitsd runs as uid $node_uid"
"${podman[@]}" exec "$name" limitsctl --help | grep -q "^Commands:" || fail "limitsctl --help"
"${podman[@]}" exec "$name" limitsctl --config=/etc/limitsd/limitsd.toml --json partitions >"$work/partitions.json" ||
  fail "limitsctl partitions beside the running node"
$python -c 'import json, sys; assert "partitions" in json.load(open(sys.argv[1]))' "$work/partitions.json" ||
  fail "limitsctl partitions printed no JSON"
[ -f "$work/data/data/CURRENT" ] || fail "no RocksDB database on the data volume"
[ "$(stat -c %u "$work/data/data/CURRENT")" = 65534 ] || fail "the database is not owned by the image's user"
step "checked /ready, /metrics, limitsctl and the data volume as uid 65534"

stop_started=$SECONDS
"${podman[@]}" stop --time 30 "$name" >/dev/null
code=$("${podman[@]}" inspect --format '{{.State.ExitCode}}' "$name")
[ "$code" = 0 ] || fail "limitsd exited $code after SIGTERM"
"${podman[@]}" logs "$name" >"$work/node.log" 2>&1
$python -c '
import json, sys
lines = open(sys.argv[1]).read().splitlines()
bad = [l for l in lines if not (l.startswith("{") and isinstance(json.loads(l), dict))]
assert lines and not bad, bad[:3]
' "$work/node.log" || fail "a log line of the container is not JSON"
grep -q '"msg":"stopped"' "$work/node.log" || fail "no \"stopped\" line after SIGTERM"
step "stopped gracefully in $((SECONDS - stop_started)) s, exit 0; $(wc -l <"$work/node.log") log lines, all JSON"

# 4. The zone-a StatefulSet's own arguments (the environment expanded as kubelet would, the
#    brokers from deploy/k8s/settings), with the ConfigMap volume kubelet would mount.
mkdir -p "$work/pod"
mapfile -t args < <($python - "$work/pod" <<'EOF'
import sys
sys.path.insert(0, "tests/deploy")
import check_k8s, kustomize_lite
objects = kustomize_lite.render("deploy/k8s/zones/zone-a")
pod_name, argv, mounts, blockers = check_k8s.materialise_pod(objects, sys.argv[1])
assert not blockers, blockers
assert mounts["/etc/limitsd"] == sys.argv[1] + "/config", mounts
print("\n".join(argv))
EOF
)
[ ${#args[@]} -gt 0 ] || fail "could not render the zone-a StatefulSet's arguments"
check=$("${podman[@]}" run --rm --network none "${ulimits[@]}" -v "$work/pod/config:/etc/limitsd:ro" "$image" \
  "${args[@]}" --check-config) || fail "the StatefulSet's arguments do not pass --check-config in the image"
grep -q "zone=zone-a consumer_group=limitsd-zone-a instance_id=limitsd-zone-a-0" <<<"$check" ||
  fail "unexpected identity: $check"
step "the zone-a StatefulSet's arguments pass --check-config in the image"

echo "test-image: OK in $((SECONDS - started)) s"
