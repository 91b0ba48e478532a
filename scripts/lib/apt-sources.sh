#!/usr/bin/env bash
# Derive deb-src entries from the machine's existing apt sources, without naming any host.
# Usage: scripts/lib/apt-sources.sh     (idempotent; every build script may call it)
# Writes /etc/apt/sources.list.d/tern-src.sources with Types: deb-src for every existing
# deb822 stanza (same URIs, Suites, Components and Signed-By), plus a deb-src stanza for each
# suite in EXTRA_SUITES built from the first stanza's URIs and Signed-By. Exit status 0; prints
# "changed" on stdout when the file was (re)written, so the caller knows to apt-get update.
set -euo pipefail

# trixie: rdma-core 56.1's source (bookworm's 44 orig tarball is missing from the archive).
EXTRA_SUITES="trixie"

src=/etc/apt/sources.list.d/debian.sources
out=/etc/apt/sources.list.d/tern-src.sources
[ -r "$src" ] || { echo "apt-sources: $src not found" >&2; exit 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
# Each stanza is separated by a blank line; keep only the fields apt needs, switch Types.
awk -v extra="$EXTRA_SUITES" '
function flush() {
	if (uris != "" && suites != "") {
		printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", uris, suites, comps
		if (key != "") printf "Signed-By: %s\n", key
		printf "\n"
		if (first_uris == "") { first_uris = uris; first_key = key; first_comps = comps }
	}
	uris = suites = comps = key = ""
}
/^[[:space:]]*$/ { flush(); next }
/^#/ { next }
/^URIs:/ { sub(/^URIs:[[:space:]]*/, ""); uris = $0; next }
/^Suites:/ { sub(/^Suites:[[:space:]]*/, ""); suites = $0; next }
/^Components:/ { sub(/^Components:[[:space:]]*/, ""); comps = $0; next }
/^Signed-By:/ { sub(/^Signed-By:[[:space:]]*/, ""); key = $0; next }
END {
	flush()
	n = split(extra, ex, " ")
	for (i = 1; i <= n; i++) {
		printf "Types: deb-src\nURIs: %s\nSuites: %s\nComponents: %s\n", first_uris, ex[i], first_comps
		if (first_key != "") printf "Signed-By: %s\n", first_key
		printf "\n"
	}
}' "$src" > "$tmp"

if ! cmp -s "$tmp" "$out" 2>/dev/null; then
	install -m 0644 "$tmp" "$out"
	echo "apt-sources: wrote $out" >&2
	echo changed
fi
