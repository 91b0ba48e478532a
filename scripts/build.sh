#!/usr/bin/env bash
# Build everything the guests need: QEMU with the tern device, the kernel modules, the guest
# kernel and the initramfs. Heavy parts are cached under $TERN_CACHE (see scripts/lib/common.sh).
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

step "host packages" "$TERN_TOP/scripts/setup-host.sh"
step "qemu" "$TERN_TOP/scripts/build-qemu.sh" >/dev/null
step "kernel modules" modules
step "guest kernel" "$TERN_TOP/scripts/guest-kernel.sh" >/dev/null
step "initramfs" "$TERN_TOP/scripts/mkinitramfs.sh" >/dev/null
