#!/usr/bin/env bash
# Builds the Debian package stagewise_<version>_amd64.deb from a Release build of the programs
# (not the tests or benchmarks) and prints its path. Install it with: apt install ./stagewise_*.deb
# Environment: BUILD_DIR (default build-package).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
build=${BUILD_DIR:-build-package}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTAGEWISE_BUILD_TESTS=OFF \
  -DSTAGEWISE_BENCH=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target stagewise stagewise-cli
(cd "$build" && cpack -G DEB >/dev/null)
deb=$(ls -t "$build"/stagewise_*_amd64.deb | head -1)
cp "$deb" .
echo "package.sh: $(basename "$deb")"
