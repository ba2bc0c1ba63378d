#!/usr/bin/env bash
# A real Apache Kafka broker for development and the realkafka tests: one JVM running a
# single-node KRaft broker+controller on loopback.
#
#   kafka-dev.sh fetch                 fetch the broker's jars once (Maven, tests/kafka/pom.xml)
#                                      into the cache; prints the jar directory. Idempotent.
#   kafka-dev.sh start [--dir D] [--owner-pid P] [--sasl-ssl]
#                                      formats a fresh log dir under D, starts the broker on free
#                                      loopback ports, waits until it serves, prints its
#                                      bootstrap address (host:port) on stdout. With --owner-pid
#                                      the broker is stopped when process P exits (test fixtures).
#                                      With --sasl-ssl it also listens SASL_SSL (certificates
#                                      made with openssl in D/tls, CA D/tls/ca.pem; user limitsd:
#                                      SASL PLAIN with password plain-secret, SCRAM-SHA-256 and
#                                      SCRAM-SHA-512 with scram-secret); `sasl-bootstrap`
#                                      prints its address.
#   kafka-dev.sh stop [--dir D]        stops it cleanly (SIGTERM, then SIGKILL after 30 s) and
#                                      removes its log dir.
#   kafka-dev.sh bootstrap [--dir D]   prints the running broker's bootstrap address.
#   kafka-dev.sh create-topic TOPIC PARTITIONS [--dir D] [--config K=V]...
#                                      creates a topic on it (topics are not auto-created).
#
# D defaults to $LIMITSD_KAFKA_DIR or ${TMPDIR:-/tmp}/limitsd-kafka-dev. The jar cache is
# $LIMITSD_KAFKA_CACHE, else /var/cache/limitsd/kafka when writable (root, CI), else
# ${XDG_CACHE_HOME:-~/.cache}/limitsd/kafka; one subdirectory per Kafka version and pom.
# LIMITSD_KAFKA_VERSION picks another Kafka than the pom's (e.g. 3.9.2: Debian's librdkafka
# 2.0.2 authenticates with SCRAM against 3.x only, see README "Security").
# Broker settings are for tests: group.initial.rebalance.delay.ms=0, 1 MiB segments and a
# retention check every second (retention and DeleteRecords move the log start quickly),
# session timeouts down to 500 ms, no topic auto-creation, WARN-level logs in D/server.log.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
pom="$root/tests/kafka/pom.xml"
kafka_version="${LIMITSD_KAFKA_VERSION:-$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$pom")}"

die() { echo "kafka-dev: $*" >&2; exit 1; }

cache_root() {
  if [ -n "${LIMITSD_KAFKA_CACHE:-}" ]; then echo "$LIMITSD_KAFKA_CACHE"; return; fi
  if mkdir -p /var/cache/limitsd/kafka 2>/dev/null && [ -w /var/cache/limitsd/kafka ]; then
    echo /var/cache/limitsd/kafka
  else
    echo "${XDG_CACHE_HOME:-$HOME/.cache}/limitsd/kafka"
  fi
}
# Keyed by the pom's content too: a changed jar list is a new cache entry, never a stale one.
libs="$(cache_root)/$kafka_version-$(sha256sum "$pom" | cut -c1-12)/libs"

fetch() {
  if [ -f "$libs/.complete" ]; then return; fi
  command -v mvn >/dev/null || die "mvn not found (install Debian's maven)"
  command -v java >/dev/null || die "java not found (install Debian's openjdk-17-jre-headless)"
  echo "kafka-dev: fetching Apache Kafka $kafka_version's broker jars into $libs" >&2
  mkdir -p "$(dirname "$libs")"
  # Into a fresh directory, renamed at the end: a concurrent or interrupted fetch never
  # leaves a half-filled cache behind.
  local tmp
  tmp="$(mktemp -d "$(dirname "$libs")/libs.XXXXXX")"
  # (-q still prints bare colour resets: strip escapes and empty lines, keep any error.)
  if ! mvn -q -B -f "$pom" dependency:copy-dependencies -Dkafka.version="$kafka_version" -DincludeScope=runtime \
       -DoutputDirectory="$tmp" 2>&1 |
       sed 's/\x1b\[[0-9;]*m//g' | { grep -v '^[[:space:]]*$' || true; } >&2; then
    rm -rf "$tmp"
    die "mvn could not fetch org.apache.kafka:kafka_2.13:$kafka_version (see above)"
  fi
  touch "$tmp/.complete"
  if ! mv -T "$tmp" "$libs" 2>/dev/null; then rm -rf "$tmp"; fi  # another fetch won the race
  [ -f "$libs/.complete" ] || die "jar cache $libs is incomplete"
}

# Three distinct free loopback ports, by binding port 0 (the kernel picks) and releasing them.
free_ports() {
  local py
  py="$(command -v python3 || true)"
  [ -n "$py" ] || die "python3 is needed to pick free ports"
  "$py" - <<'EOF'
import socket
socks = []
for _ in range(3):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks:
    s.close()
EOF
}

running_pid() {
  local pid
  pid="$(cat "$dir/pid" 2>/dev/null || true)"
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then echo "$pid"; fi
}

# A CA and the broker's certificate (127.0.0.1 and localhost), EC keys; Kafka's PEM keystore
# takes the PKCS#8 key and the chain in one file.
make_tls() {
  local t="$dir/tls"
  rm -rf "$t" && mkdir -p "$t"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 7 -subj "/CN=kafka-dev CA" \
    -keyout "$t/ca.key" -out "$t/ca.pem" 2>/dev/null || die "openssl could not make the CA"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=kafka-dev broker" \
    -keyout "$t/broker.key" -out "$t/broker.csr" 2>/dev/null || die "openssl could not make the broker key"
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$t/broker.ext"
  openssl x509 -req -in "$t/broker.csr" -CA "$t/ca.pem" -CAkey "$t/ca.key" -CAcreateserial -days 7 \
    -extfile "$t/broker.ext" -out "$t/broker.pem" 2>/dev/null || die "openssl could not sign the broker certificate"
  cat "$t/broker.key" "$t/broker.pem" >"$t/keystore.pem"
}

write_config() {
  local broker_port=$1 controller_port=$2 sasl_port=$3
  local listeners="PLAINTEXT://127.0.0.1:$broker_port,CONTROLLER://127.0.0.1:$controller_port"
  local advertised="PLAINTEXT://127.0.0.1:$broker_port"
  local protocols="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
  if [ -n "$sasl_ssl" ]; then
    listeners+=",SASL_SSL://127.0.0.1:$sasl_port"
    advertised+=",SASL_SSL://127.0.0.1:$sasl_port"
    protocols+=",SASL_SSL:SASL_SSL"
  fi
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller_port
controller.listener.names=CONTROLLER
listeners=$listeners
advertised.listeners=$advertised
listener.security.protocol.map=$protocols
inter.broker.listener.name=PLAINTEXT
log.dirs=$dir/data
auto.create.topics.enable=false
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
group.min.session.timeout.ms=500
group.consumer.min.session.timeout.ms=500
group.consumer.min.heartbeat.interval.ms=100
log.segment.bytes=1048576
log.retention.check.interval.ms=1000
log.initial.task.delay.ms=0
log.segment.delete.delay.ms=0
EOF
  if [ -n "$sasl_ssl" ]; then
    cat >>"$dir/server.properties" <<EOF
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_limitsd="plain-secret";
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PEM
listener.name.sasl_ssl.ssl.keystore.location=$dir/tls/keystore.pem
EOF
  fi
  cat >"$dir/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = $dir/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
# The one INFO line start waits for ("Kafka Server started").
logger.raft.name = kafka.server.KafkaRaftServer
logger.raft.level = info
EOF
}

# One attempt: format, launch, wait. Returns 2 when a port was taken meanwhile (retry).
launch() {
  local broker_port controller_port sasl_port
  read -r broker_port controller_port sasl_port < <(free_ports)
  rm -rf "$dir/data" "$dir/server.log" "$dir/bootstrap" "$dir/sasl_bootstrap"
  if [ -n "$sasl_ssl" ]; then make_tls; fi
  write_config "$broker_port" "$controller_port" "$sasl_port"
  local cluster_id
  cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
  # A leading '-' would be read as an option by kafka-storage (1 start in 64 failed so).
  cluster_id="A${cluster_id#?}"
  local scram=()
  # SCRAM users live in the cluster metadata: written at format time.
  if [ -n "$sasl_ssl" ]; then
    scram=(--add-scram 'SCRAM-SHA-256=[name=limitsd,password=scram-secret]'
           --add-scram 'SCRAM-SHA-512=[name=limitsd,password=scram-secret]')
  fi
  java -cp "$libs/*" -Dlog4j2.configurationFile="$dir/log4j2.properties" kafka.tools.StorageTool \
    format -t "$cluster_id" -c "$dir/server.properties" "${scram[@]}" >"$dir/format.log" 2>&1 ||
    die "formatting the log dir failed: $(tail -5 "$dir/format.log")"
  # A JVM sized for tests; its own session, so a signal to the caller's group spares it.
  setsid java -Xms128m -Xmx768m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$dir/log4j2.properties" -cp "$libs/*" kafka.Kafka "$dir/server.properties" \
    </dev/null >"$dir/stdout.log" 2>&1 &
  local pid=$!
  echo "$pid" >"$dir/pid"
  local deadline=$((SECONDS + ${LIMITSD_KAFKA_START_TIMEOUT:-120}))
  while [ $SECONDS -lt $deadline ]; do
    if grep -q "Kafka Server started" "$dir/server.log" 2>/dev/null; then
      echo "127.0.0.1:$broker_port" >"$dir/bootstrap"
      if [ -n "$sasl_ssl" ]; then echo "127.0.0.1:$sasl_port" >"$dir/sasl_bootstrap"; fi
      return 0
    fi
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$dir/pid"
      if grep -qi "Address already in use" "$dir/server.log" "$dir/stdout.log" 2>/dev/null; then return 2; fi
      die "the broker exited during start-up: $(grep -h -m5 -E 'ERROR|Exception' "$dir/server.log" "$dir/stdout.log" || tail -5 "$dir/stdout.log")"
    fi
    sleep 0.2
  done
  kill -KILL "$pid" 2>/dev/null || true
  rm -f "$dir/pid"
  die "the broker did not start within ${LIMITSD_KAFKA_START_TIMEOUT:-120} s (log: $dir/server.log)"
}

start() {
  local owner_pid=$1
  mkdir -p "$dir"
  if [ -n "$(running_pid)" ] && [ -f "$dir/bootstrap" ]; then cat "$dir/bootstrap"; return; fi
  fetch
  local attempt rc
  for attempt in 1 2 3; do
    rc=0
    launch || rc=$?
    [ $rc -eq 2 ] || break
    echo "kafka-dev: a port was taken during start-up; retrying ($attempt)" >&2
  done
  [ $rc -eq 0 ] || die "could not bind free ports in 3 attempts"
  if [ -n "$owner_pid" ]; then
    # Stops the broker when its owner is gone, even if the owner was killed.
    setsid bash -c 'while kill -0 "$1" 2>/dev/null && kill -0 "$2" 2>/dev/null; do sleep 1; done
                    exec "$3" stop --dir "$4"' _ "$owner_pid" "$(cat "$dir/pid")" "$0" "$dir" \
      </dev/null >"$dir/watchdog.log" 2>&1 &
  fi
  cat "$dir/bootstrap"
}

stop() {
  local pid
  pid="$(running_pid)"
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 30))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "kafka-dev: the broker ignored SIGTERM for 30 s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  rm -rf "$dir/data" "$dir/pid" "$dir/bootstrap" "$dir/sasl_bootstrap"
}

create_topic() {
  [ -n "$(running_pid)" ] && [ -f "$dir/bootstrap" ] || die "no broker running in $dir"
  cat >"$dir/tools-log4j2.properties" <<EOF
status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %p %m%n
rootLogger.level = error
rootLogger.appenderRef.err.ref = err
EOF
  local args=(--bootstrap-server "$(cat "$dir/bootstrap")" --create --topic "$1" --partitions "$2" --replication-factor 1)
  local c
  for c in "${configs[@]}"; do args+=(--config "$c"); done
  java -cp "$libs/*" -Dlog4j2.configurationFile="$dir/tools-log4j2.properties" org.apache.kafka.tools.TopicCommand "${args[@]}"
}

cmd="${1:-}"
[ $# -gt 0 ] && shift
dir="${LIMITSD_KAFKA_DIR:-${TMPDIR:-/tmp}/limitsd-kafka-dev}"
owner_pid=""
sasl_ssl=""
positional=()
configs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir="$2"; shift 2 ;;
    --owner-pid) owner_pid="$2"; shift 2 ;;
    --sasl-ssl) sasl_ssl=1; shift ;;
    --config) configs+=("$2"); shift 2 ;;
    --*) die "unknown argument: $1" ;;
    *) positional+=("$1"); shift ;;
  esac
done

case "$cmd" in
  fetch) fetch; echo "$libs" ;;
  start) start "$owner_pid" ;;
  stop) stop ;;
  bootstrap)
    [ -n "$(running_pid)" ] && [ -f "$dir/bootstrap" ] || die "no broker running in $dir"
    cat "$dir/bootstrap" ;;
  sasl-bootstrap)
    [ -n "$(running_pid)" ] && [ -f "$dir/sasl_bootstrap" ] || die "no broker with --sasl-ssl running in $dir"
    cat "$dir/sasl_bootstrap" ;;
  create-topic)
    [ ${#positional[@]} -eq 2 ] || die "usage: kafka-dev.sh create-topic TOPIC PARTITIONS [--dir D] [--config K=V]..."
    create_topic "${positional[0]}" "${positional[1]}" ;;
  *)
    echo "usage: kafka-dev.sh fetch | start [--dir D] [--owner-pid P] | stop [--dir D] | bootstrap [--dir D]" \
         "| create-topic TOPIC PARTITIONS [--dir D] [--config K=V]..." >&2
    exit 2 ;;
esac
