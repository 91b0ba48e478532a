# Shared settings for tern's build and harness scripts. Source it; do not run it.
# shellcheck shell=bash

TERN_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# Heavy builds (QEMU, guest kernel files, rdma-core) are cached outside the checkout,
# keyed by their versions, so that a second run is fast and a fresh machine still works.
TERN_CACHE=${TERN_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tern}
TERN_OUT=${TERN_OUT:-$TERN_TOP/build}
mkdir -p "$TERN_CACHE" "$TERN_OUT"

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The Debian 6.1 kernel ABI the guests boot and the module builds against, resolved from the
# linux-image-amd64 metapackage (never hard-coded).
tern_kver() {
	if [ -n "${TERN_KVER:-}" ]; then echo "$TERN_KVER"; return; fi
	apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/.*Depends: linux-image-\(.*\)$/\1/p' | head -n 1
}
