# Sourced by scripts/neo4j.sh, llm-server.sh, mlflow-server.sh and phoenix-server.sh: a background server tracked
# by its pid file. The caller sets PID_FILE and NAME (what the messages call the server); await_up also URL, LOG,
# an `answers` check and a `stop` function.

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

# await_up SECONDS: wait until the caller's `answers` succeeds while the server runs; else print the log's tail,
# stop it and exit 1
await_up() {
  local t0=$SECONDS
  until answers; do
    if ! running || (( SECONDS - t0 >= $1 )); then
      echo "$NAME did not come up on $URL within $((SECONDS - t0)) s; log tail:" >&2
      tail -n 40 "$LOG" >&2
      stop >/dev/null 2>&1 || true
      exit 1
    fi
    sleep 1
  done
  echo "$NAME is up at $URL (pid $(cat "$PID_FILE"), $((SECONDS - t0)) s)"
}

# stop_session SECONDS: SIGTERM to a server started in its own session (setsid) and its children, wait up to
# SECONDS, then SIGKILL what is left of the group
stop_session() {
  if ! running; then rm -f "$PID_FILE"; echo "$NAME is not running"; return 0; fi
  local pid i; pid="$(cat "$PID_FILE")"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid"
  for i in $(seq "$1"); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$PID_FILE"
  echo "$NAME stopped"
}
