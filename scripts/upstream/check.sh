#!/usr/bin/env bash
# Checks tern's upstream submissions (scripts/upstream/generate.py). Prints TAP
# (tests/static/upstream.t runs it under prove):
#   kernel series, against Debian's linux-source-6.1:
#     for each patch N in turn: it applies (patch -p1, no fuzz); checkpatch.pl --strict on it
#     is clean; with it applied the tree configures (tinyconfig + scripts/upstream/linux.config)
#     to every tern option the patches so far offer, and the tern directories build in-tree
#     as modules (make drivers/net/ethernet/tern/ ...: every object compiled, each module's
#     objects linked into the module object its modules.order names; modpost and the .ko
#     link need a whole kernel build): bisectable. The last patch's build runs with W=1 and
#     C=2 (sparse) and must print no warning; the earlier ones build plainly.
#   rdma-core patch, against the rdma-core source scripts/build-provider.sh uses:
#     it applies to that tree's pristine HEAD and builds with rdma-core's own CMake and ninja
#     (configured with no tern-specific variable) into libtern-rdmav34.so.
# Caches (under $TERN_CACHE, keyed by the linux-source package version):
#   linux-source-<ver>/                     the unpacked tarball (shared with
#                                           scripts/build-debug-kernel.sh), never written
#   upstream-linux-<ver>-<hash>/obj/        O= build tree: configured, modules_prepare'd
#   upstream-linux-<ver>-<hash>/src/        per run: a hard-linked copy of the source that the
#                                           patches are applied to (patch(1) replaces the files
#                                           it changes, so the links' targets stay pristine)
# Exit status: 0 when every check passes.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR/.. source=../lib/common.sh
. "$(dirname "$0")/../lib/common.sh"
unset GIT_DIR GIT_WORK_TREE

tarball=${TERN_LINUX_SOURCE:-$(ls /usr/src/linux-source-6.1.tar.xz 2>/dev/null)}
frag=$TERN_TOP/scripts/upstream/linux.config
work=$TERN_OUT/upstream
n=0
failed=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() { n=$((n + 1)); failed=1; echo "not ok $n - $1"; }
diag() { sed 's/^/# /' "$@"; }

# The prepared O= tree; its recipe (this function and the fragment) is in the cache's name.
prepare_obj() {
	local src=$1 obj=$2
	kmake() { nice -n 10 make -s -C "$src" O="$obj" CC="ccache gcc" "$@"; }
	rm -rf "$obj" && mkdir -p "$obj" &&
		kmake tinyconfig >/dev/null &&
		"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null &&
		kmake olddefconfig >/dev/null &&
		kmake -j"$(nproc)" modules_prepare >/dev/null
}

[ -r "$tarball" ] || { echo "1..1"; echo "not ok 1 - no linux-source-6.1 tarball"; exit 1; }
ver=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null) || ver=$(stat -c %Y "$tarball")
pristine=$TERN_CACHE/linux-source-$ver
key=$( { declare -f prepare_obj; cat "$frag"; } | sha256sum | cut -c1-12)
cache=$TERN_CACHE/upstream-linux-$ver-$key
src=$cache/src
obj=$cache/obj
export CCACHE_DIR=${CCACHE_DIR:-$TERN_CACHE/ccache} CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
export KBUILD_BUILD_TIMESTAMP='1970-01-01' KBUILD_BUILD_USER=tern KBUILD_BUILD_HOST=tern

mkdir -p "$cache" "$work"
exec 9> "$cache.lock"
timeout 3600 flock 9 || { echo "1..1"; echo "not ok 1 - $cache.lock"; exit 1; }

if [ ! -f "$pristine/.complete" ]; then
	log "extracting $tarball into $pristine (once)"
	rm -rf "$pristine.tmp.$$" && mkdir -p "$pristine.tmp.$$" &&
		tar -xJf "$tarball" -C "$pristine.tmp.$$" --strip-components=1 &&
		touch "$pristine.tmp.$$/.complete" &&
		{ mv -T "$pristine.tmp.$$" "$pristine" 2>/dev/null || rm -rf "$pristine.tmp.$$"; }
	[ -f "$pristine/.complete" ] || die "cannot extract $tarball"
fi
# The source the patches apply to: fresh every run, hard links to the pristine files.
rm -rf "$src" && cp -al "$pristine" "$src" || die "cannot copy $pristine to $src"
if [ ! -f "$obj/.prepared" ]; then
	log "upstream: configuring linux-source $ver and modules_prepare in $obj (once)"
	prepare_obj "$src" "$obj" || die "cannot prepare $obj"
	touch "$obj/.prepared"
fi

gen=$work/linux
rm -rf "$gen"
if ! python3 "$TERN_TOP/scripts/upstream/generate.py" linux --tree "$pristine" --out "$gen" \
	>"$work/generate.log" 2>&1; then
	echo "1..1"
	not_ok "generate.py linux"
	diag "$work/generate.log"
	exit 1
fi
mapfile -t patches < <(ls "$gen"/[0-9][0-9][0-9][0-9]-*.patch)
echo "1..$((4 * ${#patches[@]} + 2))"

# checkpatch's findings on the headers include/linux/tern/ shares with user space that
# scripts/check-kernel.sh also lets pass (BIT() and static_assert do not exist there), and
# nothing else.
checkpatch_filter() {
	awk -v RS= -v ORS='\n\n' '!(/^CHECK:(BIT_MACRO|CAMELCASE):/ &&
		/FILE: include\/linux\/tern\//) && !/^total: /'
}

kdirs=(drivers/net/ethernet/tern/ drivers/infiniband/hw/tern/)
i=0
for p in "${patches[@]}"; do
	i=$((i + 1))
	name=$(basename "$p")
	log "upstream: $name"
	if patch -d "$src" -p1 -s -F0 -N --no-backup-if-mismatch <"$p" >"$work/patch.log" 2>&1
	then
		ok "$name applies to linux-source $ver"
	else
		not_ok "$name applies to linux-source $ver"
		diag "$work/patch.log"
		break
	fi
	cp=$( (cd "$src" && perl scripts/checkpatch.pl --strict --quiet --show-types \
		--root="$src" "$p" 2>&1) | checkpatch_filter | sed '/^$/d')
	if [ -z "$cp" ]; then
		ok "$name: checkpatch --strict"
	else
		not_ok "$name: checkpatch --strict"
		printf '%s\n' "$cp" | diag
	fi
	# The tern options this patch offers, as modules: every one the fragment names that
	# the patched tree's Kconfig files define must come out as in the fragment.
	cp "$obj/.config" "$obj/.config.prev"
	"$src/scripts/kconfig/merge_config.sh" -m -O "$obj" "$obj/.config" "$frag" >/dev/null 2>&1
	make -s -C "$src" O="$obj" CC="ccache gcc" olddefconfig >"$work/config.log" 2>&1
	want=$(grep -o '^CONFIG_[A-Z0-9_]*TERN[A-Z0-9_]*=.' "$frag" | while read -r c; do
		sym=${c%%=*}
		grep -qsx "config ${sym#CONFIG_}" "$src"/drivers/net/ethernet/tern/Kconfig \
			"$src"/drivers/infiniband/hw/tern/Kconfig && echo "$c"
	done)
	miss=$(for c in $want; do grep -qx "$c" "$obj/.config" || echo "$c"; done)
	if [ -n "$want" ] && [ -z "$miss" ]; then
		ok "$name: configures: $(echo $want)"
	else
		not_ok "$name: configures: missing $(echo $miss) of $(echo $want)"
		diag "$work/config.log"
	fi
	rm -rf "$obj/drivers/net/ethernet/tern" "$obj/drivers/infiniband/hw/tern"
	extra=()
	[ "$i" -eq "${#patches[@]}" ] && extra=(W=1 C=2 CHECK=sparse)
	dirs=()
	for d in "${kdirs[@]}"; do [ -d "$src/$d" ] && dirs+=("$d"); done
	nice -n 10 make -C "$src" O="$obj" CC="ccache gcc" -j"$(nproc)" "${extra[@]}" \
		"${dirs[@]}" >"$work/build-$i.log" 2>&1
	rc=$?
	# Every module the directories' modules.order lists (X.ko), linked into its module
	# object X.o (tern_core.o from its objects). modpost and the .ko link need vmlinux's
	# symbols, which only a whole kernel build makes; scripts/check-kernel.sh's build links
	# and modposts both modules.
	mods=$(cd "$obj" && for d in "${dirs[@]}"; do cat "$d/modules.order" 2>/dev/null; done)
	missing=$(cd "$obj" && for m in $mods; do [ -s "${m%.ko}.o" ] || echo "$m"; done)
	warn=$(grep -Ei '(warning|error):' "$work/build-$i.log")
	what="builds in-tree${extra:+ with W=1 C=2}, module objects:"
	what="$what $(for m in $mods; do basename "${m%.ko}.o"; done | xargs)"
	what="$what${missing:+ (not linked: $(echo $missing))}"
	if [ $rc -eq 0 ] && [ -z "$warn" ] && [ -n "$mods" ] && [ -z "$missing" ]; then
		ok "$name: $what"
	else
		not_ok "$name: $what (make exit $rc)"
		{ [ -n "$warn" ] && echo "$warn"; tail -n 20 "$work/build-$i.log"; } | diag
	fi
done

# rdma-core: the tree scripts/build-provider.sh keeps (its HEAD is the pristine source).
prov=$TERN_OUT/provider/rdma-core-tree
if ! "$TERN_TOP/scripts/build-provider.sh" >"$work/provider.log" 2>&1 || [ ! -f "$prov" ]; then
	not_ok "rdma-core patch applies # scripts/build-provider.sh failed"
	diag "$work/provider.log"
	not_ok "rdma-core patch builds"
	exit 1
fi
rtree=$(cat "$prov")
rc_patch=$(ls "$work"/rdma-core/0001-*.patch 2>/dev/null | head -n 1)
rsrc=$work/rdma-core-src
rm -rf "$rsrc" && mkdir -p "$rsrc"
git -C "$rtree" archive HEAD | tar -x -C "$rsrc"
if [ -n "$rc_patch" ] &&
	patch -d "$rsrc" -p1 -s -F0 -N --no-backup-if-mismatch <"$rc_patch" >"$work/rc-patch.log" 2>&1
then
	ok "$(basename "$rc_patch") applies to rdma-core ($rtree)"
else
	not_ok "rdma-core patch applies to rdma-core ($rtree)"
	diag "$work/rc-patch.log"
fi
# rdma-core's own build (as its build.sh: cmake -GNinja, ninja), no tern variable; only the
# provider's target, through ccache.
rb=$rsrc/build
mkdir -p "$rb"
if (cd "$rb" && nice -n 10 cmake -GNinja -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 \
	-DCMAKE_C_COMPILER_LAUNCHER=ccache .. >"$work/rc-cmake.log" 2>&1 &&
	nice -n 10 ninja -j"$(nproc)" tern-rdmav34 >"$work/rc-ninja.log" 2>&1) &&
	so=$(find "$rb/lib" -name 'libtern-rdmav34.so' | head -n 1) && [ -n "$so" ] &&
	! grep -q '^TERN' "$rb/CMakeCache.txt"; then
	ok "rdma-core with the patch builds libtern-rdmav34.so (cmake + ninja, no tern variable)"
else
	not_ok "rdma-core with the patch builds libtern-rdmav34.so"
	tail -n 30 "$work/rc-cmake.log" "$work/rc-ninja.log" 2>/dev/null | diag
fi
exit $failed
