#!/usr/bin/env bash
# Build everything the guests need: QEMU with the tern device, the kernel modules, the guest
# kernel and the initramfs; --debug for the debug kernel flavour instead (TERN_KERNEL=debug),
# --all for both. Heavy parts are cached under $TERN_CACHE (see scripts/lib/common.sh).
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

step() {
	local name=$1 t0=$SECONDS
	shift
	log "build: $name"
	"$@" || die "build step '$name' failed"
	log "build: $name done in $((SECONDS - t0)) s"
}

modules() {
	local kver
	kver=$(tern_kver)
	[ -n "$kver" ] || die "cannot resolve the guest kernel version (apt-get update?)"
	make -s -C "$TERN_TOP" KVER="$kver" modules >&2
	mkdir -p "$TERN_OUT/modules"
	find "$TERN_TOP/drivers" -name '*.ko' -exec cp -f {} "$TERN_OUT/modules/" \;
}

# Our modules against the debug kernel's build tree, from a copy of the sources (so that the
# stock build's objects in the checkout stay as they are).
debug_modules() {
	local kdir src=$TERN_OUT/debug/src
	kdir=$("$TERN_TOP/scripts/build-debug-kernel.sh")
	mkdir -p "$src" "$TERN_OUT/debug/modules"
	(cd "$TERN_TOP" && find Kbuild drivers include -type f \( -name '*.[ch]' -o -name Kbuild \
		-o -name Makefile \) | cpio -pdmu --quiet "$src")
	find "$src" -name '*.ko' -delete
	timeout 1200 make -s -C "$kdir/build" M="$src" modules >&2
	rm -f "$TERN_OUT/debug/modules/"*.ko
	find "$src/drivers" -name '*.ko' -exec cp -f {} "$TERN_OUT/debug/modules/" \;
}

# tests/rdma's programs (built against the host's libibverbs, run in the guests) and the list
# that puts them into the initramfs of both flavours.
rdma_tests() {
	local p
	make -s -C "$TERN_TOP/tests/rdma" O="$TERN_OUT/rdma" >&2
	mkdir -p "$TERN_OUT/initramfs.d"
	for p in $(make -s -C "$TERN_TOP/tests/rdma" names); do
		printf 'file %s /usr/bin/%s\nlib %s\n' "$TERN_OUT/rdma/$p" "$p" "$TERN_OUT/rdma/$p"
	done > "$TERN_OUT/initramfs.d/rdma-tests.list"
}

flavours=stock
[ "${TERN_KERNEL:-}" = debug ] && flavours=debug
for arg in "$@"; do
	case "$arg" in
	--debug) flavours=debug ;;
	--all) flavours="stock debug" ;;
	-h|--help) echo "usage: $0 [--debug | --all]  (stock kernel by default)"; exit 0 ;;
	*) die "unknown argument: $arg" ;;
	esac
done

step "host packages" "$TERN_TOP/scripts/setup-host.sh"
step "qemu" "$TERN_TOP/scripts/build-qemu.sh" >/dev/null
step "rdma test programs" rdma_tests
for f in $flavours; do
	if [ "$f" = stock ]; then
		step "kernel modules" modules
		step "guest kernel" "$TERN_TOP/scripts/guest-kernel.sh" >/dev/null
		step "provider" "$TERN_TOP/scripts/build-provider.sh" >/dev/null
		step "initramfs" "$TERN_TOP/scripts/mkinitramfs.sh" >/dev/null
	else
		step "debug kernel" "$TERN_TOP/scripts/build-debug-kernel.sh" >/dev/null
		step "kernel modules (debug)" debug_modules
		step "provider" "$TERN_TOP/scripts/build-provider.sh" >/dev/null
		step "initramfs (debug)" "$TERN_TOP/scripts/mkinitramfs.sh" --debug >/dev/null
	fi
done
