#!/usr/bin/env bash
# Installs what is missing, builds, and launches the Stagewise workbench on the default
# experiment and the default run store. Extra arguments go to the program.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# Only what it launches: the workbench and the CLI (the tests and benchmarks are
# scripts/test.sh's to build).
targets=(stagewise-cli)
cmake --build "$build" --target help | grep -q '^stagewise:' && targets+=(stagewise)
cmake --build "$build" -j"${JOBS:-2}" --target "${targets[@]}"
preset=resources/experiments/mlp-fmnist-4stage.json
if [ -x "$build/app/gui/stagewise" ]; then
  exec "$build/app/gui/stagewise" --spec "$preset" "$@"
fi
echo "run.sh: the workbench is not built here; training the default experiment headless" >&2
exec "$build/app/cli/stagewise-cli" train --config "$preset" "$@"
