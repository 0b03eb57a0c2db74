#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (no LibTorch, no Qt) and runs each for FUZZ_RUNS
# executions (default 10^6), at most SECONDS (default 600) each, from the seed corpora in
# fuzz/corpus/, and prints each target's count. Crashes land in build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-600}
runs=${FUZZ_RUNS:-1000000}
build=${FUZZ_BUILD_DIR:-build-fuzz}
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSTAGEWISE_BUILD_ENGINE=OFF -DSTAGEWISE_BUILD_GUI=OFF -DSTAGEWISE_BUILD_TESTS=OFF \
  -DSTAGEWISE_BENCH=OFF -DSTAGEWISE_FUZZ=ON >/dev/null
# Crashes once found are kept in the corpora (regression-*), so every run replays them first.
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_idx fuzz_cifar fuzz_spec fuzz_text fuzz_store_open fuzz_query
mkdir -p "$build/crashes"
status=0
for target in idx cifar spec text store_open query; do
  corpus="fuzz/corpus/${target%_open}"
  work="$build/corpus-$target"
  mkdir -p "$work" "$corpus"
  t0=$(date +%s)
  # Regressions first: every committed corpus input (crashes found earlier included) must pass.
  if ! "$build/fuzz/fuzz_$target" -runs=0 -rss_limit_mb=2048 "$corpus" >"$build/replay_$target.log" 2>&1; then
    echo "fuzz_$target: a committed corpus input crashes again (regression); see $build/replay_$target.log"
    tail -30 "$build/replay_$target.log"
    status=1
    continue
  fi
  if ! "$build/fuzz/fuzz_$target" -runs="$runs" -max_total_time="$secs" -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$build/crashes/$target-" "$work" "$corpus" >"$build/fuzz_$target.log" 2>&1; then
    echo "fuzz_$target: NEW CRASH found (see $build/fuzz_$target.log and $build/crashes/): add the input to"
    echo "  $corpus/regression-*.txt with a fix and a unit test"
    grep -m3 -E "ERROR|SUMMARY" "$build/fuzz_$target.log" || true
    # New findings fail the run unless FUZZ_NEW_FINDINGS_FAIL=0 (CI: reported, not blocking).
    [ "${FUZZ_NEW_FINDINGS_FAIL:-1}" = 0 ] || status=1
  else
    done_runs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$build/fuzz_$target.log" | awk '{print $2}')
    note=""
    [ "${done_runs:-0}" -lt "$runs" ] && note=" (fewer than the $runs asked: stopped by the $secs s cap)"
    echo "fuzz_$target: ok, $done_runs runs in $(( $(date +%s) - t0 )) s$note"
  fi
done
# TorchScript files (fuzz_torchscript) need the engine, so LibTorch: a second build, on request.
if [ "${FUZZ_TORCH:-0}" = 1 ]; then
  tbuild="${build}-torch"
  CC=clang CXX=clang++ cmake -S . -B "$tbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSTAGEWISE_BUILD_GUI=OFF -DSTAGEWISE_BUILD_TESTS=OFF -DSTAGEWISE_BENCH=OFF \
    -DSTAGEWISE_FUZZ=ON >/dev/null
  cmake --build "$tbuild" -j"${JOBS:-2}" --target fuzz_torchscript
  mkdir -p "$tbuild/corpus-torchscript" fuzz/corpus/torchscript
  if ! "$tbuild/fuzz/fuzz_torchscript" -runs="$runs" -max_total_time="$secs" -rss_limit_mb=4096 \
      -max_len=65536 -artifact_prefix="$build/crashes/torchscript-" "$tbuild/corpus-torchscript" \
      fuzz/corpus/torchscript >"$build/fuzz_torchscript.log" 2>&1; then
    echo "fuzz_torchscript: NEW CRASH found (see $build/fuzz_torchscript.log and $build/crashes/)"
    [ "${FUZZ_NEW_FINDINGS_FAIL:-1}" = 0 ] || status=1
  else
    echo "fuzz_torchscript: ok"
  fi
fi
exit $status
