#!/usr/bin/env bash
# Sanitizer builds of the LibTorch-free code (core, store, recorder, CLI runs library) and their
# fast tests: ASan+UBSan over everything, TSan over the concurrency tests (queues, pause/stop,
# reporter, fake engine, store writer and liveness, the writer holding and retrying through a
# full disk or a lock held by another process). Usage: scripts/sanitize.sh [asan|tsan|all]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
export QT_QPA_PLATFORM=offscreen
common=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTAGEWISE_BUILD_ENGINE=OFF -DSTAGEWISE_BUILD_GUI=OFF -DSTAGEWISE_BENCH=OFF)
if [ "$what" = asan ] || [ "$what" = all ]; then
  t0=$(date +%s)
  cmake -S . -B build-asan "${common[@]}" -DSTAGEWISE_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"${JOBS:-2}"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan -L fast --output-on-failure -j1
  echo "asan+ubsan: $(( $(date +%s) - t0 )) s"
fi
if [ "$what" = tsan ] || [ "$what" = all ]; then
  t0=$(date +%s)
  cmake -S . -B build-tsan "${common[@]}" -DSTAGEWISE_TSAN=ON >/dev/null
  cmake --build build-tsan -j"${JOBS:-2}" --target test_runtime_primitives test_run_writer test_liveness \
    test_recorder test_disk_full test_store_locked
  # die_after_fork=0: the fault tests start helper processes (QProcess) while the store's writer
  # thread runs, and TSan's default aborts when a thread is started after such a fork (seen in
  # test_disk_full and test_store_locked); the child only execs a helper.
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 die_after_fork=0 suppressions=$PWD/scripts/tsan.supp" \
    ctest --test-dir build-tsan \
    -R 'test_runtime_primitives|test_run_writer|test_liveness|test_recorder|test_disk_full|test_store_locked' \
    --output-on-failure -j1
  echo "tsan: $(( $(date +%s) - t0 )) s"
fi
