#!/usr/bin/env bash
# Run 154: narrow and wide shapes whose packed side's rows are not 16-byte aligned.
set -u
mkdir -p "$OUT"
bash scripts/gpu-check.sh build > "$OUT/check.txt" 2>&1
T=/tmp/b/tests/gt_device_tests
GT_TUNE_SHAPES=50000001x3,50000003x3,30000001x5,18750001x8,21428577x7,3x50000001,8x18750001,7x21428577 \
GT_TUNE_VARIANTS=1 GT_TUNE_VARIANT_MATCH=no-narrow GT_TUNE_REPS=20 \
  $T --gtest_also_run_disabled_tests --gtest_filter='DISABLED_Tune.Rect' > "$OUT/tune.log" 2>&1
echo "tune rc $?" >> "$OUT/check.txt"
for d in f32 u8 f64; do /tmp/b/gtranspose --bench --dtype $d --shape 50000001x3 --kernel padded > "$OUT/bench-$d.txt" 2>&1; done
for s in 50000000x3 18750000x8 3x50000000 8x18750000 18750001x8 3x50000001; do /tmp/b/gtranspose --bench --dtype f32 --shape $s --kernel padded > "$OUT/bench-f32-$s.txt" 2>&1; done
for s in 18750000x8 8x18750000; do /tmp/b/gtranspose --bench --dtype u8 --shape $s --kernel padded > "$OUT/bench-u8-$s.txt" 2>&1; done
cd "$OUT" && tar czf benches.tar.gz bench-*.txt && rm bench-*.txt
