#!/usr/bin/env bash
# Installs what is missing, configures, builds and runs the default test suite (labels fast, gui,
# dist). Long checks carry the label `slow` (run: ctest --test-dir build -L slow).
# Environment: BUILD_DIR (default build), CTEST_LABELS (regex, default "fast|gui|dist"),
#              CMAKE_ARGS (extra configure arguments).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build}
export QT_QPA_PLATFORM=${QT_QPA_PLATFORM:-offscreen}
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"${JOBS:-2}"
echo "build: $(( $(date +%s) - start )) s"
ctest --test-dir "$build" --output-on-failure -L "${CTEST_LABELS:-fast|gui|dist}" -j1
