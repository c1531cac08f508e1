#!/usr/bin/env bash
# Issue 14's targets: one rank against two ranks (`mpirun -n 1|2
# gtranspose`, one GPU per rank), each case beside its reference measured in
# the same run, every output verified with gt-gen.
#
#   scripts/bench-mpi.sh BUILD_DIR OUT_DIR [CASE...]
#     host   host memory to host memory: `mpirun -n N gtranspose --bench-host`
#            (pinned), every rank on its GPU at once; beside the link's
#            H2D+D2H-at-once rate the same ranks measure in the same run.
#            Target: two ranks >= 72 GB/s (90% of the 80.6 GB/s both GPUs
#            move at once), against one rank's figure.
#     gzip   compressed HDF5: gt-gen's smooth f32 in 512x512 chunks, shuffle +
#            gzip 4, file to file on the disk folder, beside cp+sync of the
#            input. Target: two ranks >= 1.8x one rank.
#     shm    raw f32 file to file on /dev/shm, beside cp of the same file
#            (tmpfs: no sync to wait for). Target: report the scaling and
#            what limits it (each rank's stage times are in its JSON).
#     disk   the same on the disk folder, beside cp+sync.
#   (default: host gzip shm disk)
#
# Environment: GT_MPI_MIB (raw cases, default 8192), GT_MPI_CODEC_MIB (gzip,
# default 2048), GT_MPI_HOST_SHAPE (host, default 32768x32768: 4 GiB f32
# per rank), GT_MPI_ENGINE (default cuda), GT_MPI_DIR (disk folder, default
# /tmp/gt-mpi), GT_MPI_SHM (default /dev/shm/gt-mpi), GT_MPI_REPS (timed runs
# of each side, default 2; the best of each is compared), GT_MPIRUN
# (default mpirun), GT_MPIRUN_FLAGS (default: --bind-to none, which Open
# MPI needs, or it binds each of 2 ranks to one core; --allow-run-as-root
# as root). Results: OUT_DIR/mpi.json (one object per case), mpi.log, and
# every run's report as mpi-*.json (per-rank stage times, the slowest rank).
set -u
B=$1
OUT=$2
shift 2
CASES=("$@")
[ ${#CASES[@]} -eq 0 ] && CASES=(host gzip shm disk)
CLI=$(cd "$B" && pwd)/gtranspose
GEN=$(cd "$B" && pwd)/gt-gen
MIB=${GT_MPI_MIB:-8192}
CODEC_MIB=${GT_MPI_CODEC_MIB:-2048}
HOST_SHAPE=${GT_MPI_HOST_SHAPE:-32768x32768}
ENGINE=${GT_MPI_ENGINE:-cuda}
REPS=${GT_MPI_REPS:-2}
W=${GT_MPI_DIR:-/tmp/gt-mpi}
SHM=${GT_MPI_SHM:-/dev/shm/gt-mpi}
MPIRUN=${GT_MPIRUN:-mpirun}
FLAGS=${GT_MPIRUN_FLAGS:---bind-to none}
[ "$(id -u)" = 0 ] && FLAGS="$FLAGS --allow-run-as-root"
PY=${GT_PYTHON:-python3}
LOG=$OUT/mpi.log
JSON=$OUT/mpi.json
rm -rf "$W" "$SHM" && mkdir -p "$W" "$SHM" "$OUT"
: >"$LOG"
echo "[" >"$JSON"
FIRST=1
{
  echo "== $(date -u +%FT%TZ) MPI benchmark: cases ${CASES[*]}, engine $ENGINE, $(nproc) cores"
  "$MPIRUN" --version | head -1
  nvidia-smi -L 2>/dev/null
  df -h "$W" "$SHM"
  free -g
} >>"$LOG" 2>&1

now() { date +%s.%N; }
since() { awk "BEGIN{printf \"%.3f\", $(now) - $1}"; }
has() { local c; for c in "${CASES[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
minof() { printf '%s\n' "$@" | sort -g | head -1; }
ratio() { awk "BEGIN{ if (\"$1\" != \"nan\" && \"$2\" != \"nan\" && $2 > 0) printf \"%.3f\", $1 / $2; else print \"null\" }"; }
json_get() {  # file, python expression over `j`
  "$PY" -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1" 2>>"$LOG" || echo null
}

# cp (+ sync on a disk) of FILE into its folder: seconds.
copy_time() {
  local dir
  dir=$(dirname "$1")
  sync
  local t
  t=$(now)
  cp "$1" "$dir/copy.bin" && sync
  since "$t"
  rm -f "$dir/copy.bin"
  sync
}

# N ranks of the CLI (arguments after N and the label), then sync: seconds;
# the report goes to mpi-LABEL.json.
ranks_run() {
  local n=$1 label=$2
  shift 2
  sync
  local t
  t=$(now)
  # shellcheck disable=SC2086
  if ! "$MPIRUN" -n "$n" $FLAGS "$CLI" "$@" --json "$OUT/mpi-$label.json" -q >>"$LOG" 2>&1; then
    echo "FAILED: $MPIRUN -n $n $FLAGS $CLI $*" >>"$LOG"
    echo nan
    return
  fi
  sync
  since "$t"
}

emit() {  # case, json fields, summary line
  [ $FIRST -eq 1 ] || echo "," >>"$JSON"
  FIRST=0
  printf '  {"case": "%s"%s}' "$1" "$2" >>"$JSON"
  echo "RESULT $1: $3" | tee -a "$LOG"
}

# One file case: the input at IN (made by the caller), verified outputs,
# REPS alternating rounds of copy, one rank, two ranks.
file_case() {  # name, input, output, target text, verify args..., -- , gtranspose args...
  local name=$1 in=$2 out=$3 target=$4
  shift 4
  local vargs=()
  while [ "$1" != "--" ]; do vargs+=("$1"); shift; done
  shift
  local cps=() ones=() twos=() one_walls=() two_walls=() verified=true
  for i in $(seq "$REPS"); do
    cps+=("$(copy_time "$in")")
    ones+=("$(ranks_run 1 "$name-1rank-$i" "$in" "$out" "$@" --engine "$ENGINE" --force)")
    one_walls+=("$(json_get "$OUT/mpi-$name-1rank-$i.json" "j['wall_s']")")
    "$GEN" --verify "$out" --transposed "${vargs[@]}" -q >>"$LOG" 2>&1 || verified=false
    rm -f "$out"
    twos+=("$(ranks_run 2 "$name-2ranks-$i" "$in" "$out" "$@" --engine "$ENGINE" --force)")
    two_walls+=("$(json_get "$OUT/mpi-$name-2ranks-$i.json" "j['wall_s']")")
    "$GEN" --verify "$out" --transposed "${vargs[@]}" -q >>"$LOG" 2>&1 || verified=false
    rm -f "$out"
  done
  local cp one two bytes
  cp=$(minof "${cps[@]}")
  one=$(minof "${ones[@]}")
  two=$(minof "${twos[@]}")
  bytes=$(stat -c %s "$in")
  # Scaling from the runs' own wall times (open to commit), which leave out
  # mpirun's start (a second or two, the same for both); the outside times
  # (start included) stand beside the copy.
  local scaling slow limits one_wall two_wall
  one_wall=$(minof "${one_walls[@]/null/nan}")
  two_wall=$(minof "${two_walls[@]/null/nan}")
  scaling=$(ratio "$one_wall" "$two_wall")
  slow=$(json_get "$OUT/mpi-$name-2ranks-$REPS.json" "j.get('slowest_rank')")
  # What limits two ranks: the slowest rank's busiest stages, as it reported them.
  limits=$(json_get "$OUT/mpi-$name-2ranks-$REPS.json" \
    "'; '.join('rank %d: '%r['rank'] + ', '.join('%s %.2f s'%(s['name'], s['busy_s']) for s in r['stages']) for r in j['ranks'])")
  emit "$name" ", \"mib\": $((bytes >> 20)), \"engine\": \"$ENGINE\", \"copy_seconds\": $cp, \"one_rank_seconds\": ${one/nan/null}, \"two_ranks_seconds\": ${two/nan/null}, \"one_rank_job_seconds\": ${one_wall/nan/null}, \"two_ranks_job_seconds\": ${two_wall/nan/null}, \"scaling\": $scaling, \"one_rank_rate_vs_copy\": $(ratio "$cp" "$one"), \"two_ranks_rate_vs_copy\": $(ratio "$cp" "$two"), \"verified\": $verified, \"slowest_rank\": $slow, \"ranks_stages\": \"$limits\", \"target\": \"$target\", \"runs\": {\"copy\": [$(IFS=,; echo "${cps[*]}")], \"one\": [$(IFS=,; echo "${ones[*]}")], \"two\": [$(IFS=,; echo "${twos[*]}")]}" \
    "copy $cp s, 1 rank $one s (job $one_wall s), 2 ranks $two s (job $two_wall s): scaling ${scaling}x (target: $target); verified $verified; $limits"
}

# A rows x cols f32 matrix of MIB MiB.
shape_of() {  # MiB -> ROWSxCOLS
  local rows=$(( $1 >= 4096 ? 32768 : 4096 ))
  echo "${rows}x$(( $1 * 1024 * 1024 / 4 / rows ))"
}

if has host; then
  ones=() twos=()
  for i in $(seq "$REPS"); do
    ranks_run 1 "host-1rank-$i" --bench-host --shape "$HOST_SHAPE" --dtype f32 --host-modes pinned >/dev/null
    ranks_run 2 "host-2ranks-$i" --bench-host --shape "$HOST_SHAPE" --dtype f32 --host-modes pinned >/dev/null
  done
  best() {  # label prefix, row name: the best run's GB/s
    local v=() f
    for f in "$OUT"/mpi-"$1"-*.json; do v+=("$(json_get "$f" "[r['gbps'] for r in j['rows'] if r['name']=='$2'][0]")"); done
    printf '%s\n' "${v[@]}" | grep -v null | sort -g | tail -1
  }
  one=$(best host-1rank "stream pinned")
  one_link=$(best host-1rank "h2d+d2h at once")
  two=$(best host-2ranks "all 2 ranks: stream pinned")
  two_link=$(best host-2ranks "all 2 ranks: h2d+d2h at once")
  overlap=$(json_get "$OUT/mpi-host-2ranks-$REPS.json" "[r['note'] for r in j['rows'] if r['name']=='all 2 ranks: stream pinned'][0]")
  pass=$(awk "BEGIN{ print (\"$two\" != \"\" && $two >= 72) ? \"true\" : \"false\" }")
  emit host ", \"shape\": \"$HOST_SHAPE\", \"one_rank_gbps\": ${one:-null}, \"one_rank_link_gbps\": ${one_link:-null}, \"two_ranks_gbps\": ${two:-null}, \"two_ranks_link_gbps\": ${two_link:-null}, \"scaling\": $(ratio "${two:-nan}" "${one:-nan}"), \"two_ranks_pct_of_link\": $(ratio "${two:-nan}" "${two_link:-nan}"), \"target_gbps\": 72, \"pass\": $pass, \"overlap_note\": \"$overlap\"" \
    "1 rank ${one} GB/s (link ${one_link}), 2 ranks ${two} GB/s (link ${two_link}); target >= 72 GB/s: $pass ($overlap)"
fi

if has gzip; then
  shape=$(shape_of "$CODEC_MIB")
  "$GEN" "$W/in.h5" --shape "$shape" --dtype f32 --seed 5 --values smooth --chunk 512x512 --filters shuffle,gzip=4 -q >>"$LOG" 2>&1
  file_case gzip-hdf5 "$W/in.h5" "$W/out.h5" ">= 1.8x one rank" --seed 5 --values smooth --
  rm -f "$W/in.h5"
fi

for where in shm disk; do
  has $where || continue
  dir=$([ $where = shm ] && echo "$SHM" || echo "$W")
  shape=$(shape_of "$MIB")
  rows=${shape%x*} cols=${shape#*x}
  "$GEN" "$dir/in.raw" --shape "$shape" --dtype f32 --seed 3 -q >>"$LOG" 2>&1
  file_case raw-$where "$dir/in.raw" "$dir/out.raw" "report the scaling and what limits it" \
    --seed 3 --shape "${cols}x${rows}" --dtype f32 -- --shape "$shape" --dtype f32
  rm -f "$dir/in.raw"
done

echo "" >>"$JSON"
echo "]" >>"$JSON"
rm -rf "$W" "$SHM"
echo "done: $JSON"
