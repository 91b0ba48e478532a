#!/usr/bin/env bash
# Build qemu-system-x86_64 (QEMU 7.2 from Debian bookworm's source package) with the tern
# device (model/qemu/ adapter + model/lib/ library) added as hw/net/tern/, and the fixes to
# QEMU's own code in scripts/qemu-patches/ (each file says what it fixes and why).
#
# Usage: scripts/build-qemu.sh
# Prints the path of the built binary ($TERN_OUT/qemu/qemu-system-x86_64) as the last line
# of stdout; progress goes to stderr.
#
# The unpacked and configured QEMU tree is cached in
# $TERN_CACHE/qemu-<debian version>-<hash of the configure flags, tree recipe and patches>/
# (src/, build/), guarded by a lock, so a second run only copies our sources into the tree and runs
# ninja incrementally. Environment:
#   TERN_QEMU_JOBS   parallel compile jobs (default: number of CPUs)
#   TERN_QEMU_CLEAN  set to 1 to throw the cached tree away and start over
#   TERN_MODEL_LIB   directory of the model library sources (default: model/lib)
set -euo pipefail
# The whole script is one block that bash reads before running it, so that editing this file
# (or checking out another version) cannot disturb a build that is running.
{
# shellcheck source-path=SCRIPTDIR
. "$(dirname "$0")/lib/common.sh"

QEMU_SUITE=bookworm
# Bump when the way the tree is prepared (below, prepare_tree) changes: it is part of the key.
TREE_RECIPE=3
JOBS=${TERN_QEMU_JOBS:-$(nproc)}
# Debian's python3 and meson, whatever else (pyenv shims, venvs) is first in PATH.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin:$PATH

# Only the devices tern's VMs use (configs/devices/x86_64-softmmu/tern.mak in the tree);
# Kconfig adds what these select (PCI/PCIe buses, ACPI, ISA serial, ...). This leaves out
# about 200 of the 1160 files a default x86_64 build compiles (USB, display, SCSI, audio...).
devices_mak='# tern: written by scripts/build-qemu.sh
CONFIG_Q35=y
CONFIG_I440FX=y
CONFIG_PCIE_PORT=y
CONFIG_VIRTIO_PCI=y
CONFIG_VIRTIO_NET=y
CONFIG_VIRTIO_SERIAL=y
CONFIG_VIRTIO_BLK=y
CONFIG_VIRTIO_RNG=y
CONFIG_HPET=y
CONFIG_ISA_DEBUG=y
CONFIG_PVPANIC_ISA=y
CONFIG_TERN=y'

# Firmware (SeaBIOS, option ROMs) comes from Debian's qemu-system-data, seabios and ipxe-qemu
# packages. The prefix is deliberately not /usr: QEMU makes paths under its prefix relative to
# the binary's location, and we want these absolute directories to be used as they are.
conf_flags=(
	--prefix=/opt/tern-qemu
	--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu
	--meson=/usr/bin/meson
	--ninja=/usr/bin/ninja
	--with-git-submodules=ignore
	--target-list=x86_64-softmmu
	--disable-docs
	--disable-werror
	--disable-install-blobs
	--disable-debug-info
	--without-default-features
	--without-default-devices
	--with-devices-x86_64=tern
	--enable-tcg
	--enable-kvm
	--enable-slirp
	--enable-vhost-kernel
	--enable-vhost-net
	--disable-tools
	--disable-guest-agent
	--disable-user
	--disable-linux-user
	--disable-bsd-user
	--disable-gtk
	--disable-sdl
	--disable-vnc
	--disable-spice
	--disable-opengl
	--disable-xen
	--disable-curl
	--disable-curses
	--disable-capstone
	--disable-plugins
	--disable-modules
)

# Long steps run in the background under timeout(1), so that a signal to this script
# (Ctrl-C, or an outer timeout) is passed on and no configure or ninja outlives it, holding
# the lock.
step_pid=
# shellcheck disable=SC2317  # invoked by the trap
on_signal() {
	if [ -n "$step_pid" ]; then
		kill -TERM "$step_pid" 2>/dev/null || true
		wait "$step_pid" 2>/dev/null || true
	fi
	# fd 7: the script's stderr (a step's own redirections may be in force here).
	die "interrupted" 2>&7
}
exec 7>&2
trap on_signal INT TERM HUP

bounded() {
	# bounded SECONDS CMD...: run CMD, killed after SECONDS; returns its status (124: timeout).
	local limit=$1 rc=0
	shift
	timeout --kill-after=30 "$limit" "$@" &
	step_pid=$!
	wait "$step_pid" || rc=$?
	step_pid=
	return "$rc"
}

timed() {
	# timed SECONDS DESCRIPTION CMD...: run CMD with a time limit, logging how long it took.
	local limit=$1 what=$2 t0 rc=0
	shift 2
	t0=$(date +%s)
	bounded "$limit" "$@" || rc=$?
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		die "$what: timed out after ${limit}s"
	elif [ "$rc" -ne 0 ]; then
		die "$what failed (exit $rc)"
	fi
	log "$what: done in $(( $(date +%s) - t0 ))s"
}

# --- sources of source ---------------------------------------------------------------------
# deb-src entries derived from the machine's apt sources (prints "changed" when it wrote them).
if [ -n "$("$TERN_TOP/scripts/lib/apt-sources.sh")" ]; then
	log "deb-src entries changed: apt-get update"
	timed 600 "apt-get update" apt-get update -q -o=Dpkg::Use-Pty=0 >/dev/null
fi

# Resolve the source version without downloading anything: apt prints the .dsc it would fetch.
dsc=$(timeout 120 apt-get source --print-uris "qemu/$QEMU_SUITE" 2>/dev/null |
	awk '$2 ~ /^qemu_.*\.dsc$/ { print $2; exit }') || true
[ -n "$dsc" ] || die "cannot resolve the qemu source package for $QEMU_SUITE (deb-src missing?)"
qver=${dsc#qemu_}
qver=${qver%.dsc}

qemu_patches=("$TERN_TOP"/scripts/qemu-patches/*.patch)
[ -f "${qemu_patches[0]}" ] || die "no patches in scripts/qemu-patches/"
flags_hash=$( { printf '%s\n' "${conf_flags[@]}"; echo "$devices_mak"; echo "recipe=$TREE_RECIPE";
	cat "${qemu_patches[@]}"; gcc -dumpfullversion 2>/dev/null || true; } |
	sha256sum | cut -c1-12)
cdir=$TERN_CACHE/qemu-$qver-$flags_hash
src=$cdir/src
bld=$cdir/build
mkdir -p "$cdir"

# --- lock ----------------------------------------------------------------------------------
# One run at a time per cached tree (a cold build by another run may take a while).
exec 9>"$cdir.lock"
if ! flock -n 9; then
	log "waiting for another build of $cdir to finish"
	flock -w 3600 9 || die "timed out waiting for the lock on $cdir"
fi

if [ "${TERN_QEMU_CLEAN:-0}" = 1 ]; then
	log "TERN_QEMU_CLEAN=1: removing $cdir"
	rm -rf "$src" "$bld" "$cdir/unpack" "$cdir/src.stamp"
fi

# --- unpacked, patched tree ----------------------------------------------------------------
prepare_tree() {
	# prepare_tree DIR: wire hw/net/tern into a freshly unpacked tree (run once per tree).
	local d=$1 p

	# Fixes to QEMU itself, in name order, on top of Debian's patches.
	for p in "${qemu_patches[@]}"; do
		patch -d "$d" -p1 --batch --forward --quiet < "$p" ||
			die "$(basename "$p") does not apply to qemu $qver"
	done

	# The dfsg tarball has no edk2 firmware blobs: never try to unpack them.
	sed -i 's/^\(\s*unpack_edk2_blobs = \)bzip2\.found()$/\1false/' "$d/meson.build"
	if ! grep -q '^\s*unpack_edk2_blobs = false$' "$d/meson.build" ||
		grep -q 'unpack_edk2_blobs = bzip2' "$d/meson.build"; then
		die "could not disable the edk2 blob unpacking in meson.build"
	fi

	# Our trace events (hw/net/tern/trace-events) next to hw/net's.
	sed -i "s|^\(\s*\)'hw/net',\$|&\n\1'hw/net/tern',|" "$d/meson.build"
	grep -q "^\s*'hw/net/tern',\$" "$d/meson.build" ||
		die "could not add hw/net/tern to trace_events_subdirs"

	cat >> "$d/hw/net/Kconfig" <<-'EOF'

	config TERN
	    bool
	    default y if PCI_DEVICES
	    depends on PCI_EXPRESS && MSI_NONBROKEN
	EOF
	printf "\nsubdir('tern')\n" >> "$d/hw/net/meson.build"
	printf '%s\n' "$devices_mak" > "$d/configs/devices/x86_64-softmmu/tern.mak"
	mkdir -p "$d/hw/net/tern"
}

if [ ! -f "$cdir/src.stamp" ] || [ ! -d "$src" ]; then
	rm -rf "$src" "$bld" "$cdir/unpack" "$cdir/dl"
	mkdir -p "$cdir/dl"
	log "downloading qemu $qver source ($QEMU_SUITE)"
	cd "$cdir/dl"
	bounded 900 apt-get source --download-only -q "qemu/$QEMU_SUITE" >"$cdir/dl.log" 2>&1 || {
		cat "$cdir/dl.log" >&2
		die "could not download the qemu source"
	}
	cd /
	[ -f "$cdir/dl/$dsc" ] || die "download did not produce $dsc"
	log "unpacking (dpkg-source -x applies Debian's patches)"
	timed 600 "dpkg-source -x" dpkg-source --no-check -x "$cdir/dl/$dsc" "$cdir/unpack" >/dev/null
	prepare_tree "$cdir/unpack"
	mv "$cdir/unpack" "$src"
	rm -rf "$cdir/dl" "$cdir/dl.log"
	date -u +%FT%TZ > "$cdir/src.stamp"
fi

# --- our sources into hw/net/tern ----------------------------------------------------------
# A file is (re)written only when its content differs, and then gets the current time, so
# ninja rebuilds exactly what changed (also when another checkout built last); files that
# are gone from the repository are removed from the tree.
dst=$src/hw/net/tern
declare -A wanted=()
changed=0

put() {
	# put SRCFILE RELPATH
	local to=$dst/$2
	wanted[$2]=1
	if ! cmp -s "$1" "$to"; then
		mkdir -p "$(dirname "$to")"
		cp "$1" "$to.tmp.$$" && mv -f "$to.tmp.$$" "$to"
		changed=$((changed + 1))
	fi
}

shopt -s nullglob
adapter_c=()
for f in "$TERN_TOP"/model/qemu/*.c "$TERN_TOP"/model/qemu/*.h "$TERN_TOP"/model/qemu/trace-events; do
	put "$f" "$(basename "$f")"
	case $f in *.c) adapter_c+=("$(basename "$f")") ;; esac
done
lib_c=()
model_lib=${TERN_MODEL_LIB:-$TERN_TOP/model/lib}
for f in "$model_lib"/*.c "$model_lib"/*.h; do
	put "$f" "lib/$(basename "$f")"
	case $f in *.c) lib_c+=("lib/$(basename "$f")") ;; esac
done
for f in "$TERN_TOP"/model/include/*.h; do
	put "$f" "model-include/$(basename "$f")"
done
while IFS= read -r -d '' f; do
	put "$f" "include/${f#"$TERN_TOP"/include/}"
done < <(find "$TERN_TOP/include" -type f -name '*.h' -print0 2>/dev/null)
shopt -u nullglob

[ "${#adapter_c[@]}" -gt 0 ] || die "no adapter sources in model/qemu/"
[ -f "$dst/trace-events" ] || die "model/qemu/trace-events is missing"
[ "${#lib_c[@]}" -gt 0 ] || log "warning: model/lib/ has no .c files yet"

# meson.build for hw/net/tern, generated from the file list. The adapter and the model are
# one static library with their own include paths (not added to the rest of QEMU), linked
# whole so the adapter's type registration is kept. Debug info only for our code.
{
	echo "# Generated by scripts/build-qemu.sh: do not edit."
	echo "tern_inc = include_directories('model-include', 'lib', 'include')"
	echo "tern_src = files("
	for f in "${adapter_c[@]}" "${lib_c[@]}"; do
		echo "  '$f',"
	done
	echo ")"
	echo "tern_lib = static_library('tern', tern_src + genh,"
	echo "                          include_directories: tern_inc,"
	echo "                          dependencies: [glib],"
	echo "                          c_args: ['-g'],"
	echo "                          build_by_default: false)"
	echo "softmmu_ss.add(when: 'CONFIG_TERN', if_true: declare_dependency(link_whole: tern_lib))"
} > "$dst/meson.build.new"
wanted[meson.build]=1
if cmp -s "$dst/meson.build.new" "$dst/meson.build"; then
	rm -f "$dst/meson.build.new"
else
	mv -f "$dst/meson.build.new" "$dst/meson.build"
	changed=$((changed + 1))
fi

removed=0
while IFS= read -r -d '' f; do
	rel=${f#"$dst"/}
	if [ -z "${wanted[$rel]:-}" ]; then
		rm -f "$f"
		removed=$((removed + 1))
	fi
done < <(find "$dst" -type f -print0)
find "$dst" -mindepth 1 -type d -empty -delete
log "synced tern sources: $changed updated, $removed removed"

# --- configure (once per cached tree) ------------------------------------------------------
if [ ! -f "$bld/configured.stamp" ]; then
	rm -rf "$bld"
	mkdir -p "$bld"
	log "configuring in $bld"
	t0=$(date +%s)
	cd "$bld"
	bounded 900 "$src/configure" "${conf_flags[@]}" > "$bld/configure.log" 2>&1 || {
		tail -n 30 "$bld/configure.log" >&2
		die "configure failed (log: $bld/configure.log)"
	}
	cd /
	log "configure: done in $(( $(date +%s) - t0 ))s"
	date -u +%FT%TZ > "$bld/configured.stamp"
fi

# --- build ---------------------------------------------------------------------------------
log "ninja qemu-system-x86_64 (-j$JOBS)"
ninja_log=$cdir/ninja.log
t0=$(date +%s)
rc=0
bounded 3600 ninja -C "$bld" -j "$JOBS" qemu-system-x86_64 > "$ninja_log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	grep -E -B2 -A12 'error:|FAILED|ERROR' "$ninja_log" | tail -n 60 >&2 || tail -n 40 "$ninja_log" >&2
	[ "$rc" -eq 124 ] && die "ninja timed out"
	die "ninja failed (exit $rc, log: $ninja_log)"
fi
grep -E 'warning:' "$ninja_log" | grep -F 'hw/net/tern/' >&2 || true
log "ninja: done in $(( $(date +%s) - t0 ))s"

out=$TERN_OUT/qemu
mkdir -p "$out"
if ! cmp -s "$bld/qemu-system-x86_64" "$out/qemu-system-x86_64"; then
	cp "$bld/qemu-system-x86_64" "$out/.qemu-system-x86_64.tmp.$$"
	mv -f "$out/.qemu-system-x86_64.tmp.$$" "$out/qemu-system-x86_64"
fi
log "built $out/qemu-system-x86_64"
echo "$out/qemu-system-x86_64"
exit 0
}
