#!/bin/bash
# The bash completion (tool/completion/gtranspose.bash), sourced into bash
# and asked as bash asks it: options, option values, files, and
# FILE.h5:/dataset for the 2-D datasets only.
# Usage: completion_test.sh GTRANSPOSE GT-GEN COMPLETION-SCRIPT
set -uo pipefail
GT=$(realpath "$1") GEN=$(realpath "$2") COMP=$(realpath "$3")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
"$GEN" m.h5:/a --shape 4x3 -q || exit 1
"$GEN" raw.bin --shape 4x3 -q || exit 1
# A second 2-D dataset in a group, a 1-D one and a 3-D one, which are no matrices.
py=""
for p in python3 /usr/bin/python3; do "$p" -c "import h5py" 2>/dev/null && { py=$p; break; }; done
[ -n "$py" ] || { echo "FAIL: no python3 with h5py (scripts/setup.sh installs python3-h5py)"; exit 1; }
"$py" - <<'PY' || exit 1
import h5py, numpy as np
with h5py.File("m.h5", "a") as f:
    f.create_dataset("g/b", data=np.zeros((2, 5), "f4"))
    f.create_dataset("v", data=np.zeros(7, "f4"))
    f.create_dataset("cube", data=np.zeros((2, 2, 2), "u1"))
PY
# shellcheck source=/dev/null
source "$COMP"
failures=0

# Splits a command line as bash does for completion (blanks, and ':' a word
# of its own while COMP_WORDBREAKS holds it), runs the completion at its end,
# and leaves the candidates in COMPREPLY.
ask() {
  COMP_LINE="$1"
  COMP_POINT=${#COMP_LINE}
  COMP_WORDBREAKS=${COMP_WORDBREAKS:-$' \t\n"'"'"'><=;|&(:'}
  COMP_WORDS=()
  local w part
  for w in $1; do
    while [[ $w == *:* ]]; do
      part=${w%%:*}
      [[ -n $part ]] && COMP_WORDS+=("$part")
      COMP_WORDS+=(":")
      w=${w#*:}
    done
    [[ -n $w ]] && COMP_WORDS+=("$w")
  done
  [[ $1 == *[[:blank:]] ]] && COMP_WORDS+=("")
  COMP_WORDS[0]=$GT
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _gtranspose 2>/dev/null
}

# expect LINE WORD...: every WORD among the candidates; "!WORD": not among them.
expect() {
  local line=$1 w got
  shift
  ask "$line"
  got=$(printf '%s\n' "${COMPREPLY[@]}")
  for w in "$@"; do
    if [[ $w == !* ]]; then
      if grep -qxF -- "${w#!}" <<<"$got"; then echo "FAIL: '$line' offers ${w#!}: $got" | tr '\n' ' '; echo; failures=$((failures + 1)); fi
    elif ! grep -qxF -- "$w" <<<"$got"; then
      echo "FAIL: '$line' does not offer $w; it offers: $(tr '\n' ' ' <<<"$got")"
      failures=$((failures + 1))
    fi
  done
}

expect "gtranspose --host" --host-mem --host-modes '!--device-mem'
expect "gtranspose --dry" --dry-run
expect "gtranspose --ver" --version
expect "gtranspose --engine c" cpu cuda '!auto'
expect "gtranspose --format " raw npy hdf5
expect "gtranspose --dtype f" f16 f32 f64 '!i8'
expect "gtranspose --host-mem " '!m.h5'
# Datasets after FILE: bash replaces what follows the ':', so the candidates
# are dataset paths; 2-D only.
expect "gtranspose m.h5:" /a /g/b '!/v' '!/cube'
expect "gtranspose m.h5:/g" /g/b '!/a'
expect "gtranspose in.raw out.h5 --force m.h5:/" /a /g/b
# A bare HDF5 file offers its datasets too, and files as ever.
expect "gtranspose m." m.h5
expect "gtranspose m.h5" m.h5 m.h5:/a m.h5:/g/b
expect "gtranspose ra" raw.bin
expect "gtranspose raw.bin:" '!/a'
# With ':' not a word break (a user's setting), whole words.
COMP_WORDBREAKS=$' \t\n"'"'"'><=;|&('
expect "gtranspose m.h5:/g" m.h5:/g/b
if [ "$failures" -gt 0 ]; then echo "$failures completion checks failed"; exit 1; fi
echo "bash completion: all checks passed"
