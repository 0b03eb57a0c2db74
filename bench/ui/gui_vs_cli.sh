#!/usr/bin/env bash
# Training throughput with the workbench open vs the headless CLI, same spec.
# Target (issue): GUI samples/s >= 95% of CLI samples/s in each mode.
#
# Usage: bench/ui/gui_vs_cli.sh [REPEATS] [STEPS]
#   env: CLI (default build/app/cli/stagewise-cli), GUI (default build-ui/app/gui/stagewise),
#        SPEC (default resources/experiments/mlp-fmnist-4stage.json),
#        MAX_FOREIGN (default 0.05: cores other processes may use during a round and it counts),
#        GUI_BEFORE (optional: a second workbench binary, e.g. of the previous commit, run in the
#        same rounds for a before/after comparison),
#        MODES (default "local backprop"),
#        WAIT_QUIET (seconds, default 0: before each round, wait up to this long for a moment when
#        other processes use under 0.1 core)
# Each round runs, per mode: the CLI without a store (--no-store), the CLI recording into a
# store (as `stagewise-cli train` does by default, and as the workbench always does), then the
# workbench (under xvfb-run when there is no display), one after the other. Every run prints
# its samples/s and the CPU that *other* processes used meanwhile ("foreign", in cores: busy
# time of the whole machine minus this run's own), so rounds disturbed by someone else's build
# can be told apart. The medians use only rounds whose three runs stayed under MAX_FOREIGN.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
REPEATS="${1:-2}"
STEPS="${2:-800}"
CLI="${CLI:-$ROOT/build/app/cli/stagewise-cli}"
GUI="${GUI:-$ROOT/build-ui/app/gui/stagewise}"
SPEC="${SPEC:-$ROOT/resources/experiments/mlp-fmnist-4stage.json}"
MAX_FOREIGN="${MAX_FOREIGN:-0.05}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# The workbench's own settings and data stay out of the user's.
export XDG_CONFIG_HOME="$TMP/config" XDG_DATA_HOME="$TMP/data"

python3 "$ROOT/bench/throughput_spec.py" "$SPEC" "$TMP/g.json" "$STEPS"

if [[ -n "${DISPLAY:-}" ]]; then XRUN=(); else XRUN=(xvfb-run -a); fi

# measure CMD...: runs CMD, prints "<foreign cores> <ui ms/s>": the machine's busy time minus
# CMD's own and its children's CPU time, over the wall time; and, when UI_OF is set, the CPU time
# of the main (UI) thread of the process whose command line contains UI_OF, in ms per second,
# from 3 s after the start (Qt and the window are set up by then) until it exits.
measure() {
  python3 - "$@" <<'PY'
import os, resource, subprocess, sys, time
tick = os.sysconf('SC_CLK_TCK')
def busy():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / tick  # all but idle and iowait
def find(pattern):
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                cmd = f.read().replace(b'\0', b' ').decode(errors='replace')
        except OSError:
            continue
        if pattern in cmd and 'python3' not in cmd and 'xvfb-run' not in cmd:
            return pid
def cpu(pid):
    try:
        with open(f'/proc/{pid}/task/{pid}/stat') as f:
            v = f.read().rsplit(')', 1)[1].split()
        return (int(v[11]) + int(v[12])) / tick
    except (OSError, IndexError):
        return None
pattern = os.environ.get('UI_OF')
r0, b0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), busy(), time.monotonic()
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
pid, samples = None, []
while child.poll() is None:
    time.sleep(0.2)
    if not pattern or time.monotonic() - t0 < 3:
        continue
    pid = pid or find(pattern)
    c = cpu(pid) if pid else None
    if c is not None:
        samples.append((c, time.monotonic()))
r1, b1, t1 = resource.getrusage(resource.RUSAGE_CHILDREN), busy(), time.monotonic()
own = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
# Up to 1.5 s before the end: the final redraw and quitting are not the live view's cost.
window = [s for s in samples if s[1] <= t1 - 1.5]
ui = float('nan')
if len(window) >= 2 and window[-1][1] > window[0][1]:
    ui = 1000 * (window[-1][0] - window[0][0]) / (window[-1][1] - window[0][1])
print(f"{max(0.0, (b1 - b0) - own) / (t1 - t0):.3f} {ui:.1f}")
PY
}

# wait_quiet SECONDS: returns once the machine has been idle (< 0.1 core busy) for 2 s, or after
# SECONDS.
wait_quiet() {
  python3 - "$1" <<'PY'
import os, sys, time
def busy():
    with open('/proc/stat') as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf('SC_CLK_TCK')
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    b0 = busy(); time.sleep(2)
    if busy() - b0 < 0.2: break
PY
}

sps_of_json() { tail -1 "$1" | python3 -c "import json,sys; print(round(json.load(sys.stdin)['samples_per_sec']))"; }
sps_of_db() {
  "$CLI" runs list --db "$1" --json --sort created | python3 -c "
import json,sys; r=json.load(sys.stdin); r=r['runs'] if isinstance(r,dict) else r
print(round(r[0]['samples_per_sec']))"
}

cli_run() {  # cli_run MODE no-store|store -> "sps foreign"
  local f
  rm -f "$TMP"/c.db*
  if [[ $2 == no-store ]]; then
    f=$(measure sh -c "\"$CLI\" train --config \"$TMP/g.json\" --set mode=$1 --no-store --json --quiet >\"$TMP/c.out\"")
  else
    f=$(measure sh -c "\"$CLI\" train --config \"$TMP/g.json\" --set mode=$1 --db \"$TMP/c.db\" --json --quiet >\"$TMP/c.out\"")
  fi
  echo "$(sps_of_json "$TMP/c.out") ${f% *}"
}
gui_run() {  # gui_run MODE [BINARY] -> "sps foreign ui_ms_per_s"
  local f
  rm -f "$TMP"/g.db*
  f=$(UI_OF="--spec $TMP/g.json" measure timeout 300 "${XRUN[@]}" "${2:-$GUI}" \
    --spec "$TMP/g.json" --db "$TMP/g.db" --mode "$1" --workspace train --run --quit-after-run)
  echo "$(sps_of_db "$TMP/g.db") $f"
}

declare -A C0 C1 G U B UB P
printf '%-9s %-3s %9s %9s %9s %8s %8s %7s  %s\n' mode run cli cli+store gui gui/cli gui/c+s \
  ui_ms/s "foreign cores (cli, cli+store, gui)"
for ((i = 1; i <= REPEATS; i++)); do
  for mode in ${MODES:-local backprop}; do
    wait_quiet "${WAIT_QUIET:-0}"
    read -r c0 f0 < <(cli_run "$mode" no-store)
    read -r c1 f1 < <(cli_run "$mode" store)
    # With GUI_BEFORE, the two workbenches take turns going first.
    b="" fb=0 ub=""
    if [[ -n "${GUI_BEFORE:-}" ]] && ((i % 2 == 0)); then
      read -r b fb ub < <(gui_run "$mode" "$GUI_BEFORE")
    fi
    read -r g fg ui < <(gui_run "$mode")
    if [[ -n "${GUI_BEFORE:-}" ]] && ((i % 2 == 1)); then
      read -r b fb ub < <(gui_run "$mode" "$GUI_BEFORE")
    fi
    clean=$(python3 -c "print(int(max($f0, $f1, $fg, $fb) <= $MAX_FOREIGN))")
    if [[ $clean == 1 ]]; then
      C0[$mode]+="$c0 "; C1[$mode]+="$c1 "; G[$mode]+="$g "; U[$mode]+="$ui "
      B[$mode]+="$b "; UB[$mode]+="$ub "
      P[$mode]+="$g/$c0,$g/$c1${b:+,$b/$c0,$b/$c1} "
    fi
    printf '%-9s %-3s %9s %9s %9s %8s %8s %7s  %s %s %s%s\n' "$mode" "$i" "$c0" "$c1" "$g" \
      "$(python3 -c "print(f'{$g/$c0:.3f}')")" "$(python3 -c "print(f'{$g/$c1:.3f}')")" "$ui" \
      "$f0" "$f1" "$fg" "$([[ $clean == 1 ]] || echo '  (disturbed: left out)')"
    [[ -z "$b" ]] || printf '%-9s %-3s %29s %8s %8s %7s  %s  (GUI_BEFORE)\n' "$mode" "$i" "$b" \
      "$(python3 -c "print(f'{$b/$c0:.3f}')")" "$(python3 -c "print(f'{$b/$c1:.3f}')")" "$ub" "$fb"
  done
done
# Undisturbed rounds only. Throughput on the shared VM moves between levels for seconds at a
# time whatever runs (host contention the guest cannot see), so besides each column's median
# and best (the run least disturbed), "paired" is the median over rounds of each round's own
# ratio: the runs of a round are back to back, so it compares like with like.
echo
printf '%-9s %-6s %6s %9s %9s %9s %8s %8s %7s\n' mode stat rounds cli cli+store gui gui/cli \
  gui/c+s ui_ms/s
for mode in ${MODES:-local backprop}; do
  python3 - "$mode" "${C0[$mode]:-}" "${C1[$mode]:-}" "${G[$mode]:-}" "${U[$mode]:-}" \
    "${B[$mode]:-}" "${UB[$mode]:-}" "${P[$mode]:-}" <<'PY'
import math, statistics, sys
m = sys.argv[1]
c0, c1, g, u, gb, ub = ([float(x) for x in a.split()] for a in sys.argv[2:8])
pairs = [[eval(r) for r in p.split(',')] for p in sys.argv[8].split()]
if not g:
    print(f"{m:<9} {'-':<6} {0:>6}  no undisturbed round: wait for a quieter machine or raise MAX_FOREIGN")
    sys.exit()
med = lambda xs: statistics.median([x for x in xs if not math.isnan(x)] or [math.nan])
for stat, f in (("median", statistics.median), ("best", max)):
    a, b, c = f(c0), f(c1), f(g)
    note = "" if c / a >= 0.95 else "  (< 0.95 vs the CLI without a store)"
    print(f"{m:<9} {stat:<6} {len(g):>6} {a:9.0f} {b:9.0f} {c:9.0f} {c/a:8.3f} {c/b:8.3f} {med(u):7.1f}{note}")
    if gb:
        c = f(gb)
        print(f"{'':<9} {'':<6} {'':>6} {'':>9} {'':>9} {c:9.0f} {c/a:8.3f} {c/b:8.3f} {med(ub):7.1f}  (GUI_BEFORE)")
ratios = [statistics.median(p[i] for p in pairs) for i in range(len(pairs[0]))]
note = "" if ratios[0] >= 0.95 else "  (< 0.95 vs the CLI without a store)"
print(f"{m:<9} {'paired':<6} {len(g):>6} {'':>9} {'':>9} {'':>9} {ratios[0]:8.3f} {ratios[1]:8.3f} {'':>7}{note}")
if len(ratios) > 2:
    print(f"{'':<9} {'':<6} {'':>6} {'':>9} {'':>9} {'':>9} {ratios[2]:8.3f} {ratios[3]:8.3f} {'':>7}  (GUI_BEFORE)")
PY
done
