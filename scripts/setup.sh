#!/usr/bin/env bash
# The two set-up commands of the README, on a fresh Debian/Ubuntu machine:
#   scripts/setup.sh demo   install, build, transpose the demo dataset, print the report
#   scripts/setup.sh test   install, build, run every test (what CI runs): the
#                           CUDA build (where nvcc exists) and the CPU-only build
#                           (-DGT_ENABLE_CUDA=OFF), each with its whole suite, then
#                           a CPU-only build with AddressSanitizer and UBSan (only
#                           the host tests and the CLI) running the host and CLI
#                           tests but those that time or measure memory
# Also: scripts/setup.sh build (install and build only).
# Environment: BUILD_DIR (default build; the CPU-only build goes to BUILD_DIR-cpu,
# the sanitized one to BUILD_DIR-asan),
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
# OpenMPI: `mpirun -n N gtranspose` and its tests (ctest runs mpirun -n 2).
# netCDF's tools (ncgen, ncdump), netCDF4-python and xarray read transposed
# netCDF-4 variables back in the tests (tests/cli/test_cli_hdf5_meta.cpp).
# nlohmann-json writes the JSON report and its tests read it; help2man makes
# the man page from --help; tmux gives the progress bar's test a terminal.
packages=(build-essential cmake ninja-build pkg-config libhdf5-dev hdf5-tools libcli11-dev libgtest-dev libgmock-dev
          nlohmann-json3-dev help2man tmux
          python3-numpy python3-h5py python3-dev pybind11-dev python3-pytest
          zlib1g-dev libdeflate-dev libzstd-dev liblz4-dev libaec-dev libblosc-dev
          hdf5-filter-plugin hdf5-filter-plugin-blosc-serial python3-hdf5plugin
          libopenmpi-dev openmpi-bin
          netcdf-bin python3-netcdf4 python3-xarray)
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

# configure_and_build DIR [cmake options...]; GT_TARGETS (words) builds only those.
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
  local targets=()
  for t in ${GT_TARGETS:-}; do targets+=(--target "$t"); done
  cmake --build "$dir" -j"$(nproc)" "${targets[@]}"
}

# Makes `import gtranspose` work in the Python the package was built for
# (CMake chose one that has NumPy: build/python/python-executable names it):
# a .pth file in its site-packages (the user's, where that is not writable)
# names the built package's folder, so a rebuild needs no reinstall.
link_python_package() {
  local exe_file="$build/python/python-executable"
  if [ ! -f "$exe_file" ]; then
    say "python: the package was not built ($(grep -h 'Python package' "$build/configure.log" || echo 'see configure.log'))"
    return
  fi
  local py site
  py=$(cat "$exe_file")
  site=$("$py" -c 'import site; print(site.getsitepackages()[0])')
  if ! { mkdir -p "$site" 2>/dev/null && [ -w "$site" ]; }; then
    site=$("$py" -m site --user-site)
    mkdir -p "$site"
  fi
  echo "$build/python" >"$site/gtranspose.pth"
  "$py" -c 'import gtranspose' || { echo "setup: $py cannot import gtranspose" >&2; exit 1; }
  say "python: import gtranspose works in $py ($site/gtranspose.pth)"
  if [ "$(command -v python3 || true)" != "$py" ] && ! python3 -c 'import gtranspose' 2>/dev/null; then
    say "python: python3 on your PATH ($(command -v python3 || echo none)) is another Python: use $py, or PYTHONPATH=$build/python"
  fi
}

configure_and_build "$build"
link_python_package

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
    # The third: AddressSanitizer and UBSan over the host code (library, CLI,
    # gt-gen and every host and CLI test; CPU-only, so no device code), any
    # finding fatal. Left out: the tests that measure resident memory (the
    # sanitizers' shadow memory is most of it) or a rate (they run several
    # times slower): Budget.* and JournalHash.RunsAtSeveralGBPerSecond; and what
    # this build does not make or the other two builds test: the Python
    # module, the MPI runs (Open MPI's own allocations read as leaks), the
    # installed-package examples and the man page. The
    # CUDA build's device tests are the GPU machine's (scripts/gpu-check.sh
    # runs compute-sanitizer there).
    GT_TARGETS="gtranspose_cli gt-gen gt_core_tests gt_formats_tests gt_cpu_tests gt_bench_tests gt_job_tests gt_tool_tests gt_cli_tests" \
      configure_and_build "$build-asan" -DGT_ENABLE_CUDA=OFF -DGT_SANITIZE=address,undefined \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo
    say "tests ($build-asan, AddressSanitizer and UBSan)"
    # The HDF5 mutation test runs 600 of its 2000 cases here (each case is
    # a process; sanitized ones run several times slower).
    GT_HDF5_FUZZ_CASES=600 ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir "$build-asan" --output-on-failure -j"$(nproc)" --timeout 1800 \
      -E '^(Budget\.|JournalHash\.RunsAtSeveralGBPerSecond|python\.|mpi\.|MpiCli\.|example\.|tool\.man_page)'
    ;;
esac
