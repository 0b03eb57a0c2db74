#!/usr/bin/env bash
# An image folder's first load (decode + resize + write the cache) against its cached load, on
# generated images (10 classes, half PNG, half JPEG, 40x40 resized to 32x32): docs/benchmarks.md.
# usage: bench/engine/image_folder_load.sh [BUILD_DIR] [IMAGES] [ROUNDS]   (default 10000 images)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}; images=${2:-10000}; rounds=${3:-3}
cmake --build "$build" --target bench_image_folder -j2 >/dev/null
"$build/bench/engine/bench_image_folder" --images "$images" --rounds "$rounds"
