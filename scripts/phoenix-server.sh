#!/usr/bin/env bash
# A real Arize Phoenix server on loopback for the tracing tests (tests/test_tracing.py) and for opening a sweep's or
# a served query's trace by hand: Phoenix from PyPI in a virtual environment of its own (a trace collector is a
# service of its own, and its pins would move the project's), receiving OTLP over HTTP at $URL/v1/traces, its
# SQLite database under the home folder.
#
# Usage: scripts/phoenix-server.sh install|start|stop|status|env
#   eval "$(scripts/phoenix-server.sh env)"  # exports RAGSWEEP_PHOENIX_URL
# Settings (environment):
#   PHOENIX_SERVER_HOME  <repo>/.phoenix-server (venv, database, logs)
#   PHOENIX_SERVER_PORT  6006 (HTTP: the UI, the REST API and OTLP/HTTP); gRPC OTLP on PORT + 1
# Needs: python3 (3.10+) and the PyPI registry (first install only).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${PHOENIX_SERVER_HOME:-$REPO/.phoenix-server}"
PORT="${PHOENIX_SERVER_PORT:-6006}"
VERSION=20.26.1
VENV="$HOME_DIR/venv"
PID_FILE="$HOME_DIR/run/server.pid"
LOG="$HOME_DIR/logs/server.log"
URL="http://127.0.0.1:$PORT"

die() { echo "phoenix-server.sh: $*" >&2; exit 1; }
NAME="Phoenix server"
# shellcheck source=scripts/pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"   # running, await_up, stop_session

install_server() {
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  if "$VENV/bin/python" -c "import importlib.metadata as m; assert m.version('arize-phoenix') == '$VERSION'" 2>/dev/null; then
    return 0
  fi
  echo "Installing Phoenix $VERSION into $VENV ..."
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet "arize-phoenix==$VERSION" || die "pip install arize-phoenix==$VERSION failed"
}

answers() { "$VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=3)" "$URL/healthz" 2>/dev/null; }

start() {
  if running; then echo "Phoenix already running (pid $(cat "$PID_FILE")) at $URL"; return 0; fi
  install_server
  mkdir -p "$HOME_DIR/run" "$HOME_DIR/logs" "$HOME_DIR/data"
  echo "Starting Phoenix $VERSION at $URL (log: $LOG) ..."
  # its own session, so that stop ends it with its children; no telemetry to Arize (nothing outside is reached)
  PHOENIX_HOST=127.0.0.1 PHOENIX_PORT="$PORT" PHOENIX_GRPC_PORT="$((PORT + 1))" PHOENIX_WORKING_DIR="$HOME_DIR/data" \
    PHOENIX_TELEMETRY_ENABLED=false setsid nohup "$VENV/bin/phoenix" serve >"$LOG" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  await_up 180
}

stop() { stop_session 30; }

case "${1:-}" in
  install) install_server; echo "Phoenix $VERSION is in $VENV" ;;
  start) start ;;
  stop) stop ;;
  status) if running; then echo "$URL"; else echo "Phoenix is not running" >&2; exit 1; fi ;;
  env) printf 'export RAGSWEEP_PHOENIX_URL=%q\n' "$URL" ;;
  *) die "usage: $0 install|start|stop|status|env" ;;
esac
