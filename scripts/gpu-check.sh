#!/usr/bin/env bash
# The GPU check: the one command the team runs on the device machine.
#
#   scripts/gpu-check.sh [STEP...]     STEP: build tests sanitize tune bench (default: build tests sanitize bench)
#
# build     configure (Release, Ninja) and build gt_device_tests, then try gtranspose_cli
# tests     the whole device suite (log: tests.log)
# sanitize  compute-sanitizer memcheck and racecheck over Sanitize.* (every kernel x element size, small)
# tune      the DISABLED_Tune timing harness (GT_TUNE_* variables pass through; log: tune.log)
# bench     gtranspose --bench --kernel all on the 1 GiB shapes, one JSON per dtype, if the CLI built
#
# Environment: GT_BUILD_DIR (default /tmp/b), GT_JOBS (16), GT_TUNE_FILTER (a gtest
# filter over DISABLED_Tune.*), and the harness's GT_TUNE_SIZES, GT_TUNE_KERNELS,
# GT_TUNE_VARIANTS, GT_TUNE_REPS (tests/device/tune_test.cu).
#
# Logs go to $OUT (the device tool's folder; ./gpu-check-out when unset), bundled
# into few files since the device tool returns at most 8. A piece that is
# missing (no CLI yet, no compute-sanitizer) is reported and skipped; the exit
# status is non-zero only when a step that ran failed.
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-check-out}
B=${GT_BUILD_DIR:-/tmp/b}
JOBS=${GT_JOBS:-16}
mkdir -p "$OUT"
STEPS=("$@")
[ ${#STEPS[@]} -eq 0 ] && STEPS=(build tests sanitize bench)

SUMMARY=()
STATUS=0
record() {  # step, result, detail
  SUMMARY+=("$(printf '%-10s %-8s %s' "$1" "$2" "$3")")
  [ "$2" = FAIL ] && STATUS=1
  return 0
}
has_step() { local s; for s in "${STEPS[@]}"; do [ "$s" = "$1" ] && return 0; done; return 1; }
secs() { echo $(( $(date +%s) - $1 )); }

TESTS=$B/tests/gt_device_tests
CLI=$B/gtranspose

# CMake 4 on the device machine misses Thrust's package through the
# top-level HINTS; point it at the toolkit's copy when one is there.
THRUST_ARGS=()
for d in /usr/local/cuda/lib64/cmake/thrust /usr/local/cuda/targets/*/lib/cmake/thrust; do
  if [ -f "$d/thrust-config.cmake" ]; then THRUST_ARGS=(-DThrust_DIR="$d"); break; fi
done

if has_step build; then
  t0=$(date +%s)
  if cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGT_ENABLE_CUDA=ON -DGT_BUILD_TESTS=ON "${THRUST_ARGS[@]}" >"$OUT/build.log" 2>&1 &&
     cmake --build "$B" -j"$JOBS" --target gt_device_tests >>"$OUT/build.log" 2>&1; then
    record build ok "gt_device_tests in $(secs "$t0") s"
  else
    record build FAIL "gt_device_tests: see build.log"
    tail -30 "$OUT/build.log"
  fi
  if has_step bench; then
    t0=$(date +%s)
    if cmake --build "$B" -j"$JOBS" --target gtranspose_cli >"$OUT/build-cli.log" 2>&1; then
      record build-cli ok "gtranspose in $(secs "$t0") s"
    else
      record build-cli skipped "gtranspose_cli did not build (another area mid-change?): see build-cli.log"
    fi
  fi
fi

if has_step tests; then
  if [ -x "$TESTS" ]; then
    t0=$(date +%s)
    "$TESTS" --gtest_brief=1 >"$OUT/tests.log" 2>&1
    rc=$?
    passed=$(grep -o '\[  PASSED  \] [0-9]* test' "$OUT/tests.log" | grep -o '[0-9]*' | head -1)
    skipped=$(grep -o '\[  SKIPPED \] [0-9]* test' "$OUT/tests.log" | grep -o '[0-9]*' | head -1)
    failed=$(grep -o '\[  FAILED  \] [0-9]* test' "$OUT/tests.log" | grep -o '[0-9]*' | head -1)
    detail="passed ${passed:-0}, skipped ${skipped:-0}, failed ${failed:-0} in $(secs "$t0") s"
    if [ $rc -eq 0 ]; then record tests ok "$detail"; else record tests FAIL "$detail"; grep -A3 '\[  FAILED  \]' "$OUT/tests.log" | head -40; fi
  else
    record tests skipped "no $TESTS (build first)"
  fi
fi

if has_step sanitize; then
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null)
  if [ -z "$SAN" ]; then
    record sanitize skipped "compute-sanitizer not found"
  elif [ ! -x "$TESTS" ]; then
    record sanitize skipped "no $TESTS"
  else
    for tool in memcheck racecheck; do
      t0=$(date +%s)
      "$SAN" --tool "$tool" --error-exitcode 99 "$TESTS" --gtest_filter='Sanitize.*' >"$OUT/sanitize-$tool.log" 2>&1
      rc=$?
      summary_line=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitize-$tool.log" | tail -1)
      if [ $rc -eq 0 ]; then record "$tool" ok "${summary_line:-clean} ($(secs "$t0") s)"
      else record "$tool" FAIL "rc $rc: ${summary_line:-see sanitize-$tool.log}"; fi
    done
  fi
fi

if has_step tune; then
  if [ -x "$TESTS" ]; then
    t0=$(date +%s)
    "$TESTS" --gtest_also_run_disabled_tests --gtest_filter="${GT_TUNE_FILTER:-DISABLED_Tune.*}" >"$OUT/tune.log" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then record tune ok "$(grep -c '^TUNE' "$OUT/tune.log") rows in $(secs "$t0") s"
    else record tune FAIL "rc $rc, see tune.log"; fi
  else
    record tune skipped "no $TESTS"
  fi
fi

if has_step bench; then
  if [ -x "$CLI" ]; then
    : >"$OUT/bench.log"
    for spec in i8:16384x65536 f16:16384x32768 f32:16384x16384 f64:16384x8192 c128:16384x4096; do
      dt=${spec%%:*}
      shape=${spec#*:}
      t0=$(date +%s)
      if "$CLI" --bench --kernel all --dtype "$dt" --shape "$shape" --json "$OUT/bench-$dt.json" >>"$OUT/bench.log" 2>&1; then
        record "bench-$dt" ok "$shape in $(secs "$t0") s"
      else
        record "bench-$dt" FAIL "$shape: see bench.log"
      fi
    done
  else
    record bench skipped "no $CLI (target gtranspose_cli not built)"
  fi
fi

# At most 8 files come back from the device tool: every log goes into one
# archive; tune.log and the bench JSON files (5) stay beside it.
( cd "$OUT" && ls *.log >/dev/null 2>&1 && tar czf logs.tar.gz *.log && find . -maxdepth 1 -name '*.log' ! -name tune.log -delete )

echo
echo "== gpu-check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%dT%H:%MZ)) =="
printf '%s\n' "${SUMMARY[@]}"
exit $STATUS
