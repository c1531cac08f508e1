#!/bin/bash
# The progress bar under a real pseudo-terminal (tmux): at 40, 80 and 200
# columns a run long enough for many redraws (GT_TEST_PROGRESS_DELAY_MS
# slows each update) must show exactly one bar line that fits the width,
# with its ETA and rate, never wrap or leave debris, and be gone when the
# run ends; with stderr not a terminal nothing is drawn at all.
# Usage: progress_tmux.sh GTRANSPOSE GT-GEN. Exit 77 (skipped) only when
# tmux is missing (scripts/setup.sh installs it).
set -euo pipefail
GT=$(realpath "$1") GEN=$(realpath "$2")
if ! command -v tmux >/dev/null; then
  echo "SKIPPED: tmux is not installed (apt-get install tmux; scripts/setup.sh installs it)"
  exit 77
fi
dir=$(mktemp -d)
sock=""
cleanup() { [ -z "$sock" ] || tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -n "${pane:-}" ] && printf '%s\n' "--- pane:" "$pane" "---"; exit 1; }

"$GEN" "$dir/in.raw" --shape 2048x2048 --dtype f32 -q
# 128 tiles, each update waits 30 ms: a few seconds, the bar from the first second on.
cat >"$dir/r" <<EOS
#!/bin/bash
GT_TEST_PROGRESS_DELAY_MS=30 "$GT" in.raw o.raw --shape 2048x2048 --dtype f32 --engine cpu --tile 32K -f "\$@" >/dev/null
echo "END \$?"
EOS
chmod +x "$dir/r"

# Nothing drawn when stderr is not a terminal (here: a file).
(cd "$dir" && ./r 2>"$dir/err.txt" >/dev/null)
[ ! -s "$dir/err.txt" ] || fail "stderr not a terminal, yet it got: $(od -c "$dir/err.txt" | head -3)"

for width in 40 80 200; do
  # A server of its own per width: a new session on a server still shutting
  # down can find it gone.
  [ -z "$sock" ] || tmux -L "$sock" kill-server 2>/dev/null || true
  sock="gt-progress-$$-$width"
  tmux -L "$sock" -f /dev/null new-session -d -s t -x "$width" -y 12 -c "$dir" "env PS1='$ ' bash --norc --noprofile -i"
  sleep 0.3
  real=$(tmux -L "$sock" display -p -t t '#{pane_width}')
  [ "$real" = "$width" ] || fail "tmux made a pane of $real columns, not $width"
  tmux -L "$sock" send-keys -t t "./r" Enter
  bars=0 distinct=""
  for _ in $(seq 200); do
    pane=$(tmux -L "$sock" capture-pane -p -t t)
    if grep -q "^END" <<<"$pane"; then break; fi
    # While it runs: the prompt with the command, and at most one more line.
    lines=$(grep -c . <<<"$pane" || true)
    bar=$(grep "%" <<<"$pane" || true)
    if [ -n "$bar" ]; then
      [ "$(grep -c "%" <<<"$pane")" -eq 1 ] || fail "$width columns: more than one progress line"
      [ "$lines" -eq 2 ] || fail "$width columns: $lines lines on screen during the run (debris or a wrapped bar)"
      [ "${#bar}" -lt "$width" ] || fail "$width columns: the bar is ${#bar} columns wide"
      grep -q "ETA" <<<"$bar" || fail "$width columns: no ETA in '$bar'"
      [ "$width" -lt 80 ] || grep -q "GB/s" <<<"$bar" || fail "$width columns: no rate in '$bar'"
      [ "$width" -lt 80 ] || grep -q "\[[#.]*\]" <<<"$bar" || fail "$width columns: no bar in '$bar'"
      [ "$width" -lt 80 ] || grep -q "^transpose: \[" <<<"$bar" || fail "$width columns: no stage name before the bar in '$bar'"
      grep -q "GB/s s\|s s$" <<<"$bar" && fail "$width columns: stale characters in '$bar'"
      bars=$((bars + 1))
      grep -qxF -- "$bar" <<<"$distinct" || distinct+="$bar"$'\n'
    fi
    sleep 0.05
  done
  pane=$(tmux -L "$sock" capture-pane -p -t t)
  grep -q "^END 0" <<<"$pane" || fail "$width columns: the run did not end well"
  [ "$bars" -ge 2 ] || fail "$width columns: the bar was seen $bars times (want several redraws)"
  [ "$(grep -c . <<<"$distinct")" -ge 2 ] || fail "$width columns: the bar never changed"
  # Cleared at the end: the prompt line, END, the next prompt; no bar left.
  grep -q "%\|ETA\|GB/s" <<<"$pane" && fail "$width columns: the bar was not cleared"
  [ "$(grep -c . <<<"$pane")" -eq 3 ] || fail "$width columns: debris after the run"
  echo "ok: $width columns, the bar seen $bars times, $(grep -c . <<<"$distinct") different, last: $(tail -2 <<<"$distinct" | head -1)"
  # The same run with stderr not a terminal, inside the terminal: no bar.
  tmux -L "$sock" send-keys -t t "clear; ./r 2>e.txt" Enter
  for _ in $(seq 200); do
    pane=$(tmux -L "$sock" capture-pane -p -t t)
    grep -q "%" <<<"$pane" && fail "$width columns: a bar drawn with stderr redirected"
    grep -q "^END" <<<"$pane" && break
    sleep 0.05
  done
  [ ! -s "$dir/e.txt" ] || fail "$width columns: stderr redirected got output"
done
echo "progress bar under tmux: all widths ok"
