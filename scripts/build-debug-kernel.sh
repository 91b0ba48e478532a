#!/usr/bin/env bash
# Build tern's debug guest kernel (KUnit, KASAN, lockdep, kmemleak, fault injection) from
# Debian's linux-source package. Usage: scripts/build-debug-kernel.sh   prints the output dir:
#   $TERN_CACHE/debug-kernel-<linux-source version>-<hash of fragment and script>/
#     bzImage  kernelrelease  modules/lib/modules/<release>/  build/ (O= tree)  src -> sources
# Out-of-tree modules: make -C <out>/src O=<out>/build M=<dir> modules
# Configuration: tinyconfig + kernel/configs/kvm_guest.config + scripts/kernel/debug.config.
# Cached: a second run only checks a stamp. Compiles go through ccache ($TERN_CACHE/ccache).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

frag=$TERN_TOP/scripts/kernel/debug.config
tarball=${TERN_LINUX_SOURCE:-$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -n 1)}
[ -r "$tarball" ] || die "no /usr/src/linux-source-*.tar.xz (run scripts/setup-host.sh)"
pkg=$(basename "$tarball" .tar.xz)
ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || ver=$(stat -c %Y "$tarball")
key=$(cat "$frag" "$0" | sha256sum | cut -c1-12)
out=$TERN_CACHE/debug-kernel-$ver-$key
src=$TERN_CACHE/linux-source-$ver
limit=${TERN_DEBUG_KERNEL_TIMEOUT:-5400}	# seconds for the whole build

if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
exec 9> "$TERN_CACHE/debug-kernel.lock"
timeout 7200 flock 9 || die "timed out waiting for $TERN_CACHE/debug-kernel.lock"
if [ -f "$out/.complete" ]; then echo "$out"; exit 0; fi
t0=$SECONDS

if [ ! -f "$src/.complete" ]; then
	log "extracting $tarball into $src"
	rm -rf "$src" "$src.tmp"
	mkdir -p "$src.tmp"
	timeout 900 tar -xJf "$tarball" -C "$src.tmp" --strip-components=1
	touch "$src.tmp/.complete"
	mv "$src.tmp" "$src"
fi

command -v ccache >/dev/null || die "ccache not installed (run scripts/setup-host.sh)"
export CCACHE_DIR=${CCACHE_DIR:-$TERN_CACHE/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP='1970-01-01' KBUILD_BUILD_USER=tern KBUILD_BUILD_HOST=tern
mkdir -p "$out/build"
ln -sfn "$src" "$out/src"
kmake() { timeout "$limit" make -s -C "$src" O="$out/build" CC="ccache gcc" "$@"; }

log "configuring the debug kernel in $out/build"
kmake tinyconfig >/dev/null
"$src/scripts/kconfig/merge_config.sh" -m -O "$out/build" "$out/build/.config" \
	"$src/kernel/configs/kvm_guest.config" "$frag" >/dev/null
kmake olddefconfig >/dev/null
# Every setting of the fragment must survive olddefconfig (a dropped line = missing dependency).
bad=$(sed -n 's/^\(CONFIG_[A-Z0-9_]*=.*\)$/\1/p; s/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' \
	"$frag" | while read -r want; do
		case "$want" in
		*=*) grep -qxF "$want" "$out/build/.config" || echo "$want" ;;
		*) grep -q "^$want=" "$out/build/.config" && echo "# $want is not set" ;;
		esac
	done || true)
[ -z "$bad" ] || die "debug.config settings lost in the final .config: $(echo $bad)"

log "building the debug kernel (ccache: $CCACHE_DIR)"
kmake -j"$(nproc)" bzImage modules
rm -rf "$out/modules"
kmake INSTALL_MOD_PATH="$out/modules" modules_install >/dev/null
cp "$out/build/arch/x86/boot/bzImage" "$out/bzImage"
kmake kernelrelease > "$out/kernelrelease"
touch "$out/.complete"
log "debug kernel $(cat "$out/kernelrelease") ready in $((SECONDS - t0)) s"
echo "$out"
