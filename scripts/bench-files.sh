#!/usr/bin/env bash
# File-to-file and in-place figures of the streaming engine, each beside
# `cp` of the same file followed by `sync` (the floor: every byte read and
# written once), measured in the same run, alternating so that drift in the
# disk's speed hits both.
#
#   scripts/bench-files.sh BUILD_DIR OUT_DIR [CASE...]
#     CASE: raw h5 h5chunked inplace inplace-rect h5py   (8 GiB by default)
#           h5gzip h5zstd h5lz4                   compressed HDF5 (issue 11): 1 GiB f32 of
#                                                 gt-gen's smooth values in 512x512 chunks,
#                                                 shuffle + gzip level 4 / zstd 3 / lz4
#           h5chunk                               uncompressed 1024x1024 chunks, 4 GiB
#     (default: all)
#
# Each compressed case also measures, in the same run, the dataset's own
# codecs on its chunks in memory on 1 thread and on every core (gt-gen
# --bench-codecs): the target is an end-to-end rate of at least 75% of
# cores x one core's decode+encode rate, and it is compared with
# scripts/h5py_loop.py (same filters in and out) where h5py can read the
# input (zstd needs hdf5plugin's zstd filter). Where the time goes comes
# from the best run's report: its wall time (open to commit) and the
# seconds outside it (process start, CUDA start, exit), each stage's busy
# seconds, and the notes' store thread, chunk lookup and pool wait figures;
# the same case with the CPU engine runs once beside it (no CUDA start).
#
# Environment: GT_FILES_MIB (matrix size, default 8192), GT_FILES_CODEC_MIB
# (compressed cases, default 1024), GT_FILES_CHUNK_MIB (h5chunk, default
# 4096), GT_FILES_ENGINE (default cuda), GT_FILES_DIR (work
# folder on the disk being measured, default /tmp/gt-files), GT_FILES_REPS
# (timed runs of each side, default 2; the best of each side is compared),
# GT_FILES_BEFORE (another build folder whose in-place run is timed beside),
# GT_FILES_RECT (RxC: inplace-rect's shape instead of the 2:1 one of MIB),
# GT_FILES_COLD=1 (every file of the work folder dropped from the page cache
# before each timed command, cp's included: a file larger than RAM, or read
# for the first time; posix_fadvise DONTNEED after a sync, checked with
# fincore where it exists), GT_FILES_CPUS (a CPU list, e.g. 0-3: the CLI's runs and cp
# run under taskset on those CPUs, as on a machine of that many cores).
# Every output is verified with gt-gen. Results: OUT_DIR/files.json (one
# object per case) and files.log; each run's report as files-*.json.
set -u
B=$1
OUT=$2
shift 2
CASES=("$@")
[ ${#CASES[@]} -eq 0 ] && CASES=(raw h5 h5chunked inplace inplace-rect h5py h5gzip h5zstd h5lz4 h5chunk)
CLI=$B/gtranspose
GEN=$B/gt-gen
MIB=${GT_FILES_MIB:-8192}
ENGINE=${GT_FILES_ENGINE:-cuda}
REPS=${GT_FILES_REPS:-2}
W=${GT_FILES_DIR:-/tmp/gt-files}
# The h5py loop's Python: GT_PYTHON, else the first python3 that imports h5py
# (the GPU machine's is a venv's, first on the PATH; Debian's is /usr/bin's).
PY=${GT_PYTHON:-}
if [ -z "$PY" ]; then
  for cand in "$(command -v python3)" /usr/bin/python3; do
    if [ -x "$cand" ] && "$cand" -c 'import h5py' 2>/dev/null; then PY=$cand; break; fi
  done
  PY=${PY:-/usr/bin/python3}
fi
CODEC_MIB=${GT_FILES_CODEC_MIB:-1024}
CHUNK_MIB=${GT_FILES_CHUNK_MIB:-4096}
CORES=$(nproc)
COLD=${GT_FILES_COLD:-0}
CPUS=${GT_FILES_CPUS:-}
# The prefix of every timed command: taskset where GT_FILES_CPUS asks.
PIN=()
[ -n "$CPUS" ] && PIN=(taskset -c "$CPUS")
HERE=$(cd "$(dirname "$0")" && pwd)
LOG=$OUT/files.log
JSON=$OUT/files.json
rm -rf "$W" && mkdir -p "$W" "$OUT"
: >"$LOG"
echo "[" >"$JSON"
FIRST=1
{ echo "== $(date -u +%FT%TZ) files benchmark, $MIB MiB, work folder $W, cold ${COLD}, CPUs ${CPUS:-all}"; df -h "$W"; free -g; } >>"$LOG" 2>&1

now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.3f\", $(now) - $1}"; }
has() { local c; for c in "${CASES[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
minof() { printf '%s\n' "$@" | sort -g | head -1; }
csv() { local IFS=, s; s="$*"; echo "${s//nan/null}"; }  # a JSON list's items (a failed run: null)

# GT_FILES_COLD=1: every file of the work folder out of the page cache (its
# dirty pages written first), and what fincore still finds cached logged.
drop_cache() {
  [ "$COLD" = 1 ] || return 0
  sync
  "$PY" - "$W" <<'PYEOF'
import os, sys
for name in os.listdir(sys.argv[1]):
    p = os.path.join(sys.argv[1], name)
    if os.path.isfile(p) and not os.path.islink(p):
        fd = os.open(p, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
PYEOF
  command -v fincore >/dev/null && fincore "$W"/* >>"$LOG" 2>&1
  return 0
}

# cp + sync of FILE: seconds.
cp_sync() {
  sync
  drop_cache
  local t
  t=$(now)
  "${PIN[@]}" cp "$1" "$W/copy.bin" && sync
  since "$t"
  rm -f "$W/copy.bin"
  sync
}

# Runs the CLI (arguments after the label), then sync: seconds; the report goes to files-LABEL.json.
gt_run() {
  local label=$1
  shift
  sync
  drop_cache
  local t
  t=$(now)
  if ! "${PIN[@]}" "$CLI" "$@" --json "$OUT/files-$label.json" >>"$LOG" 2>&1; then
    echo "FAILED: $CLI $*" >>"$LOG"
    echo "nan"
    return
  fi
  sync
  since "$t"
}

emit() {  # case, ours (best), cp (best), extra json
  local ratio
  ratio=$(awk "BEGIN{ if ($3 > 0 && \"$2\" != \"nan\") printf \"%.3f\", $2 / $3; else print \"null\" }")
  [ $FIRST -eq 1 ] || echo "," >>"$JSON"
  FIRST=0
  printf '  {"case": "%s", "mib": %s, "cold": %s, "cpus": "%s", "seconds": %s, "cp_sync_seconds": %s, "ratio_to_cp_sync": %s%s}' \
    "$1" "$MIB" "$([ "$COLD" = 1 ] && echo true || echo false)" "${CPUS:-all}" "${2/nan/null}" "$3" "$ratio" "${4:-}" >>"$JSON"
  echo "RESULT $1: ${2} s vs cp+sync ${3} s -> ${ratio}x ${4:-}" | tee -a "$LOG"
}

# A rows x cols f32 matrix of MIB MiB (32768 rows when it is large enough).
ROWS=$(( MIB >= 4096 ? 32768 : 4096 ))
COLS=$((MIB * 1024 * 1024 / 4 / ROWS))
SHAPE=${ROWS}x${COLS}
TSHAPE=${COLS}x${ROWS}

if has raw; then
  "$GEN" "$W/in.raw" --shape "$SHAPE" --dtype f32 --seed 3 -q >>"$LOG" 2>&1
  cps=() ours=()
  for i in $(seq "$REPS"); do
    cps+=("$(cp_sync "$W/in.raw")")
    ours+=("$(gt_run raw-$ENGINE-$i "$W/in.raw" "$W/out.raw" --shape "$SHAPE" --dtype f32 --engine "$ENGINE" --force)")
  done
  ok=$("$GEN" --verify "$W/out.raw" --transposed --seed 3 --shape "$TSHAPE" --dtype f32 -q >>"$LOG" 2>&1 && echo true || echo false)
  cpu=$(gt_run raw-cpu "$W/in.raw" "$W/out.raw" --shape "$SHAPE" --dtype f32 --engine cpu --force)
  emit raw-$ENGINE "$(minof "${ours[@]}")" "$(minof "${cps[@]}")" ", \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")], \"cp_runs\": [$(csv "${cps[@]}")], \"cpu_engine_seconds\": $cpu"
  rm -f "$W/in.raw" "$W/out.raw"
fi

if has h5 || has h5chunked || has h5py; then
  "$GEN" "$W/in.h5" --shape "$SHAPE" --dtype f32 --seed 4 -q >>"$LOG" 2>&1
  if has h5; then
    cps=() ours=()
    for i in $(seq "$REPS"); do
      cps+=("$(cp_sync "$W/in.h5")")
      ours+=("$(gt_run h5-$ENGINE-$i "$W/in.h5" "$W/out.h5" --engine "$ENGINE" --force)")
    done
    ok=$("$GEN" --verify "$W/out.h5" --transposed --seed 4 -q >>"$LOG" 2>&1 && echo true || echo false)
    emit h5-contiguous-$ENGINE "$(minof "${ours[@]}")" "$(minof "${cps[@]}")" ", \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")]"
    rm -f "$W/out.h5"
  fi
  if has h5py; then
    cp_s=$(cp_sync "$W/in.h5")
    loop_s=$("$PY" "$HERE/h5py_loop.py" "$W/in.h5" "$W/loop.h5" 2>>"$LOG" || echo nan)
    ok=$("$GEN" --verify "$W/loop.h5" --transposed --seed 4 -q >>"$LOG" 2>&1 && echo true || echo false)
    rm -f "$W/loop.h5"
    ours=$(gt_run h5py-peer-$ENGINE "$W/in.h5" "$W/out.h5" --engine "$ENGINE" --force)
    speedup=$(awk "BEGIN{ if (\"$loop_s\" != \"nan\" && $ours > 0) printf \"%.2f\", $loop_s / $ours; else print \"null\" }")
    emit h5py-loop "$loop_s" "$cp_s" ", \"verified\": $ok, \"gtranspose_seconds\": $ours, \"gtranspose_speedup\": $speedup"
    rm -f "$W/out.h5"
  fi
  if has h5chunked; then
    "$PY" "$HERE/h5py_loop.py" --chunk "$W/in.h5" "$W/inc.h5" 1024 1024 >>"$LOG" 2>&1
    rm -f "$W/in.h5"
    cps=() ours=()
    for i in $(seq "$REPS"); do
      cps+=("$(cp_sync "$W/inc.h5")")
      ours+=("$(gt_run h5c-$ENGINE-$i "$W/inc.h5" "$W/out.h5" --engine "$ENGINE" --force)")
    done
    ok=$("$GEN" --verify "$W/out.h5" --transposed --seed 4 -q >>"$LOG" 2>&1 && echo true || echo false)
    emit h5-chunked-$ENGINE "$(minof "${ours[@]}")" "$(minof "${cps[@]}")" ", \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")]"
    rm -f "$W/out.h5" "$W/inc.h5"
  fi
  rm -f "$W/in.h5"
fi

# REPS runs of each, alternating: cp+sync of FILE, then the CLI on FILE and
# the rest of the arguments; fills the arrays cps and ours.
alternate() {
  local label=$1 file=$2 i
  shift 2
  cps=() ours=()
  for i in $(seq "$REPS"); do
    cps+=("$(cp_sync "$file")")
    ours+=("$(gt_run "$label-$i" "$file" "$@")")
  done
}

# A square-ish f32 matrix of $1 MiB: "ROWSxCOLS" (rows a multiple of 4096).
shape_of() {
  local rows=$(( $1 >= 1024 ? 16384 : 4096 ))
  echo "${rows}x$(($1 * 1024 * 1024 / 4 / rows))"
}
flip() { echo "${1#*x}x${1%x*}"; }
json_num() { sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p" <<<"$1" | head -1; }

# Where a run's time went, from its report (REPORT, its SECONDS end to end;
# CPU_REPORT and CPU_SECONDS the CPU engine's run): JSON fields to append.
breakdown() {
  "$PY" - "$@" <<'PYEOF' 2>>"$LOG" || echo ', "breakdown": null'
import json, re, sys
def one(path, secs):
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        return None
    notes = " | ".join(r.get("notes", []))
    num = lambda pat: float(re.search(pat, notes).group(1)) if re.search(pat, notes) else None
    return {"wall_s": round(r["wall_s"], 3),
            "outside_wall_s": round(float(secs) - r["wall_s"], 3) if secs not in ("nan", "") else None,
            "stages_s": {s["name"]: round(s["busy_s"], 3) for s in r["stages"]},
            "store_s": num(r"([0-9.]+) s in H5Dwrite_chunk"),
            "store_slot_wait_s": num(r"([0-9.]+) s of codec threads waiting for a store slot"),
            "find_chunks_s": num(r"([0-9.]+) s finding chunks"),
            "read_wait_s": num(r"([0-9.]+) s waiting for decoded tiles"),
            "write_wait_s": num(r"([0-9.]+) s waiting for threads to take the chunks")}
print(', "breakdown": ' + json.dumps(one(sys.argv[1], sys.argv[2])) +
      ', "cpu_engine_breakdown": ' + json.dumps(one(sys.argv[3], sys.argv[4])))
PYEOF
}

# A compressed HDF5 case: NAME FILTERS.
codec_case() {
  local name=$1 filters=$2 shape tshape mib=$CODEC_MIB
  shape=$(shape_of "$mib")
  tshape=$(flip "$shape")
  "$GEN" "$W/$name.h5" --shape "$shape" --dtype f32 --values smooth --chunk 512x512 --filters "$filters" --seed 6 -q \
    >>"$LOG" 2>&1 || { echo "FAILED: gt-gen $name" >>"$LOG"; return; }
  # The reference: the same chunks through the same codecs, in memory.
  local bench one all rows1 rowsn
  bench=$("$GEN" --bench-codecs "$W/$name.h5" 2>>"$LOG" | tee -a "$LOG" | sed -n 's/^JSON //p')
  rows1=$(sed 's/.*"rows": \[\({[^}]*}\).*/\1/' <<<"$bench")
  rowsn=$(sed 's/.*}, \({[^}]*}\)\]}.*/\1/' <<<"$bench")
  one=$(json_num "$rows1" both_mbps)
  all=$(json_num "$rowsn" both_mbps)
  local loop_s=null loop_ok=null
  alternate "$name-$ENGINE" "$W/$name.h5" "$W/out.h5" --engine "$ENGINE" --force
  ok=$("$GEN" --verify "$W/out.h5" --transposed --values smooth --seed 6 -q >>"$LOG" 2>&1 && echo true || echo false)
  rm -f "$W/out.h5"
  local cpu_s cpu_ok=false
  cpu_s=$(gt_run "$name-cpu-engine" "$W/$name.h5" "$W/out.h5" --engine cpu --force)
  "$GEN" --verify "$W/out.h5" --transposed --values smooth --seed 6 -q >>"$LOG" 2>&1 && cpu_ok=true
  rm -f "$W/out.h5"
  if loop_s=$("$PY" "$HERE/h5py_loop.py" "$W/$name.h5" "$W/loop.h5" 2>>"$LOG"); then
    loop_ok=$("$GEN" --verify "$W/loop.h5" --transposed --values smooth --seed 6 -q >>"$LOG" 2>&1 && echo true || echo false)
  else
    loop_s=null
    echo "h5py loop cannot run $name (its filter is not available to h5py here)" >>"$LOG"
  fi
  rm -f "$W/loop.h5"
  local best mbps target speedup where i k=1
  best=$(minof "${ours[@]}")
  for i in "${!ours[@]}"; do [ "${ours[$i]}" = "$best" ] && k=$((i + 1)); done
  where=$(breakdown "$OUT/files-$name-$ENGINE-$k.json" "$best" "$OUT/files-$name-cpu-engine.json" "$cpu_s")
  mbps=$(awk "BEGIN{ if (\"$best\" != \"nan\") printf \"%.1f\", $mib * 1.048576 / $best; else print \"null\" }")
  target=$(awk "BEGIN{ printf \"%.1f\", 0.75 * $CORES * ${one:-0} }")
  speedup=$(awk "BEGIN{ if (\"$loop_s\" != \"null\" && \"$best\" != \"nan\") printf \"%.2f\", $loop_s / $best; else print \"null\" }")
  emit "$name-$ENGINE" "$best" "$(minof "${cps[@]}")" ", \"mib_case\": $mib, \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")], \"mbps\": $mbps, \"cores\": $CORES, \"codec_one_core_mbps\": ${one:-null}, \"codec_all_cores_mbps\": ${all:-null}, \"target_mbps\": $target, \"h5py_loop_seconds\": $loop_s, \"h5py_loop_verified\": $loop_ok, \"speedup_vs_h5py_loop\": $speedup, \"cpu_engine_seconds\": ${cpu_s/nan/null}, \"cpu_engine_verified\": $cpu_ok$where"
  rm -f "$W/$name.h5"
}

has h5gzip && codec_case h5gzip shuffle,gzip=4
has h5zstd && codec_case h5zstd shuffle,zstd=3
has h5lz4 && codec_case h5lz4 shuffle,lz4

if has h5chunk; then
  shape=$(shape_of "$CHUNK_MIB")
  "$GEN" "$W/ch.h5" --shape "$shape" --dtype f32 --chunk 1024x1024 --seed 8 -q >>"$LOG" 2>&1
  alternate "h5chunk-$ENGINE" "$W/ch.h5" "$W/out.h5" --engine "$ENGINE" --force
  ok=$("$GEN" --verify "$W/out.h5" --transposed --seed 8 -q >>"$LOG" 2>&1 && echo true || echo false)
  emit h5-chunked-uncompressed-$ENGINE "$(minof "${ours[@]}")" "$(minof "${cps[@]}")" ", \"mib_case\": $CHUNK_MIB, \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")], \"cp_runs\": [$(csv "${cps[@]}")]"
  rm -f "$W/out.h5" "$W/ch.h5"
fi

# A journaled run's report (files-LABEL.json) as JSON ', "KEY": {...}': the
# journal's bytes, syncs and flushes and the seconds of each stage.
journal_of() {
  "$PY" - "$1" "$2" <<'PYEOF' 2>>"$LOG" || echo ", \"$2\": null"
import json, re, sys
r = json.load(open(sys.argv[1]))
st = {s["name"]: s for s in r["stages"]}
note = next((n for n in r["notes"] if n.startswith("journal:")), "")
num = lambda pat: int(re.search(pat, note).group(1)) if re.search(pat, note) else None
j = {"bytes": st.get("journal", {}).get("bytes"), "journal_syncs": num(r"(\d+) journal syncs"),
     "matrix_flushes": num(r"(\d+) matrix flushes"),
     "stages_s": {k: round(v["busy_s"], 3) for k, v in st.items()}, "wall_s": round(r["wall_s"], 3)}
print(', "%s": ' % sys.argv[2] + json.dumps(j))
PYEOF
}

if has inplace; then
  # The largest multiple of 64 whose square of f32 fits MIB MiB. In place is
  # timed beside cp + sync and beside the same matrix out of place (the
  # /dev/shm target compares with that), each repetition alternating, and
  # GT_FILES_BEFORE=BUILD_DIR adds another build's in-place run (before and
  # after, same run). The journal's bytes, syncs and flushes and the time of
  # each of its stages come from the run's report.
  N=$(awk "BEGIN{ n = int(sqrt($MIB * 1048576 / 4) / 64) * 64; print n }")
  "$GEN" "$W/sq.raw" --shape "${N}x${N}" --dtype f32 --seed 5 -q >>"$LOG" 2>&1
  SQ=(--shape "${N}x${N}" --dtype f32)
  cps=() ours=() oop=() before=()
  for i in $(seq "$REPS"); do
    cps+=("$(cp_sync "$W/sq.raw")")
    ours+=("$(gt_run inplace-$ENGINE-$i "$W/sq.raw" --in-place "${SQ[@]}" --engine "$ENGINE")")
    oop+=("$(gt_run outofplace-$ENGINE-$i "$W/sq.raw" "$W/sqT.raw" "${SQ[@]}" --engine "$ENGINE" --force)")
    rm -f "$W/sqT.raw"
    if [ -n "${GT_FILES_BEFORE:-}" ]; then
      before+=("$(CLI=$GT_FILES_BEFORE/gtranspose gt_run inplace-before-$i "$W/sq.raw" --in-place "${SQ[@]}" --engine "$ENGINE")")
    fi
  done
  # Each in-place run transposes the file: an odd number of them leaves the transpose.
  runs=$(( REPS + ${#before[@]} ))
  tflag=$([ $(( runs % 2 )) -eq 1 ] && echo --transposed || true)
  ok=$("$GEN" --verify "$W/sq.raw" $tflag --seed 5 "${SQ[@]}" -q >>"$LOG" 2>&1 && echo true || echo false)
  cpu=$(gt_run inplace-cpu "$W/sq.raw" --in-place "${SQ[@]}" --engine cpu)
  # The same with 256 MiB tiles (8192^2 f32, the CPU engine's size; the
  # streaming engine's staged default is 64 MiB).
  big=$(gt_run inplace-$ENGINE-256m "$W/sq.raw" --in-place "${SQ[@]}" --engine "$ENGINE" --tile 64M)
  journal=$(journal_of "$OUT/files-inplace-$ENGINE-1.json" journal)
  [ -n "${GT_FILES_BEFORE:-}" ] && journal+=$(journal_of "$OUT/files-inplace-before-1.json" before_journal)
  extra=""
  [ ${#before[@]} -gt 0 ] && extra=", \"before_seconds\": $(minof "${before[@]}"), \"before_runs\": [$(csv "${before[@]}")]"
  best_oop=$(minof "${oop[@]}")
  best=$(minof "${ours[@]}")
  vs_oop=$(awk "BEGIN{ if ($best_oop > 0) printf \"%.3f\", $best / $best_oop; else print \"null\" }")
  emit inplace-$ENGINE "$best" "$(minof "${cps[@]}")" ", \"n\": $N, \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")], \"cp_runs\": [$(csv "${cps[@]}")], \"out_of_place_seconds\": $best_oop, \"out_of_place_runs\": [$(csv "${oop[@]}")], \"ratio_to_out_of_place\": $vs_oop$extra, \"cpu_engine_seconds\": $cpu, \"tiles_256m_seconds\": $big$journal"
  rm -f "$W/sq.raw"
fi

if has inplace-rect; then
  # A 2:1 rectangle in place (R = 2C: two square blocks, then the rows
  # permuted), beside cp + sync and the same matrix out of place; the target
  # is 2.5x cp + sync. GT_FILES_BEFORE=BUILD_DIR adds another build's
  # in-place run. Each in-place run leaves the transpose: the shape the file
  # holds is tracked, and the file verified against it at the end.
  C=$(awk "BEGIN{ n = int(sqrt($MIB * 1048576 / 8) / 64) * 64; print n }")
  R=$((2 * C))
  # GT_FILES_RECT=RxC measures another rectangle instead (a grid, say).
  if [ -n "${GT_FILES_RECT:-}" ]; then R=${GT_FILES_RECT%x*}; C=${GT_FILES_RECT#*x}; fi
  "$GEN" "$W/rect.raw" --shape "${R}x${C}" --dtype f32 --seed 6 -q >>"$LOG" 2>&1
  cps=() ours=() oop=() before=()
  flips=0
  shape_now() { [ $(( flips % 2 )) -eq 0 ] && echo "${R}x${C}" || echo "${C}x${R}"; }
  for i in $(seq "$REPS"); do
    cps+=("$(cp_sync "$W/rect.raw")")
    ours+=("$(gt_run inplace-rect-$ENGINE-$i "$W/rect.raw" --in-place --shape "$(shape_now)" --dtype f32 --engine "$ENGINE")")
    flips=$((flips + 1))
    oop+=("$(gt_run outofplace-rect-$ENGINE-$i "$W/rect.raw" "$W/rectT.raw" --shape "$(shape_now)" --dtype f32 --engine "$ENGINE" --force)")
    rm -f "$W/rectT.raw"
    if [ -n "${GT_FILES_BEFORE:-}" ]; then
      before+=("$(CLI=$GT_FILES_BEFORE/gtranspose gt_run inplace-rect-before-$i "$W/rect.raw" --in-place --shape "$(shape_now)" --dtype f32 --engine "$ENGINE")")
      flips=$((flips + 1))
    fi
  done
  if [ $(( flips % 2 )) -eq 1 ]; then
    ok=$("$GEN" --verify "$W/rect.raw" --transposed --seed 6 --shape "${C}x${R}" --dtype f32 -q >>"$LOG" 2>&1 && echo true || echo false)
  else
    ok=$("$GEN" --verify "$W/rect.raw" --seed 6 --shape "${R}x${C}" --dtype f32 -q >>"$LOG" 2>&1 && echo true || echo false)
  fi
  journal=$(journal_of "$OUT/files-inplace-rect-$ENGINE-1.json" journal)
  extra=""
  if [ ${#before[@]} -gt 0 ]; then
    extra=", \"before_seconds\": $(minof "${before[@]}"), \"before_runs\": [$(csv "${before[@]}")]"
    journal+=$(journal_of "$OUT/files-inplace-rect-before-1.json" before_journal)
  fi
  emit inplace-rect-$ENGINE "$(minof "${ours[@]}")" "$(minof "${cps[@]}")" ", \"shape\": \"${R}x${C}\", \"verified\": $ok, \"runs\": [$(csv "${ours[@]}")], \"cp_runs\": [$(csv "${cps[@]}")], \"out_of_place_seconds\": $(minof "${oop[@]}"), \"out_of_place_runs\": [$(csv "${oop[@]}")]$extra$journal"
  rm -f "$W/rect.raw"
fi

echo "" >>"$JSON"
echo "]" >>"$JSON"
rm -rf "$W"
