#!/usr/bin/env bash
# A single-node Apache Kafka broker (KRaft: broker and controller in one JVM) for development and
# tests, from Maven Central jars. Usage: deploy/local/kafka.sh start|stop|status
#   HANGAR_KAFKA_HOME  where jars, data and logs live (default: <repo>/.hangar/kafka)
#   HANGAR_KAFKA_PORT  the client port (default 9092; the controller uses the next one)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
HOME_DIR="${HANGAR_KAFKA_HOME:-$REPO/.hangar/kafka}"
PORT="${HANGAR_KAFKA_PORT:-9092}"
CONTROLLER_PORT=$((PORT + 1))
LIBS="$HOME_DIR/libs"
DATA="$HOME_DIR/data"
PID_FILE="$HOME_DIR/kafka.pid"
LOG="$HOME_DIR/kafka.log"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

fetch_jars() {
  [ -f "$LIBS/.complete" ] && return
  echo "fetching Apache Kafka jars from Maven Central into $LIBS"
  mkdir -p "$LIBS"
  mvn -q -B -f "$HERE/kafka/pom.xml" dependency:copy-dependencies -DoutputDirectory="$LIBS"
  touch "$LIBS/.complete"
}

write_config() {
  cat > "$HOME_DIR/server.properties" <<PROPERTIES
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$DATA
num.partitions=3
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
PROPERTIES
}

java_cmd() { java -Xms256m -Xmx512m -Dlog4j.configuration="file:$HERE/kafka/log4j.properties" -cp "$LIBS/*" "$@"; }

start() {
  if listening; then echo "kafka: already listening on 127.0.0.1:$PORT"; return; fi
  command -v java >/dev/null || { echo "kafka: java is required" >&2; exit 1; }
  command -v mvn >/dev/null || { echo "kafka: mvn is required" >&2; exit 1; }
  mkdir -p "$HOME_DIR"
  fetch_jars
  write_config
  if [ ! -f "$DATA/meta.properties" ]; then
    java_cmd kafka.tools.StorageTool format -t "$(java_cmd kafka.tools.StorageTool random-uuid)" -c "$HOME_DIR/server.properties" >/dev/null
  fi
  nohup java -Xms256m -Xmx512m -Dlog4j.configuration="file:$HERE/kafka/log4j.properties" -cp "$LIBS/*" \
    kafka.Kafka "$HOME_DIR/server.properties" >"$LOG" 2>&1 &
  echo $! >"$PID_FILE"
  for _ in $(seq 1 120); do
    if listening; then echo "kafka: listening on 127.0.0.1:$PORT (pid $(cat "$PID_FILE"), log $LOG)"; return; fi
    if ! kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then echo "kafka: the broker exited; see $LOG" >&2; tail -20 "$LOG" >&2; exit 1; fi
    sleep 0.5
  done
  echo "kafka: not listening after 60 s; see $LOG" >&2
  exit 1
}

stop() {
  if [ -f "$PID_FILE" ] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; then
    kill "$(cat "$PID_FILE")"
    for _ in $(seq 1 60); do kill -0 "$(cat "$PID_FILE")" 2>/dev/null || break; sleep 0.5; done
    echo "kafka: stopped"
  else
    echo "kafka: not running"
  fi
  rm -f "$PID_FILE"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) if listening; then echo "kafka: listening on 127.0.0.1:$PORT"; else echo "kafka: not running"; exit 3; fi ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
