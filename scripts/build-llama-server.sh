#!/usr/bin/env bash
# Builds llama.cpp's llama-server (CPU) once, from the llama.cpp tree that the node-llama-cpp package ships as a
# git bundle (llama/gitRelease.bundle in the package: `npm run setup:llama` installs it into
# node_modules/.cache/roundload-llama), into a cache folder the fault-matrix bench
# reuses: never run by `npm test`. About 20 minutes on two cores; a second call finds the binary and returns.
#
#   scripts/build-llama-server.sh            # prints the binary's path when done (or already there)
#   scripts/build-llama-server.sh --where    # prints it if built, else exits 1 (builds nothing)
#   ROUNDLOAD_CACHE=/some/dir scripts/...    # cache root (default: ~/.cache/roundload)
#   JOBS=1 scripts/...                       # build jobs (default: the number of cores)
#
# Needs cmake, make and g++ (Debian: cmake build-essential); no network.
set -euo pipefail
# The whole script is read before it runs (one block): editing it during a 20-minute build cannot change it.
{
root="$(cd "$(dirname "$0")/.." && pwd)"
pkg="$root/node_modules/.cache/roundload-llama/node_modules/node-llama-cpp/llama"
[ -d "$pkg" ] || pkg="$root/node_modules/node-llama-cpp/llama"
bundle="$pkg/gitRelease.bundle"
[ -f "$bundle" ] || { echo "build-llama-server: llama.cpp's sources not found: run npm run setup:llama first" >&2; exit 2; }
tag="$(node -e 'process.stdout.write(require(process.argv[1]).tag)' "$pkg/llama.cpp.info.json")"
commit="$(git bundle list-heads "$bundle" | awk 'NR==1{print substr($1,1,12)}')"
cache="${ROUNDLOAD_CACHE:-$HOME/.cache/roundload}/llama-server-$tag-$commit"
bin="$cache/llama-server"
if [ -x "$bin" ]; then echo "$bin"; exit 0; fi
[ "${1:-}" = "--where" ] && exit 1
command -v cmake >/dev/null || { echo "build-llama-server: cmake not found (apt-get install cmake)" >&2; exit 2; }
work="$(mktemp -d "${TMPDIR:-/tmp}/llama-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
git -c advice.detachedHead=false clone -q "$bundle" "$work/src"
cmake -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=ON >"$work/cmake.log" 2>&1 \
  || { tail -20 "$work/cmake.log" >&2; exit 1; }
cmake --build "$work/build" --target llama-server -j "${JOBS:-$(nproc)}" >"$work/build.log" 2>&1 \
  || { tail -30 "$work/build.log" >&2; exit 1; }
mkdir -p "$cache"
found="$(find "$work/build" -type f -name llama-server -perm -u+x | head -1)"
[ -n "$found" ] || { echo "build-llama-server: no llama-server binary after the build" >&2; exit 1; }
# Linked statically against ggml and llama (BUILD_SHARED_LIBS off): the binary alone is enough.
cp "$found" "$cache/llama-server.tmp"
mv "$cache/llama-server.tmp" "$bin"
echo "$bin"
exit 0
}
