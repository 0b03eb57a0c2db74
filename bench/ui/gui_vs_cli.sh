#!/usr/bin/env bash
# Training throughput with the workbench open vs the headless CLI, same spec.
# Target (issue): GUI samples/s >= 95% of CLI samples/s in each mode.
#
# Usage: bench/ui/gui_vs_cli.sh [REPEATS] [STEPS]
#   env: CLI (default build/app/cli/stagewise-cli), GUI (default build-ui/app/gui/stagewise),
#        SPEC (default resources/experiments/mlp-fmnist-4stage.json)
# Runs alternate CLI/GUI per mode, REPEATS times (default 2); prints every run and
# the median per mode. Needs xvfb-run when no display is available.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
REPEATS="${1:-2}"
STEPS="${2:-800}"
CLI="${CLI:-$ROOT/build/app/cli/stagewise-cli}"
GUI="${GUI:-$ROOT/build-ui/app/gui/stagewise}"
SPEC="${SPEC:-$ROOT/resources/experiments/mlp-fmnist-4stage.json}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

python3 - "$SPEC" "$TMP/g.json" "$STEPS" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d['train']['max_steps'] = int(sys.argv[3])
d['eval']['interval'] = 0
d['probe']['interval'] = -1
json.dump(d, open(sys.argv[2], 'w'))
PY

if [[ -n "${DISPLAY:-}" ]]; then XRUN=(); else XRUN=(xvfb-run -a); fi

cli_run() {
  "$CLI" train --config "$TMP/g.json" --set mode="$1" --no-store --json --quiet 2>/dev/null |
    tail -1 | python3 -c "import json,sys; print(round(json.load(sys.stdin)['samples_per_sec']))"
}
gui_run() {
  rm -f "$TMP"/g.db*
  timeout 120 "${XRUN[@]}" "$GUI" --spec "$TMP/g.json" --db "$TMP/g.db" --mode "$1" \
    --run --quit-after-run >/dev/null 2>&1 || true
  "$CLI" runs list --db "$TMP/g.db" --json --sort created | python3 -c "
import json,sys; r=json.load(sys.stdin); r=r['runs'] if isinstance(r,dict) else r
print(round(r[0]['samples_per_sec']))"
}

declare -A CLIS GUIS
printf '%-9s %-4s %12s %12s %7s\n' mode run cli_sps gui_sps ratio
for ((i = 1; i <= REPEATS; i++)); do
  for mode in local backprop; do
    c=$(cli_run "$mode"); g=$(gui_run "$mode")
    CLIS[$mode]+="$c "; GUIS[$mode]+="$g "
    printf '%-9s %-4s %12s %12s %7s\n' "$mode" "$i" "$c" "$g" \
      "$(python3 -c "print(f'{$g/$c:.3f}')")"
  done
done
echo
printf '%-9s %12s %12s %7s\n' mode cli_median gui_median ratio
for mode in local backprop; do
  python3 - "$mode" "${CLIS[$mode]}" "${GUIS[$mode]}" <<'PY'
import statistics, sys
m, c, g = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
cm, gm = statistics.median(c), statistics.median(g)
print(f"{m:<9} {cm:12.0f} {gm:12.0f} {gm/cm:7.3f}" + ("" if gm / cm >= 0.95 else "  (< 0.95 target)"))
PY
done
