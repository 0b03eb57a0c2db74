#!/usr/bin/env bash
# Renders each workspace of the workbench under Xvfb into docs/screenshots/*.png, on the fake
# engine (scripted numbers) and a throw-away run store, so the pictures are the same anywhere.
# Usage: scripts/screenshots.sh [BUILD_DIR]   (default: build-ui, then build)
# Needs: xvfb, imagemagick, xdotool (scripts/deps.sh --tools).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-}
if [ -z "$build" ]; then
  for b in "$root/build-ui" "$root/build"; do [ -d "$b" ] && build=$b && break; done
fi
app=""
for candidate in "$build/app/gui/stagewise" "$build/app/gui/stagewise-fake"; do
  [ -x "$candidate" ] && app=$candidate && break
done
[ -n "$app" ] || { echo "screenshots.sh: no stagewise binary under $build/app/gui" >&2; exit 2; }
shot=${SCREENSHOT_TOOL:-/work/shared/tools/screenshot}
[ -x "$shot" ] || { echo "screenshots.sh: missing $shot" >&2; exit 2; }

out="$root/docs/screenshots"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Private settings and store: the shots never depend on (or touch) the user's.
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" STAGEWISE_DB="$tmp/runs.db"
app_cmd=("$app")
[ "$(basename "$app")" = stagewise ] && app_cmd+=(--fake)

preset="$root/resources/experiments/mlp-fmnist-4stage.json"
spec() {  # spec NAME CUTS OPTIMIZER LR [FAIL_AT_STEP]
  cat > "$tmp/$1.json" <<JSON
{ "name": "$1", "dataset": { "kind": "fashion-mnist" },
  "model": { "kind": "mlp", "hidden": [512, 512, 512, 512, 512, 512, 512, 512] },
  "partition": { "cuts": $2 },
  "train": { "batch_size": 32, "max_steps": 800, "optimizer": "$3", "lr": $4 },
  "eval": { "interval": 100 }, "probe": { "interval": 50 },
  "debug": { "fail_at_step": ${5:--1}, "stage": 1 } }
JSON
}
spec mlp-4stage "[2, 4, 6]" adam 0.001
spec mlp-2stage "[4]" adam 0.001
spec mlp-8stage "[1, 2, 3, 4, 5, 6, 7]" adam 0.001
spec mlp-sgd "[2, 4, 6]" sgd 0.05
spec mlp-straggler "[2, 4, 6]" adam 0.001 300
spec mlp-9stage "[1, 2, 3, 4, 5, 6, 7, 8]" adam 0.001

echo "screenshots.sh: recording demo runs into a temporary store"
for name in mlp-4stage mlp-2stage mlp-8stage mlp-sgd mlp-straggler mlp-9stage; do
  QT_QPA_PLATFORM=offscreen "${app_cmd[@]}" --spec "$tmp/$name.json" --run --quit-after-run \
    >/dev/null 2>&1 || true
done

# An invalid design: a device this machine lacks and a cut past the last layer.
cat > "$tmp/invalid.json" <<JSON
{ "name": "needs-fixing", "dataset": { "kind": "fashion-mnist" },
  "model": { "kind": "mlp", "hidden": [512, 512, 512, 512, 512, 512] },
  "partition": { "cuts": [2, 4, 9] },
  "stages": [ {}, { "device": "cuda:1" }, {}, {} ] }
JSON

export SIZE=1600x1000
trim() {  # the window is smaller than the screen: cut off the black margins around it
  [ -f "$1" ] && convert "$1" -bordercolor black -border 1 -fuzz 1% -trim +repage "$1"
}
take() {  # take NAME SECONDS ARGS...
  local name=$1 secs=$2
  shift 2
  # Each shot starts from what its arguments say, not from the session the last one left
  # (session restore reopens the last experiment, workspace and selected runs).
  local conf="$XDG_CONFIG_HOME/Stagewise/stagewise.conf"
  [ -f "$conf" ] && sed -i '/^\[session\]/,/^\[/{/^\[session\]/d;/^[^[]/d}' "$conf"
  "$shot" "$out/$name.png" "$secs" -- "${app_cmd[@]}" "$@" | sed 's/^/screenshots.sh: /'
  trim "$out/$name.png"
}
take design 4 --theme light
# The lower part of the settings column: evaluation, probes and checkpoints.
ACTIONS="xdotool mousemove 150 600 click --repeat 20 --delay 30 5; sleep 1" \
  take design-training 4 --theme light
take design-cnn 4 --theme light --spec "$root/resources/experiments/cnn-fmnist-4stage.json"
take design-invalid 4 --theme light --spec "$tmp/invalid.json"
take train 5 --theme light --workspace train --run
# The gradient cosine per layer: open the switch in the cosine panel's corner, pick "per layer".
ACTIONS="xdotool mousemove 1005 122 click 1; sleep 0.5; xdotool key Down Return; sleep 1.5" \
  take train-layers 4 --theme light --workspace train --spec "$tmp/mlp-4stage.json" --run
take train-failed 5 --theme light --workspace train --spec "$tmp/mlp-straggler.json" --run
take train-dark 5 --theme dark --workspace train --spec "$tmp/mlp-8stage.json" --run
# A common laptop screen, nine stages: the window fits and nothing overlaps.
SIZE=1366x768 take design-1366x768 4 --theme light --spec "$tmp/mlp-9stage.json"
SIZE=1366x768 take train-1366x768 5 --theme light --workspace train --spec "$tmp/mlp-9stage.json" --run
# Runs in the dark theme: the overlay and the bars follow it.
ACTIONS="xdotool mousemove 300 110 click 1; sleep 0.3; xdotool keydown ctrl mousemove 300 132 \
click 1 keyup ctrl; sleep 2" \
  take runs-dark 4 --theme dark --workspace runs
# Runs: select three runs (click, ctrl+click) to compare them.
ACTIONS="xdotool mousemove 300 110 click 1; sleep 0.3; xdotool keydown ctrl mousemove 300 132 \
click 1 mousemove 300 154 click 1 keyup ctrl; sleep 2" take runs 4 --theme light --workspace runs
# A study: the learning rate and the cut over three seeds in Design's Study tab; then queued in
# Train (Run study), its second run training.
python3 - "$preset" "$tmp/study.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["study"] = {"vary": {"partition.cuts": [[2, 4, 6], [4]], "train.lr": [0.001, 0.0003]},
                 "seeds": 3, "name": "cuts x lr"}
json.dump(spec, open(sys.argv[2], "w"), indent=2)
PY
ACTIONS="sleep 3; xdotool mousemove 1170 367 click 1; sleep 1" \
  take design-study 4 --theme light --spec "$tmp/study.json"
ACTIONS="sleep 3; xdotool mousemove 1170 367 click 1; sleep 1; xdotool mousemove 1376 767 \
click 1; sleep 12" take train-study 4 --theme light --spec "$tmp/study.json"
# A search: each method's learning rate searched (Sobol, pruned, tuned on 3 seeds) on a
# validation split, in Design's Study tab.
python3 - "$preset" "$tmp/search.json" <<'PY'
import json, sys
spec = json.load(open(sys.argv[1]))
spec["dataset"]["validation"] = 0.1
spec["study"] = {"vary": {"mode": ["local", "backprop"]},
                 "search": {"train.lr": {"log_uniform": [1e-5, 0.1]},
                            "train.batch_size": {"choice": [32, 128]}},
                 "trials": 12, "sampler": "sobol",
                 "prune": {"metric": "val_accuracy", "min_steps": 100, "reduction": 3},
                 "tune": {"metric": "val_accuracy", "seeds": 3}, "name": "tuned methods"}
json.dump(spec, open(sys.argv[2], "w"), indent=2)
PY
# The tab, then the side column scrolled down to the trials, pruning and tuning.
ACTIONS="sleep 3; xdotool mousemove 1170 367 click 1; sleep 1; xdotool mousemove 1160 62 \
click --repeat 25 --delay 30 5; sleep 1" take design-search 4 --theme light --spec "$tmp/search.json"
# The real LibTorch engine, when this build has it and Fashion-MNIST is installed: local then
# backprop on the same data, overlaid. The shot waits until the backprop run is in the store.
if [ "$(basename "$app")" = stagewise ] && [ -d "${STAGEWISE_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" ]; then
  cat > "$tmp/real.json" <<JSON
{ "name": "mlp-fmnist-4stage", "dataset": { "kind": "fashion-mnist" },
  "model": { "kind": "mlp", "hidden": [512, 512, 512, 512, 512, 512, 512, 512] },
  "partition": { "cuts": [2, 4, 6] },
  "train": { "batch_size": 32, "max_steps": 500 },
  "eval": { "interval": 100, "max_samples": 2000 }, "probe": { "interval": 50, "batch_size": 128 } }
JSON
  wait_backprop="for i in \$(seq 300); do
    n=\$(sqlite3 '$STAGEWISE_DB' \"select count(*) from runs where mode='backprop' and status='completed'\" 2>/dev/null || echo 0)
    [ \"\$n\" -ge 1 ] && break; sleep 1; done; sleep 1"
  ACTIONS="$wait_backprop" "$shot" "$out/train-real-both.png" 5 -- "$app" --theme light \
    --spec "$tmp/real.json" --mode both --workspace train --run | sed 's/^/screenshots.sh: /'
  trim "$out/train-real-both.png"
fi
# The replication report on the real engine: the store is filled by `stagewise-cli report
# --quick` first, so the workbench's report reuses those runs and trains only the throughput ones;
# the shot waits until the report's window is up.
cli="$build/app/cli/stagewise-cli"
if [ "$(basename "$app")" = stagewise ] && [ -x "$cli" ] &&
   [ -d "${STAGEWISE_FASHION_MNIST:-/usr/share/datasets/fashion-mnist}" ]; then
  "$cli" report --quick --db "$tmp/report.db" --out "$tmp/report" --quiet >/dev/null 2>&1 || true
  SIZE=1600x1000 ACTIONS="timeout 900 xdotool search --sync --name 'Replication report' >/dev/null; sleep 3" \
    STAGEWISE_DB="$tmp/report.db" "$shot" "$out/report.png" 5 -- "$app" --theme light \
    --db "$tmp/report.db" --report quick | sed 's/^/screenshots.sh: /'
  trim "$out/report.png"
fi
ls -l "$out"
