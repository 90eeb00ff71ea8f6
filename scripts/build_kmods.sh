#!/usr/bin/env bash
# Build the perftui demo/test kernel modules (scripts/kmod/src/*) against a
# Debian kernel headers tree and install them, plus .ko.xz / .ko.zst / .ko.gz
# copies, into perftui/demo/modules/.
#
# Usage: bash scripts/build_kmods.sh [HEADERS_DIR]
#   HEADERS_DIR defaults to $KDIR, else the newest /usr/src/linux-headers-*-amd64.
#   Needs: apt-get install -y linux-headers-amd64 xz-utils zstd gzip
#
# The modules are never loaded; they are real kbuild output used as fixtures.
# The build runs in a mktemp -d tree (removed on exit), so no .o/.mod/.cmd
# files ever land in the repo.  Paths are mapped out of the debug info so
# rebuilding with the same headers and compiler gives byte-identical files;
# outputs are only rewritten when their content changes (idempotent).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/scripts/kmod/src"
DEST="$ROOT/perftui/demo/modules"
MODULES=(demo_nic demo-kvm demo_crc)   # dir name == .ko base name

die() { echo "build_kmods: $*" >&2; exit 1; }

KDIR="${1:-${KDIR:-}}"
if [[ -z "$KDIR" ]]; then
    KDIR="$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -n1 || true)"
fi
[[ -n "$KDIR" && -f "$KDIR/Makefile" && -f "$KDIR/.config" ]] ||
    die "no kernel headers found (got '${KDIR:-}'); apt-get install -y linux-headers-amd64"
for tool in make gcc xz zstd gzip readelf; do
    command -v "$tool" >/dev/null || die "missing tool: $tool"
done

BUILD="$(mktemp -d "${TMPDIR:-/tmp}/perftui-kmod.XXXXXX")"
trap 'rm -rf "$BUILD"' EXIT

echo "build_kmods: headers $KDIR ($(cat "$KDIR/include/config/kernel.release" 2>/dev/null || echo '?'))"
mkdir -p "$DEST"

# Put $1's bytes at $2 only if they differ (keeps mtimes stable on re-runs).
install_if_changed() {
    if [[ -f "$2" ]] && cmp -s "$1" "$2"; then
        echo "  unchanged $(basename "$2")"
    else
        install -m 0644 "$1" "$2"
        echo "  wrote     $(basename "$2")"
    fi
}

for mod in "${MODULES[@]}"; do
    [[ -d "$SRC/$mod" ]] || die "missing source dir $SRC/$mod"
    cp -r "$SRC/$mod" "$BUILD/$mod"
    # -ffile-prefix-map drops the random temp path from DWARF and __FILE__,
    # so the .ko (and its GNU build id) is reproducible.
    make -s -C "$KDIR" M="$BUILD/$mod" \
        KCFLAGS="-ffile-prefix-map=$BUILD/=" modules
    ko="$BUILD/$mod/$mod.ko"
    [[ -f "$ko" ]] || die "build produced no $mod.ko"

    size=$(stat -c %s "$ko")
    if (( size > 300 * 1024 )); then
        echo "  $mod.ko is $size bytes: stripping debug info (keeping .symtab)"
        strip --strip-debug "$ko"
    fi

    # Compressed copies the way the kernel makes them (scripts/Makefile.modinst).
    xz -k -f -q --check=crc32 --lzma2=dict=1MiB "$ko"
    zstd -k -f -q --no-progress "$ko" -o "$ko.zst"
    gzip -k -f -n -9 "$ko"

    for f in "$ko" "$ko.xz" "$ko.zst" "$ko.gz"; do
        install_if_changed "$f" "$DEST/$(basename "$f")"
    done
done

# Sanity check: every module is a relocatable ELF with a .symtab.
for mod in "${MODULES[@]}"; do
    ko="$DEST/$mod.ko"
    readelf -hW "$ko" | grep -q 'REL (Relocatable file)' || die "$ko is not ET_REL"
    readelf -SW "$ko" | grep -q ' \.symtab ' || die "$ko has no .symtab"
done
echo "build_kmods: done -> $DEST"
