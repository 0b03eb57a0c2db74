#!/usr/bin/env bash
# The tuned comparison (issue 32, docs/benchmarks.md "Searches"): for each preset, one study with
# mode in {local, pipeline, backprop}, each mode's own learning-rate search on a 10 % validation
# split (the same Sobol trials for every mode, successive-halving pruning), then each mode's
# best trial re-run on fresh seeds and compared on test: mean, 95 % CI (Student t), n.
# Also one run per mode at the preset's own rate on the same seeds ("shared lr").
# usage: bench/study/tuned_compare.sh [BUILD_DIR] [PRESETS] [TRIALS] [SEEDS] [EXTRA --set ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; presets=${2:-mlp cnn}; trials=${3:-8}; seeds=${4:-3}; shift 4 || true
extra=("$@")
cli="$build/app/cli/stagewise-cli"
[ -x "$cli" ] || { echo "tuned_compare: build $cli first" >&2; exit 2; }
db=$(mktemp -d)/tuned.db
for preset in $presets; do
  cfg="resources/experiments/$preset-fmnist-4stage.json"
  common=(--config "$cfg" --set dataset.validation=0.1 --set probe.interval=-1 "${extra[@]}"
          --vary 'mode=["local","pipeline","backprop"]' --db "$db" --quiet --json)
  tuned=$("$cli" study run "${common[@]}" --name "$preset tuned" \
    --search train.lr=log_uniform:1e-5:1e-2 --trials "$trials" --sampler sobol --prune \
    --tune-seeds "$seeds")
  shared=$("$cli" study run "${common[@]}" --name "$preset shared" --seeds "$seeds")
  id_of() {  # the study id in `study run --json`'s output (its JSON document ends the output)
    python3 -c '
import json, sys
t = sys.argv[1].strip()
try: d = json.loads(t)
except ValueError: d = json.loads(t[t.rindex("\n{") + 1:] if "\n{" in t else t.splitlines()[-1])
print(d["study_id"])' "$1"
  }
  tid=$(id_of "$tuned"); sid=$(id_of "$shared")
  "$cli" study show "$tid" --db "$db" --json > "$db.$preset.tuned.json"
  "$cli" study show "$sid" --db "$db" --json > "$db.$preset.shared.json"
  python3 - "$preset" "$db.$preset.tuned.json" "$db.$preset.shared.json" <<'PY'
import json, sys
preset, tuned, shared = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3]))
print(f"\n{preset}: tuned (own lr, chosen on val_accuracy) against the preset's shared lr")
print(f"{'mode':<9} {'chosen lr':>10} {'val':>7} | {'tuned test mean ± ci95 (n)':>28} | "
      f"{'shared-lr test mean ± ci95 (n)':>30} | trials done/pruned/failed")
def half(stat):  # the 95 % CI's half-width ([lo, hi] in the JSON; NaN with one run)
    ci = stat.get("ci95")
    return (ci[1] - ci[0]) / 2 if isinstance(ci, list) and None not in ci else float("nan")
sh = {}
for g in shared["groups"]:
    sh[g["keys"]["mode"]] = g
for t in tuned["tuned"]:
    mode = t["keys"]["mode"]
    a = t["test_accuracy"]
    s = sh.get(mode, {}).get("test_accuracy", {})
    lr = t["best"].get("train.lr")
    sm = f"{s.get('mean', float('nan')):.4f} ± {half(s):.4f} ({s.get('n', 0)})"
    print(f"{mode:<9} {lr:>10.2e} {t['best_value']:7.4f} | "
          f"{a['mean']:.4f} ± {half(a):.4f} ({a['n']}){'':>8} | {sm:>30} | "
          f"{t['completed']}/{t['pruned']}/{t['failed']} of {t['trials']}")
PY
done
