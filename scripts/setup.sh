#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian/Ubuntu machine:
#   scripts/setup.sh demo   install, build, transpose the demo dataset, print the report
#   scripts/setup.sh test   install, build, run every test (what CI runs): the
#                           CUDA build (where nvcc exists) and the CPU-only build
#                           (-DGT_ENABLE_CUDA=OFF), each with its whole suite
# Also: scripts/setup.sh build (install and build only).
# Environment: BUILD_DIR (default build; the CPU-only build goes to BUILD_DIR-cpu),
# GT_CUDA_ARCHS (default 90), GT_NO_INSTALL=1 to skip the package step
# (machines where nothing can be installed).
set -euo pipefail
mode=${1:-demo}
case "$mode" in demo|test|build) ;; *) echo "usage: $0 demo|test|build" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
cd "$root"

say() { printf '== %s\n' "$*"; }

# Debian/Ubuntu packages the project needs. CUDA comes from the NVIDIA
# toolkit in /usr/local/cuda where present; without nvcc the build is CPU-only.
# The HDF5 codecs: zlib always; libdeflate, zstd, lz4, libaec (szip) and
# c-blosc where found (CMake says which). The HDF5 plugins and hdf5plugin let
# HDF5's own pipeline, h5py and h5dump read lz4 and blosc for the cross-checks.
packages=(build-essential cmake ninja-build pkg-config libhdf5-dev hdf5-tools libcli11-dev libgtest-dev libgmock-dev
          python3-numpy python3-h5py zlib1g-dev libdeflate-dev libzstd-dev liblz4-dev libaec-dev libblosc-dev
          hdf5-filter-plugin hdf5-filter-plugin-blosc-serial python3-hdf5plugin)
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

# configure_and_build DIR [cmake options...]
configure_and_build() {
  local dir=$1
  shift
  mkdir -p "$dir"
  say "configure ($dir)"
  cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="${GT_CUDA_ARCHS:-90}" "$@" >"$dir/configure.log" 2>&1 \
    || { cat "$dir/configure.log"; exit 1; }
  grep -E "^-- gtranspose:" "$dir/configure.log" || true
  say "build $dir ($(nproc) jobs)"
  cmake --build "$dir" -j"$(nproc)"
}

configure_and_build "$build"

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
    say "tests ($build)"
    ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 900
    # The CPU-only configuration is a build of its own: code that compiles
    # only with CUDA, or tests that pass only with it, show up here.
    configure_and_build "$build-cpu" -DGT_ENABLE_CUDA=OFF
    say "tests ($build-cpu)"
    ctest --test-dir "$build-cpu" --output-on-failure -j"$(nproc)" --timeout 900
    ;;
esac
