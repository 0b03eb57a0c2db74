#!/usr/bin/env bash
# Time to the first window, as a new user meets it: a clean checkout of REV, `scripts/run.sh`
# from nothing built, until the workbench's window is on the (virtual) screen.
# usage: bench/startup/first_window.sh [REV...]   (default: HEAD; several REVs run one after the
#        other and print one table). Needs xvfb and xdotool (scripts/deps.sh --tools).
# The dependencies are not timed: scripts/deps.sh installs the same packages for every REV, and
# they are already present when this runs (run scripts/deps.sh once first).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
revs=("$@"); [ ${#revs[@]} -gt 0 ] || revs=(HEAD)
for t in Xvfb xdotool; do command -v $t >/dev/null || { echo "first_window: needs $t (scripts/deps.sh --tools)" >&2; exit 2; }; done
rows=()
for rev in "${revs[@]}"; do
  work=$(mktemp -d /tmp/first-window.XXXXXX)
  git -C "$repo" worktree add --detach "$work/src" "$rev" >/dev/null 2>&1 ||
    { git clone -q "$repo" "$work/src" && git -C "$work/src" checkout -q "$rev"; }
  # shared/ beside the checkout, as in a real one
  [ -e "$work/shared" ] || ln -s "$repo/../shared" "$work/shared" 2>/dev/null || true
  fdfile=$(mktemp)
  Xvfb -displayfd 3 -screen 0 1600x1000x24 -nolisten tcp 3>"$fdfile" >/dev/null 2>&1 & xpid=$!
  for _ in $(seq 100); do [ -s "$fdfile" ] && break; sleep 0.1; done
  export DISPLAY=:$(head -1 "$fdfile"); rm -f "$fdfile"
  t0=$(date +%s.%N)
  HOME="$work/home" STAGEWISE_DB="$work/runs.db" BUILD_DIR="$work/build" \
    setsid bash "$work/src/scripts/run.sh" >"$work/log" 2>&1 & pid=$!
  shown=""
  while kill -0 $pid 2>/dev/null; do
    if xdotool search --onlyvisible --name Stagewise >/dev/null 2>&1; then shown=$(date +%s.%N); break; fi
    sleep 0.5
  done
  kill -- -$pid 2>/dev/null || true; sleep 1; kill -9 -- -$pid 2>/dev/null || true
  kill $xpid 2>/dev/null || true
  steps=$(grep -c '^\[[0-9]*/[0-9]*\]' "$work/log" || true)
  if [ -n "$shown" ]; then
    rows+=("$(printf '%-12s %10.0f %12s' "$(git -C "$repo" rev-parse --short "$rev")" "$(echo "$shown - $t0" | bc)" "$steps")")
  else
    rows+=("$(printf '%-12s %10s %12s' "$(git -C "$repo" rev-parse --short "$rev")" "no window" "$steps")")
    tail -5 "$work/log" >&2
  fi
  git -C "$repo" worktree remove --force "$work/src" >/dev/null 2>&1 || true
  rm -rf "$work"
done
printf '%-12s %10s %12s\n' rev seconds build-steps
printf '%s\n' "${rows[@]}"
