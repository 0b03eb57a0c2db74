#!/usr/bin/env bash
# Installs the Debian 12 packages Stagewise needs, only those missing (idempotent).
# Usage: scripts/deps.sh [--gui] [--tools] [--bench]
#   default: build + test dependencies (engine, CLI, store, workbench, tests)
#   --tools: also Xvfb/ImageMagick/xdotool for screenshots
#   --bench: also Debian's PyTorch for the plain-PyTorch peers in bench/peers/
set -euo pipefail

want=(
  build-essential cmake ninja-build pkg-config
  libtorch-dev libgloo-dev
  libopenblas0-openmp         # LibTorch calls the system BLAS: reference BLAS is ~7x slower
  nlohmann-json3-dev libsqlite3-dev sqlite3 zlib1g-dev
  libstb-dev                  # dataset.kind image_folder: stb_image decodes PNG/JPEG/BMP
  nettle-dev                  # SHA-256 of a torchscript model's file (model.path)
  qt6-base-dev qt6-base-dev-tools libqcustomplot-dev libgl-dev
  qt6-svg-dev
  libplplot-dev               # the replication report's plots (PLplot's svg driver)
  libdlib-dev libboost-dev    # searches: dlib's model-based sampler, Boost's Sobol and Student t
  desktop-file-utils libxml2-utils appstream  # checks of the desktop entry, MIME type, metainfo
  dpkg-dev                    # dpkg-shlibdeps: the Debian package's Depends (scripts/package.sh)
  dataset-fashion-mnist
  fortunes                    # dataset.kind text: the default corpus (about 1.3 MB of English)
  clang libclang-rt-14-dev    # libFuzzer targets and sanitizer builds (scripts/fuzz.sh, sanitize.sh)
)
for a in "$@"; do
  case "$a" in
    --tools) want+=(xvfb imagemagick xdotool x11-utils) ;;
    --gui) ;;
    # python3-torch uses the same libblas.so.3 alternative as LibTorch (set to OpenBLAS below).
    --bench) want+=(python3 python3-torch) ;;
    *) echo "deps.sh: unknown option '$a' (use --tools or --bench)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps.sh: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# Make sure LibTorch resolves BLAS to OpenBLAS (OpenMP flavour), not the reference libblas3.
if command -v update-alternatives >/dev/null; then
  for alt in libblas.so.3-x86_64-linux-gnu liblapack.so.3-x86_64-linux-gnu; do
    cand=$(update-alternatives --list "$alt" 2>/dev/null | grep openblas-openmp | head -1 || true)
    if [ -n "$cand" ]; then
      cur=$(readlink -f "/etc/alternatives/$alt" 2>/dev/null || true)
      [ "$cur" = "$(readlink -f "$cand")" ] || ${SUDO:-} update-alternatives --set "$alt" "$cand" >/dev/null
    fi
  done
fi
echo "deps.sh: all dependencies present"
