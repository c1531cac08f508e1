#!/bin/bash
set -u
mkdir -p $OUT/g
OUT=$OUT/g scripts/gpu-check.sh build tests > $OUT/g/summary.txt 2>&1
tail -3 $OUT/g/summary.txt
grep -E "^\[  FAILED" $OUT/g/tests.log | head -20
/tmp/b/gtranspose --bench --kernel padded --dtype i8 --shape 16383x65537 2>&1 | grep -E "^padded"
cd $OUT && tar czf g.tgz g && rm -rf g
