#!/usr/bin/env bash
# A real MLflow tracking server on loopback for the tracking tests (tests/test_tracking.py) and for trying
# `ragsweep run --mlflow` by hand: MLflow from PyPI in a virtual environment of its own (a tracking server is a
# service of its own, and its pins, e.g. pyarrow below 26, would downgrade the project's), a SQLite backend store
# and artifacts served over HTTP (--serve-artifacts: the client uploads through the server, no shared folder).
#
# Usage: scripts/mlflow-server.sh install|start|stop|status|env
#   eval "$(scripts/mlflow-server.sh env)"  # exports RAGSWEEP_MLFLOW_URI
# Settings (environment):
#   MLFLOW_SERVER_HOME  <repo>/.mlflow-server (venv, database, artifacts, logs)
#   MLFLOW_SERVER_PORT  5055
# Needs: python3 (3.10+) and the PyPI registry (first install only).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${MLFLOW_SERVER_HOME:-$REPO/.mlflow-server}"
PORT="${MLFLOW_SERVER_PORT:-5055}"
VERSION=3.17.2
VENV="$HOME_DIR/venv"
PID_FILE="$HOME_DIR/run/server.pid"
LOG="$HOME_DIR/logs/server.log"
URL="http://127.0.0.1:$PORT"

die() { echo "mlflow-server.sh: $*" >&2; exit 1; }
NAME="MLflow server"
# shellcheck source=scripts/pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"   # running, await_up, stop_session

install_server() {
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  if "$VENV/bin/python" -c "import mlflow; assert mlflow.__version__ == '$VERSION'" 2>/dev/null; then
    return 0
  fi
  echo "Installing MLflow $VERSION into $VENV ..."
  "$VENV/bin/python" -m pip install --quiet --upgrade pip
  "$VENV/bin/python" -m pip install --quiet "mlflow==$VERSION" || die "pip install mlflow==$VERSION failed"
}

answers() { "$VENV/bin/python" -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=3)" "$URL/health" 2>/dev/null; }

start() {
  if running; then echo "MLflow already running (pid $(cat "$PID_FILE")) at $URL"; return 0; fi
  install_server
  mkdir -p "$HOME_DIR/run" "$HOME_DIR/logs" "$HOME_DIR/artifacts"
  echo "Starting MLflow $VERSION at $URL (log: $LOG) ..."
  # its own session, so that stop ends the server's workers with it; no job runner (GenAI scoring jobs: eight
  # more processes and about 2 GB resident that tracking never uses)
  MLFLOW_SERVER_ENABLE_JOB_EXECUTION=false setsid nohup "$VENV/bin/mlflow" server --host 127.0.0.1 --port "$PORT" --workers 1 \
    --backend-store-uri "sqlite:///$HOME_DIR/mlflow.db" \
    --artifacts-destination "$HOME_DIR/artifacts" --serve-artifacts >"$LOG" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  await_up 180
}

stop() { stop_session 30; }

case "${1:-}" in
  install) install_server; echo "MLflow $VERSION is in $VENV" ;;
  start) start ;;
  stop) stop ;;
  status) if running; then echo "$URL"; else echo "MLflow is not running" >&2; exit 1; fi ;;
  env) printf 'export RAGSWEEP_MLFLOW_URI=%q\n' "$URL" ;;
  *) die "usage: $0 install|start|stop|status|env" ;;
esac
