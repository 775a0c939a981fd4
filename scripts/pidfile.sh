# Sourced by scripts/neo4j.sh and scripts/llm-server.sh: a background server tracked by its pid file.
# The caller sets PID_FILE and NAME (what the messages call the server).

running() { [[ -f "$PID_FILE" ]] && kill -0 "$(cat "$PID_FILE")" 2>/dev/null; }

# stop_server SECONDS: SIGTERM, wait up to SECONDS for the process to exit, then SIGKILL
stop_server() {
  if ! running; then rm -f "$PID_FILE"; echo "$NAME is not running"; return 0; fi
  local pid i; pid="$(cat "$PID_FILE")"
  kill -TERM "$pid"
  for i in $(seq "$1"); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then echo "SIGTERM timed out, killing $pid" >&2; kill -KILL "$pid"; fi
  rm -f "$PID_FILE"
  echo "$NAME stopped"
}
