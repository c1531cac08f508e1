#!/usr/bin/env bash
# The bench sweep of issue 4: for each element size, `gtranspose --bench --sweep`
# (square sizes 2^8..2^15 per side, every kernel and peer, plus the block-shape
# sweep at a 1 GiB matrix with 16384 rows), then SVG plots of GB/s against size.
#
# usage: scripts/sweep.sh OUTDIR [DTYPE ...]
#   DTYPE defaults to one type per element size: i8 f16 f32 f64 c128.
# environment:
#   GTRANSPOSE  the binary (default: build/gtranspose beside this script's repo)
#   BENCH_ARGS  extra --bench arguments, e.g. "--reps 20 --kernel padded"
#   SHAPE       the block-sweep matrix (default: 16384 rows, 1 GiB for the dtype)
# Writes OUTDIR/bench_<dtype>.json and .txt (the table), and the plots
# OUTDIR/bench_size_<dtype>.svg and bench_blocks_<dtype>.svg.
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  [ $# -ge 1 ] && exit 0 || exit 2
fi
out=$1
shift
dtypes=("$@")
[ ${#dtypes[@]} -gt 0 ] || dtypes=(i8 f16 f32 f64 c128)

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${GTRANSPOSE:-$root/build/gtranspose}
[ -x "$bin" ] || { echo "sweep.sh: no gtranspose at $bin (build first, or set GTRANSPOSE)" >&2; exit 1; }
mkdir -p "$out"

# 1 GiB with 16384 rows, as in ../shared/ANCHORS.md.
default_shape() {
  case "$1" in
    i8|u8) echo 16384x65536 ;;
    i16|u16|f16|bf16) echo 16384x32768 ;;
    i32|u32|f32) echo 16384x16384 ;;
    i64|u64|f64|c64) echo 16384x8192 ;;
    c128) echo 16384x4096 ;;
    *) echo "sweep.sh: unknown dtype '$1'" >&2; exit 2 ;;
  esac
}

status=0
jsons=()
for t in "${dtypes[@]}"; do
  shape=${SHAPE:-$(default_shape "$t")}
  echo "== $t ($shape): $bin --bench --sweep --dtype $t --shape $shape ${BENCH_ARGS:-}" >&2
  # A failed verification makes gtranspose exit 1 but still write the JSON:
  # keep going, plot what came back, and report the failure at the end.
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of words on purpose
  if ! "$bin" --bench --sweep --dtype "$t" --shape "$shape" ${BENCH_ARGS:-} --json "$out/bench_$t.json" \
      >"$out/bench_$t.txt"; then
    echo "sweep.sh: gtranspose --bench failed for $t (see $out/bench_$t.txt)" >&2
    status=1
  fi
  [ -s "$out/bench_$t.json" ] && jsons+=("$out/bench_$t.json")
done

if [ ${#jsons[@]} -gt 0 ]; then
  python3 "$root/scripts/plot_bench.py" -o "$out" "${jsons[@]}"
fi
exit $status
