#!/usr/bin/env bash
# The GPU check: the one command the team runs on the device machine.
#
#   scripts/gpu-check.sh [STEP...]
#     STEP: build tests sanitize host cpubench bench shapes python engine hostbench hostrect files big tune profile
#     (default: build tests sanitize host cpubench bench shapes python engine hostbench files)
#
# build     configure (Release, Ninja) and build everything (gt_device_tests first)
# tests     the whole device suite (log: tests.log)
# sanitize  compute-sanitizer memcheck and racecheck over Sanitize.* (every kernel x element size, small)
# host      every other test (host units, CLI end to end, CLI with --engine cuda on this GPU)
# cpubench  gtranspose --bench --engine cpu on the 1 GiB shapes and their odd neighbours, all cores
#           (memcpy, cpu-blocked, cpu-inplace through the host API)
# bench     gtranspose --bench --kernel all, its default aligned and odd ~1 GiB shapes, one JSON per dtype;
#           then inplace-rect on 2:1 and 1:2 rectangles and an odd one (c = 1), one JSON each
# shapes    gtranspose --bench --random-shapes N (GT_SHAPES_N, default 200; seed GT_SHAPES_SEED, 1):
#           min, median and max % of copy per kernel and peer over random shapes 1..20000 a side
# python    the Python package's pytest suite on this GPU, then python/benchmarks/bench.py (4 GiB
#           host arrays, CuPy, files), each case beside its reference
# engine    a 2 GiB raw file transposed file to file by --engine cuda and cpu, beside cp + sync
# hostbench gtranspose --bench-host: 16 GiB f32 host to host (pinned, pageable), device budget 2 GiB,
#           beside pinned H2D/D2H at once (GT_HOSTBENCH_SHAPE to change the size)
# hostrect  host-memory rectangles in place: the GPU route's tests (InplaceGeneral.*, CudaBench.Host*),
#           then --bench-host --host-modes inplace-pageable,inplace-pinned on coprime shapes from 47 MB
#           to 2 GiB with GT_TEST_HOST_RECT_MIN_BYTES=0 (both routes at every size, the GPU route's
#           stages in the notes), beside the CPU route: what kHostRectGpuMinBytes is set from
# files     scripts/bench-files.sh: 8 GiB raw, HDF5 (contiguous, chunked), the h5py loop, in place,
#           each beside cp + sync (GT_FILES_MIB, GT_FILES_DIR, GT_FILES_REPS)
# big       once: a square f32 matrix larger than the GPU's memory (GT_BIG_N, default 155000:
#           89.5 GiB) transposed in place in host memory through the GPU, verified
# tune      the DISABLED_Tune timing harness (GT_TUNE_* variables pass through; log: tune.log)
# profile   Nsight Compute (ncu) over `--bench` runs: GT_PROFILE_SPECS, ';'-separated
#           "DTYPE SHAPE KERNEL REGEX" (REGEX picks the profiled kernels, peers included);
#           DRAM and L2 bytes, instructions, stalls and occupancy per kernel (profile.log;
#           scripts/ncu-summary.py profile.log gives one line per kernel)
#
# Environment: GT_BUILD_DIR (default /tmp/b), GT_JOBS (16), GT_BUILD_DEVICE_TESTS_ONLY=1 (build
# gt_device_tests alone: enough for tests, sanitize and tune, and about a minute sooner where
# device time is short), GT_SANITIZE_EXTRA (a gtest filter
# that sanitize also runs under both tools), GT_SANITIZE_TIMEOUT (seconds per sanitizer run,
# default 300), GT_TUNE_FILTER (a gtest
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
[ ${#STEPS[@]} -eq 0 ] && STEPS=(build tests sanitize host cpubench bench shapes python engine hostbench files)

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

GEN=$B/gt-gen

# Thrust's CMake package: the top-level CMakeLists looks beside the toolkit's
# libraries. Should that miss, retry with the toolkit's copy named outright.
THRUST_ARGS=()
for d in /usr/local/cuda/lib64/cmake/thrust /usr/local/cuda/targets/*/lib/cmake/thrust; do
  if [ -f "$d/thrust-config.cmake" ]; then THRUST_ARGS=(-DThrust_DIR="$d"); break; fi
done

if has_step build; then
  t0=$(date +%s)
  CFG=(-S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGT_ENABLE_CUDA=ON -DGT_BUILD_TESTS=ON)
  if cmake "${CFG[@]}" >"$OUT/build.log" 2>&1; then
    record configure ok "Thrust found by the top-level CMakeLists"
  elif cmake "${CFG[@]}" "${THRUST_ARGS[@]}" >>"$OUT/build.log" 2>&1; then
    record configure ok "needed ${THRUST_ARGS[*]}"
  else
    record configure FAIL "see build.log"
  fi
  if cmake --build "$B" -j"$JOBS" --target gt_device_tests >>"$OUT/build.log" 2>&1; then
    record build ok "gt_device_tests in $(secs "$t0") s"
  else
    record build FAIL "gt_device_tests: see build.log"
    tail -30 "$OUT/build.log"
  fi
  t0=$(date +%s)
  if [ "${GT_BUILD_DEVICE_TESTS_ONLY:-0}" = 1 ]; then
    record build-all skipped "GT_BUILD_DEVICE_TESTS_ONLY=1: the steps tests, sanitize and tune need no more"
  elif cmake --build "$B" -j"$JOBS" >"$OUT/build-all.log" 2>&1; then
    record build-all ok "everything in $(secs "$t0") s"
  else
    record build-all FAIL "see build-all.log"
    tail -30 "$OUT/build-all.log"
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
  # Both tools over one gtest filter: sanitize_both FILTER LOG_PREFIX LABEL_SUFFIX
  sanitize_both() {
    local tool t0 rc summary_line
    for tool in memcheck racecheck; do
      t0=$(date +%s)
      # A time limit per tool (GT_SANITIZE_TIMEOUT, default 300 s): run 78's
      # racecheck did not finish in 330 s, and a hung tool must not take the
      # rest of the call with it.
      timeout "${GT_SANITIZE_TIMEOUT:-300}" "$SAN" --tool "$tool" --error-exitcode 99 "$TESTS" --gtest_filter="$1" \
        >"$OUT/$2-$tool.log" 2>&1
      rc=$?
      summary_line=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/$2-$tool.log" | tail -1)
      if [ $rc -eq 0 ]; then record "$tool$3" ok "${summary_line:-clean} ($(secs "$t0") s)"
      elif [ $rc -eq 124 ]; then record "$tool$3" FAIL "timed out after ${GT_SANITIZE_TIMEOUT:-300} s: see $2-$tool.log"
      else record "$tool$3" FAIL "rc $rc: ${summary_line:-see $2-$tool.log}"; fi
    done
  }
  if [ -z "$SAN" ]; then
    record sanitize skipped "compute-sanitizer not found"
  elif [ ! -x "$TESTS" ]; then
    record sanitize skipped "no $TESTS"
  else
    sanitize_both 'Sanitize.*' sanitize ""
    # GT_SANITIZE_EXTRA: one more gtest filter under both tools (a path that
    # only tuning variants take yet, e.g. 'Rows/MisalignedOut.*e4_5003x4099*').
    [ -n "${GT_SANITIZE_EXTRA:-}" ] && sanitize_both "$GT_SANITIZE_EXTRA" sanitize-extra "+"
  fi
  # The streaming engine under memcheck: small streamed runs (many tiles,
  # every lane, staged and direct DMA, in place).
  JOBT=$B/tests/gt_job_tests
  if [ -n "$SAN" ] && [ -x "$JOBT" ]; then
    t0=$(date +%s)
    "$SAN" --tool memcheck --error-exitcode 99 "$JOBT" \
      --gtest_filter='StreamStress.*:StreamMemory.InPlace*:All/StreamFiles*.*raw_e4_129x67:All/StreamFiles*.*raw_e4_97x97' \
      >"$OUT/sanitize-engine.log" 2>&1
    rc=$?
    summary_line=$(grep -E 'ERROR SUMMARY' "$OUT/sanitize-engine.log" | tail -1)
    if [ $rc -eq 0 ]; then record memcheck-engine ok "${summary_line:-clean} ($(secs "$t0") s)"
    else record memcheck-engine FAIL "rc $rc: ${summary_line:-see sanitize-engine.log}"; fi
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

if has_step profile; then
  NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -x "$CLI" ] && [ -n "$NCU" ]; then
    t0=$(date +%s)
    specs=${GT_PROFILE_SPECS:-"u8 16384x65536 padded padded;u8 16383x65537 padded padded|ransform;f16 16383x32769 padded padded|ransform;f32 16383x16385 padded padded|geam;f64 16383x8193 padded padded|geam;f32 16384x16384 padded padded"}
    metrics=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active
    : >"$OUT/profile.log"
    IFS=';' read -ra SPECS <<<"$specs"
    for spec in "${SPECS[@]}"; do
      read -r dt shape kern regex <<<"$spec"
      echo "=== $dt $shape $kern ($regex)" >>"$OUT/profile.log"
      "$NCU" --kernel-name "regex:$regex" --launch-count 8 --section SpeedOfLight --section WarpStateStats \
        --section Occupancy --section LaunchStats --metrics "$metrics" "$CLI" --bench --kernel "$kern" --dtype "$dt" --shape "$shape" \
        --reps 1 --warmup 0 >>"$OUT/profile.log" 2>&1
    done
    record profile ok "${#SPECS[@]} specs in $(secs "$t0") s: see profile.log"
  else
    record profile skipped "no $CLI or no ncu"
  fi
fi

if has_step host; then
  t0=$(date +%s)
  # Nothing can be installed on the GPU machine: interop tests whose Python
  # modules or tools (netCDF4, xarray, ncdump) it lacks skip there, saying so;
  # CI installs them and fails without them.
  if (cd "$B" && GT_TEST_PYTHON_OPTIONAL=1 ctest -LE device -j8 --timeout 600 --output-on-failure) >"$OUT/host-tests.log" 2>&1; then
    record host ok "$(grep -E 'tests passed' "$OUT/host-tests.log" | tail -1) in $(secs "$t0") s"
  else
    record host FAIL "$(grep -E 'tests passed' "$OUT/host-tests.log" | tail -1): see host-tests.log"
    grep -E '^\s+[0-9]+ - .*Failed' "$OUT/host-tests.log" | head -20
  fi
  # The out-of-memory test takes the whole GPU: alone, after the others.
  if GT_TEST_GPU_EXCLUSIVE=1 "$B/tests/gt_job_tests" --gtest_filter='StreamOom.*' >"$OUT/oom-test.log" 2>&1 &&
     grep -q '\[  PASSED  \] 1 test' "$OUT/oom-test.log"; then
    record oom ok "the engine shrank its tiles on a full GPU and finished bit-exact"
  else
    record oom FAIL "see oom-test.log"
  fi
  skipped_cuda=$(grep -c 'CudaEngine.*Skipped' "$OUT/host-tests.log")
  [ "$skipped_cuda" -gt 0 ] && record host-cuda FAIL "$skipped_cuda --engine cuda CLI tests skipped on a GPU machine"
fi

SHAPES="i8:16384x65536 f16:16384x32768 f32:16384x16384 f64:16384x8192 c128:16384x4096"

if has_step cpubench; then
  if [ -x "$CLI" ]; then
    : >"$OUT/cpubench.log"
    # The % column of a row stands just before "verified" (the config column may hold two words).
    pct_of() {
      grep -E "^ *$1 " "$OUT/cpubench.log" | tail -1 |
        awk '{for (i = NF; i > 1; i--) if ($i == "yes" || $i == "no") { print $(i - 1); exit }}'
    }
    # Each size's aligned 1 GiB shape and its odd neighbour (a row fewer, a
    # column more: rows off 64-byte lines, and in place the gcd decomposition).
    for spec in $SHAPES; do
      dt=${spec%%:*}
      shape=${spec#*:}
      r=${shape%x*}
      c=${shape#*x}
      for sh in "$shape" "$((r - 1))x$((c + 1))"; do
        tag=$([ "$sh" = "$shape" ] && echo aligned || echo odd)
        if "$CLI" --bench --engine cpu --dtype "$dt" --shape "$sh" --reps 5 --warmup 1 \
            --json "$OUT/cpubench-$dt-$tag.json" >>"$OUT/cpubench.log" 2>&1; then
          record "cpu-$dt-$tag" ok "$sh: cpu-blocked $(pct_of cpu-blocked)%, cpu-inplace $(pct_of cpu-inplace)% of memcpy ($(nproc) threads)"
        else
          record "cpu-$dt-$tag" FAIL "$sh: see cpubench.log"
        fi
      done
    done
  else
    record cpubench skipped "no $CLI"
  fi
fi

if has_step bench; then
  if [ -x "$CLI" ]; then
    : >"$OUT/bench.log"
    for spec in i8:16384x65536 f16:16384x32768 f32:16384x16384 f64:16384x8192 c128:16384x4096; do
      dt=${spec%%:*}
      shape=${spec#*:}
      t0=$(date +%s)
      # No --shape: the bench's default pair, an aligned matrix of about 1 GiB
      # and an odd one beside it (16384 and 16383 rows).
      if "$CLI" --bench --kernel all --dtype "$dt" --json "$OUT/bench-$dt.json" >>"$OUT/bench.log" 2>&1; then
        record "bench-$dt" ok "aligned and odd 1 GiB shapes in $(secs "$t0") s"
      else
        record "bench-$dt" FAIL "$shape: see bench.log"
      fi
    done
    # inplace-rect on rectangles (the default pair's odd shape is one too):
    # 2:1 both ways at 1 GiB (c = 8192, all three steps), and an odd pair
    # with c = 1 (two steps), each beside the copy of the same bytes.
    for dt in i8 f32 f64 c128; do
      for shape in 32768x16384 16384x32768 13001x20651; do
        [ "$dt" = i8 ] && shape=${shape/32768x16384/65536x16384} && shape=${shape/16384x32768/16384x65536}
        [ "$dt" = f64 ] && shape=${shape/32768x16384/16384x8192} && shape=${shape/16384x32768/8192x16384}
        [ "$dt" = c128 ] && shape=${shape/32768x16384/8192x4096} && shape=${shape/16384x32768/4096x8192}
        t0=$(date +%s)
        if "$CLI" --bench --kernel inplace-rect --no-peers --dtype "$dt" --shape "$shape" \
            --json "$OUT/bench-rect-$dt-$shape.json" >>"$OUT/bench-rect.log" 2>&1; then
          pct=$(grep -E '^ *inplace-rect' "$OUT/bench-rect.log" | tail -1 | tr -s ' ')
          record "rect-$dt-$shape" ok "$(secs "$t0") s: $pct"
        else
          record "rect-$dt-$shape" FAIL "see bench-rect.log"
        fi
      done
    done
  else
    record bench skipped "no $CLI (target gtranspose_cli not built)"
  fi
fi

if has_step shapes; then
  if [ -x "$CLI" ]; then
    t0=$(date +%s)
    n=${GT_SHAPES_N:-200}
    if "$CLI" --bench --random-shapes "$n" --seed "${GT_SHAPES_SEED:-1}" --reps 10 --warmup 2 \
        --json "$OUT/shapes.json" >"$OUT/shapes.log" 2>&1; then
      record shapes ok "$n random shapes in $(secs "$t0") s: see shapes.log"
    else
      record shapes FAIL "see shapes.log"
    fi
    tail -40 "$OUT/shapes.log"
  else
    record shapes skipped "no $CLI"
  fi
fi

if has_step python; then
  PY=$(cat "$B/python/python-executable" 2>/dev/null || command -v python3)
  if [ -d "$B/python/gtranspose" ]; then
    t0=$(date +%s)
    if PYTHONPATH="$B/python" GTRANSPOSE_CLI="$CLI" "$PY" -m pytest -q -rs python/tests >"$OUT/python-tests.log" 2>&1; then
      record pytest ok "$(tail -1 "$OUT/python-tests.log") ($(secs "$t0") s)"
    else
      record pytest FAIL "$(tail -1 "$OUT/python-tests.log"): see python-tests.log"
      tail -30 "$OUT/python-tests.log"
    fi
    t0=$(date +%s)
    if PYTHONPATH="$B/python" "$PY" python/benchmarks/bench.py --size "${GT_PY_SIZE:-4G}" --file-size "${GT_PY_FILE_SIZE:-4G}" \
        --cli "$CLI" --json "$OUT/bench-python.json" >"$OUT/bench-python.log" 2>&1; then
      record pybench ok "in $(secs "$t0") s: see bench-python.log"
    else
      record pybench FAIL "see bench-python.log"
    fi
    cat "$OUT/bench-python.log"
  else
    record python skipped "no Python module in $B/python (pybind11 missing?)"
  fi
fi

if has_step engine; then
  if [ -x "$CLI" ] && [ -x "$GEN" ]; then
    W=${GT_ENGINE_DIR:-/tmp/gt-engine}
    rm -rf "$W" && mkdir -p "$W"
    shape=16384x32768
    : >"$OUT/engine.log"
    "$GEN" "$W/a.raw" --shape $shape --dtype f32 --seed 3 >>"$OUT/engine.log" 2>&1
    sync
    t0=$(date +%s.%N)
    cp "$W/a.raw" "$W/copy.raw" && sync
    cp_s=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}")
    rm -f "$W/copy.raw"
    for eng in cuda cpu; do
      sync
      t0=$(date +%s.%N)
      if "$CLI" "$W/a.raw" "$W/t-$eng.raw" --shape $shape --dtype f32 --engine $eng --json "$OUT/engine-$eng.json" \
          >>"$OUT/engine.log" 2>&1 && sync &&
         "$GEN" --verify "$W/t-$eng.raw" --transposed --seed 3 --shape 32768x16384 --dtype f32 -q >>"$OUT/engine.log" 2>&1; then
        s_=$(awk "BEGIN{printf \"%.2f\", $(date +%s.%N) - $t0}")
        record "engine-$eng" ok "2 GiB raw f32: ${s_} s with sync vs cp+sync ${cp_s} s (page cache warm), verified"
      else
        record "engine-$eng" FAIL "see engine.log"
      fi
      rm -f "$W/t-$eng.raw"
    done
    rm -rf "$W"
  else
    record engine skipped "no $CLI or $GEN"
  fi
fi

if has_step hostbench; then
  if [ -x "$CLI" ]; then
    t0=$(date +%s)
    shape=${GT_HOSTBENCH_SHAPE:-65536x65536}
    if "$CLI" --bench-host --shape "$shape" --dtype f32 --device-mem 2G --reps 3 --warmup 1 \
        --json "$OUT/hostbench.json" >"$OUT/hostbench.log" 2>&1; then
      line=$(grep -E '^ *stream pinned' "$OUT/hostbench.log" | head -1 | tr -s ' ')
      record hostbench ok "$shape f32 in $(secs "$t0") s: ${line:-see hostbench.log}"
    else
      record hostbench FAIL "see hostbench.log"
    fi
    cat "$OUT/hostbench.log"
  else
    record hostbench skipped "no $CLI"
  fi
fi

if has_step hostrect; then
  JOBT=$B/tests/gt_job_tests
  CLIT=$B/tests/gt_cli_tests
  if [ -x "$JOBT" ] && [ -x "$CLIT" ] && [ -x "$CLI" ]; then
    t0=$(date +%s)
    if "$JOBT" --gtest_filter='InplaceGeneral.*' >"$OUT/hostrect-tests.log" 2>&1 &&
       "$CLIT" --gtest_filter='CudaBench.Host*' >>"$OUT/hostrect-tests.log" 2>&1; then
      record hostrect-tests ok "$(grep -c '^\[       OK' "$OUT/hostrect-tests.log") passed in $(secs "$t0") s"
    else
      record hostrect-tests FAIL "see hostrect-tests.log"
      grep -A3 '\[  FAILED  \]' "$OUT/hostrect-tests.log" | head -20
    fi
    : >"$OUT/hostrect.log"
    for spec in u8:13001x20651 f32:13001x20651 f64:13001x20651 u8:6007x10301 f32:6007x10301 f32:3001x5003; do
      dt=${spec%%:*}
      shape=${spec#*:}
      if GT_TEST_HOST_RECT_MIN_BYTES=0 "$CLI" --bench-host --shape "$shape" --dtype "$dt" \
          --host-modes inplace-pageable,inplace-pinned --reps 5 --warmup 1 --json "$OUT/hostrect-$dt-$shape.json" \
          >>"$OUT/hostrect.log" 2>&1; then
        record "hostrect-$dt-$shape" ok "both routes, pageable and pinned: see hostrect.log"
      else
        record "hostrect-$dt-$shape" FAIL "see hostrect.log"
      fi
    done
    grep -E '^(host API|cpu in-place)' "$OUT/hostrect.log" | cut -c1-110
    grep -oE 'stages: .*' "$OUT/hostrect.log"
  else
    record hostrect skipped "no $JOBT, $CLIT or $CLI (build everything first)"
  fi
fi

if has_step files; then
  if [ -x "$CLI" ] && [ -x "$GEN" ]; then
    t0=$(date +%s)
    if scripts/bench-files.sh "$B" "$OUT" >"$OUT/files-run.log" 2>&1; then
      record files ok "in $(secs "$t0") s: $(grep -c RESULT "$OUT/files-run.log") cases, see files.json"
    else
      record files FAIL "see files-run.log"
    fi
    grep RESULT "$OUT/files-run.log"
  else
    record files skipped "no $CLI or $GEN"
  fi
fi

if has_step big; then
  if [ -x "$CLI" ]; then
    t0=$(date +%s)
    n=${GT_BIG_N:-155000}
    if "$CLI" --bench-host --shape "${n}x${n}" --dtype f32 --host-modes inplace-pageable --reps 1 --warmup 0 \
        --json "$OUT/big.json" >"$OUT/big.log" 2>&1; then
      record big ok "${n}x${n} f32 in place in host memory, $(secs "$t0") s: see big.log"
    else
      record big FAIL "see big.log"
    fi
    cat "$OUT/big.log"
  else
    record big skipped "no $CLI"
  fi
fi

# At most 8 files come back from the device tool: every log and JSON goes
# into one archive.
( cd "$OUT" && ls *.log *.json >/dev/null 2>&1 && tar czf results.tar.gz ./*.log ./*.json 2>/dev/null && find . -maxdepth 1 \( -name '*.log' -o -name '*.json' \) -delete )

echo
echo "== gpu-check summary ($(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $(date -u +%Y-%m-%dT%H:%MZ)) =="
printf '%s\n' "${SUMMARY[@]}"
exit $STATUS
