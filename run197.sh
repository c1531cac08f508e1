#!/usr/bin/env bash
# Run 197 (issue 15): skew tiles whose store side reads a transposed second shared tile (T2):
# the misaligned-row device tests on every variant, then the tuning harness in and out of place.
export GT_BUILD_DIR=/tmp/b
B=/tmp/b
t0=$(date +%s)
scripts/gpu-check.sh build > $OUT/summary.txt 2>&1
echo "build $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
$B/tests/gt_device_tests --gtest_brief=1 --gtest_filter='*Misaligned*:*InplaceTiled*:*Inplace*' > $OUT/mis.log 2>&1
echo "tests rc $? $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
tail -3 $OUT/mis.log >> $OUT/summary.txt
GT_TUNE_VARIANTS=1 GT_TUNE_SIZES=1,2 GT_TUNE_SHAPES=12345x6789,16383x16385,16383x32769 GT_TUNE_REPS=20 \
  GT_TUNE_VARIANT_MATCH='misaligned-skew|misaligned-lanes' GT_TUNE_FILTER='DISABLED_Tune.Rect' \
  $B/tests/gt_device_tests --gtest_also_run_disabled_tests --gtest_filter='DISABLED_Tune.Rect' > $OUT/tune-rect.log 2>&1
echo "tune rect $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
GT_TUNE_SIZES=1,2 GT_TUNE_VARIANT_MATCH='mis-skew|mis-tiles' GT_TUNE_REPS=20 \
  $B/tests/gt_device_tests --gtest_also_run_disabled_tests --gtest_filter='DISABLED_Tune.Inplace' > $OUT/tune-inplace.log 2>&1
echo "tune inplace $(( $(date +%s) - t0 )) s" >> $OUT/summary.txt
grep -h "^TUNE" $OUT/tune-rect.log $OUT/tune-inplace.log >> $OUT/summary.txt
cd $OUT && tar czf logs.tgz *.log && rm -f *.log
cat summary.txt | head -150
