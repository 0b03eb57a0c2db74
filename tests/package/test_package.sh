#!/usr/bin/env bash
# The Debian package as a user gets it: built with cpack from this build, unpacked with
# dpkg-deb -x into a temporary root, and its programs run from there (presets found next to
# them, not in the source tree).
# usage: test_package.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$build" && cpack -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1) || { cat "$tmp/cpack.log"; fail "cpack"; }
deb=$(ls "$tmp"/pkg/stagewise_*_amd64.deb 2>/dev/null | head -1)
[ -n "$deb" ] || fail "no stagewise_<version>_amd64.deb"
echo "package: $(basename "$deb") ($(du -h "$deb" | cut -f1))"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
echo "$depends" | grep -q "libtorch" || fail "Depends lacks LibTorch (dpkg-shlibdeps)"
echo "$depends" | grep -q "libqt6widgets6" || fail "Depends lacks Qt 6 Widgets"
dpkg-deb -f "$deb" Recommends | grep -q "dataset-fashion-mnist" || fail "Recommends lacks dataset-fashion-mnist"

root="$tmp/root"
dpkg-deb -x "$deb" "$root"
for f in usr/bin/stagewise usr/bin/stagewise-cli usr/share/applications/stagewise.desktop \
         usr/share/icons/hicolor/scalable/apps/stagewise.svg usr/share/mime/packages/stagewise.xml \
         usr/share/metainfo/io.github.stagewise.Stagewise.metainfo.xml \
         usr/share/man/man1/stagewise.1 usr/share/man/man1/stagewise-cli.1 \
         usr/share/bash-completion/completions/stagewise-cli \
         usr/share/stagewise/experiments/mlp-fmnist-4stage.json; do
  [ -e "$root/$f" ] || fail "missing /$f"
done

cli="$root/usr/bin/stagewise-cli"
"$cli" --version | grep -q "^stagewise-cli " || fail "stagewise-cli --version"
usage=$("$cli" --help)
echo "$usage" | grep -q "presets in $root/usr/share/stagewise/experiments" \
  || fail "the usage does not name the installed presets: $(echo "$usage" | tail -5)"
"$cli" inspect --config mlp-fmnist-4stage --json >"$tmp/inspect.json" || fail "inspect on an installed preset"
grep -q '"predicted_speedup"' "$tmp/inspect.json" || fail "inspect printed no estimate"
"$cli" train --config mlp-fmnist-4stage --set dataset.kind=synthetic --set train.max_steps=50 \
  --set eval.interval=0 --set probe.interval=-1 --no-store --json --quiet >"$tmp/train.json" \
  || fail "a 50-step train of an installed preset"
tail -1 "$tmp/train.json" | grep -q '"status":"completed"' || fail "the train did not complete"
QT_QPA_PLATFORM=offscreen "$root/usr/bin/stagewise" --version | grep -q "^stagewise 0" \
  || fail "stagewise --version"

desktop-file-validate "$root/usr/share/applications/stagewise.desktop" || fail "desktop-file-validate"
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net "$root/usr/share/metainfo/io.github.stagewise.Stagewise.metainfo.xml" \
    >"$tmp/appstream.log" 2>&1 || { cat "$tmp/appstream.log"; fail "appstreamcli validate"; }
fi
bash -c "source '$root/usr/share/bash-completion/completions/stagewise-cli' && complete -p stagewise-cli" \
  >/dev/null || fail "the bash completion does not register"
echo "1 passed, 0 failed"
