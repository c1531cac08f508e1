#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian/Ubuntu machine:
#   scripts/setup.sh demo   install, build, transpose the demo dataset, print the report
#   scripts/setup.sh test   install, build, run every test (what CI runs)
# Also: scripts/setup.sh build (install and build only).
# Environment: BUILD_DIR (default build), GT_CUDA_ARCHS (default 90),
# GT_NO_INSTALL=1 to skip the package step (machines where nothing can be installed).
set -euo pipefail
mode=${1:-demo}
case "$mode" in demo|test|build) ;; *) echo "usage: $0 demo|test|build" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cd "$root"

say() { printf '== %s\n' "$*"; }

# Debian/Ubuntu packages the project needs. CUDA comes from the NVIDIA
# toolkit in /usr/local/cuda where present; without nvcc the build is CPU-only.
packages=(build-essential cmake ninja-build pkg-config libhdf5-dev hdf5-tools libcli11-dev libgtest-dev libgmock-dev)
install_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then say "packages: all present"; return; fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
    sudo=sudo
  fi
  say "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}
[ "${GT_NO_INSTALL:-0}" = 1 ] || install_packages

if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi

mkdir -p "$build"
say "configure ($build)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="${GT_CUDA_ARCHS:-90}" >"$build/configure.log" 2>&1 \
  || { cat "$build/configure.log"; exit 1; }
grep -E "^-- gtranspose:" "$build/configure.log" || true
say "build ($(nproc) jobs)"
cmake --build "$build" -j"$(nproc)"

case "$mode" in
  build) ;;
  demo)
    out="$build/demo"
    mkdir -p "$out"
    say "demo: gtranspose datasets/demo.h5 $out/demo_T.h5"
    "$build/gtranspose" datasets/demo.h5 "$out/demo_T.h5" --force --json "$out/report.json"
    "$build/gt-gen" --verify "$out/demo_T.h5" --transposed --seed 7
    ;;
  test)
    say "tests"
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
    ;;
esac
