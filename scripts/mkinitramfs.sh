#!/usr/bin/env bash
# Build the guests' self-contained initramfs: $TERN_OUT/initramfs.cpio.gz (path printed).
# --debug (or TERN_KERNEL=debug): for the debug kernel (scripts/build-debug-kernel.sh), from
# its module tree and $TERN_OUT/debug/modules/*.ko, into $TERN_OUT/debug/initramfs.cpio.
#
# Contents: static busybox (all applets), /init and the control agent (scripts/guest/),
# the guest kernel's modules for virtio and the RDMA stack plus their dependencies, tern's
# out-of-tree modules from $TERN_OUT/modules/*.ko (in /lib/modules/$KVER/extra, depmod'ed),
# userspace tools with their ldd libraries, and whatever the list files name:
#   scripts/guest/extra-files.txt, $TERN_OUT/initramfs.d/*.list,
#   $TERN_INITRAMFS_EXTRA (colon-separated list files), and list files given as arguments.
# The format is described in scripts/guest/extra-files.txt. TERN_GUEST_MODULES adds modules.
# --image NAME: a larger image for the tests that need it: everything above plus
# scripts/guest/NAME-files.txt, $TERN_OUT/initramfs.d/NAME/*.list (both flavours: user
# programs) and $TERN_OUT/initramfs.d/NAME-FLAVOUR/*.list (one kernel's modules), into initramfs-NAME.cpio next to the default one (e.g. --image storage: NVMe-oF,
# NFS and fio, about 100 MB that every other guest would otherwise unpack at boot). Tests ask
# for it with Cluster(initrd_image=NAME). Not compressed, nor is
# the debug flavour's default image (initramfs.cpio): the debug kernel (KASAN) inflates
# gzip slowly, 47 s for the storage image against 28 s to unpack it uncompressed, 20 s
# against 9 s for the default one (stock: a few seconds either way).
#
# Rebuilds only when an input changed (paths and contents are hashed); -f forces it.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib/common.sh
. "$(dirname "$0")/lib/common.sh"

force=0
flavour=stock
image=
[ "${TERN_KERNEL:-}" = debug ] && flavour=debug
lists=("$TERN_TOP/scripts/guest/extra-files.txt")
while [ $# -gt 0 ]; do
	case "$1" in
	-f|--force) force=1 ;;
	--debug) flavour=debug ;;
	--image)
		[ $# -ge 2 ] || die "--image needs a name"
		image=$2
		shift
		[ -r "$TERN_TOP/scripts/guest/$image-files.txt" ] ||
			die "no scripts/guest/$image-files.txt for --image $image"
		;;
	-h|--help) sed -n '2,20p' "$0"; exit 0 ;;
	*) [ -r "$1" ] || die "no such list file: $1"; lists+=("$1") ;;
	esac
	shift
done
shopt -s nullglob
lists+=("$TERN_OUT"/initramfs.d/*.list)
if [ -n "${TERN_INITRAMFS_EXTRA:-}" ]; then
	IFS=: read -r -a more <<< "$TERN_INITRAMFS_EXTRA"
	lists+=("${more[@]}")
fi
[ -z "$image" ] || lists+=("$TERN_TOP/scripts/guest/$image-files.txt"
			   "$TERN_OUT"/initramfs.d/"$image"/*.list)

if [ $flavour = debug ]; then
	kdir=$("$TERN_TOP/scripts/build-debug-kernel.sh")
	kroot=$kdir/modules
	kver=$(cat "$kdir/kernelrelease")
	fout=$TERN_OUT/debug
else
	kroot=$("$TERN_TOP/scripts/guest-kernel.sh")
	kver=${kroot##*/}
	fout=$TERN_OUT
fi
mkdir -p "$fout"
# lists for one image and kernel flavour: modules built for that kernel (build-smbdirect.sh)
[ -z "$image" ] || lists+=("$TERN_OUT/initramfs.d/$image-$flavour"/*.list)
# One build at a time per output dir (tests running in parallel all call this).
exec 9> "$fout/initramfs.lock"
timeout 600 flock 9 || die "timed out waiting for $fout/initramfs.lock"
out=$fout/initramfs.cpio.gz
[ $flavour = stock ] || out=$fout/initramfs.cpio
[ -z "$image" ] || out=$fout/initramfs-$image.cpio
stamp=$fout/initramfs${image:+-$image}.stamp
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

# --- the guest agent: a small static binary ------------------------------------------------
agent_src=$TERN_TOP/scripts/guest/agent.c
agent=$TERN_OUT/guest/tern-agent
if [ ! -x "$agent" ] || [ "$agent_src" -nt "$agent" ]; then
	mkdir -p "$TERN_OUT/guest"
	gcc -static -O2 -Wall -Wextra -Werror -o "$agent.tmp" "$agent_src"
	mv "$agent.tmp" "$agent"
fi
# fault injection helper for tests/guest/faults.t
failnth_src=$TERN_TOP/scripts/guest/failnth.c
failnth=$TERN_OUT/guest/tern-failnth
if [ ! -x "$failnth" ] || [ "$failnth_src" -nt "$failnth" ]; then
	mkdir -p "$TERN_OUT/guest"
	gcc -static -O2 -Wall -Wextra -Werror -o "$failnth.tmp" "$failnth_src"
	mv "$failnth.tmp" "$failnth"
fi

# --- resolve everything into a manifest: "DST SRC" lines ---------------------------------
bins=(bash dash ip ethtool devlink rdma tc dcb iperf3 ping)
# Debian's static busybox prefers its own applets when an applet runs another program
# ("timeout 5 ip ..." would run busybox's ip): use the real versions of the applets that exec.
bins+=(timeout env nice nohup chroot xargs setsid taskset nsenter unshare flock ionice chrt)
modules=(virtio_pci virtio_net virtio_console 8021q
	ib_core ib_uverbs ib_umad rdma_cm rdma_ucm rdma_rxe)
read -r -a more_mods <<< "${TERN_GUEST_MODULES:-}"
modules+=("${more_mods[@]}")

manifest=$(mktemp)
stage=
trap 'rm -rf "$manifest" ${stage:+"$stage"}' EXIT
add() { printf '%s %s\n' "$1" "$2" >> "$manifest"; }	# add DST SRC
# ldd runs the dynamic loader once per file anyway; calling it directly is 5x faster.
ldso=(/lib64/ld-linux-x86-64.so.2 --list)
[ -x "${ldso[0]}" ] || ldso=(ldd)
add_elf() {	# an executable or library at its own path, plus the libraries it needs
	local f=$1 lib
	add "$f" "$f"
	while read -r lib; do add "$lib" "$lib"; done < <("${ldso[@]}" "$f" 2>/dev/null |
		sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p')
}
add_tree() {	# a file or a directory, to DST
	local src=$1 dst=$2 f
	if [ -d "$src" ]; then
		while IFS= read -r f; do add "$dst${f#"$src"}" "$f"; done < <(find "$src" -type f)
	else
		add "$dst" "$src"
	fi
}

for b in "${bins[@]}"; do
	p=$(command -v "$b") || die "$b not found on the host (run scripts/setup-host.sh)"
	add_elf "$p"
done
add /bin/busybox "$(command -v busybox)"
add /init "$TERN_TOP/scripts/guest/init"
add /sbin/tern-agent "$agent"
add /sbin/tern-failnth "$failnth"

for list in "${lists[@]}"; do
	[ -r "$list" ] || die "cannot read list file $list"
	lineno=0
	while IFS= read -r line || [ -n "$line" ]; do
		lineno=$((lineno + 1))
		line=${line%%#*}
		read -r -a words <<< "$line"
		[ ${#words[@]} -gt 0 ] || continue
		verb=${words[0]} optional=0
		[ "${verb#\?}" != "$verb" ] && optional=1 && verb=${verb#\?}
		args=("${words[@]:1}")
		where="$list:$lineno"
		if [ "$verb" = mod ]; then
			for m in "${args[@]}"; do
				# ?mod: only if this kernel has it (as a module or built in)
				[ $optional = 1 ] && ! modinfo -b "$kroot" -k "$kver" "$m" >/dev/null 2>&1 &&
					continue
				modules+=("$m")
			done
			continue
		fi
		[ ${#args[@]} -gt 0 ] || die "$where: '$verb' needs an argument"
		if [ "$verb" = file ]; then
			[ ${#args[@]} -le 2 ] || die "$where: file SRC [DST]"
			pats=("${args[0]}")
		else
			[ "$verb" = bin ] || [ "$verb" = lib ] || die "$where: unknown directive '$verb'"
			pats=("${args[@]}")
		fi
		# Expand globs; a pattern that matches nothing counts as missing.
		matched=()
		for pat in "${pats[@]}"; do
			# shellcheck disable=SC2206 # glob expansion is wanted here
			exp=($pat)
			if [ ${#exp[@]} -eq 0 ] || [ ! -e "${exp[0]}" ]; then
				[ $optional = 1 ] && continue
				die "$where: $pat does not exist"
			fi
			matched+=("${exp[@]}")
		done
		for src in "${matched[@]}"; do
			case "$verb" in
			bin|lib) add_elf "$src" ;;
			file) add_tree "$src" "${args[1]:-$src}" ;;
			esac
		done
	done < "$list"
done

# Kernel modules: ours first (their dependencies join the list), then the stock ones.
kmods=$kroot/lib/modules/$kver
extra_kos=("$fout"/modules/*.ko)
for ko in "${extra_kos[@]}"; do
	add "/lib/modules/$kver/extra/${ko##*/}" "$ko"
	read -r -a kdeps <<< "$(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' ')"
	for d in "${kdeps[@]}"; do
		[ -f "$fout/modules/$d.ko" ] || modules+=("$d")
	done
done
for f in modules.order modules.builtin modules.builtin.modinfo; do
	add "/lib/modules/$kver/$f" "$kmods/$f"
done
deps=$(modprobe -d "$kroot" -S "$kver" -a --show-depends "${modules[@]}" 2>&1) ||
	die "modules ${modules[*]}: $deps"
while read -r verb path _; do
	[ "$verb" = insmod ] || continue
	add "${path#"$kroot"}" "$path"
done <<< "$deps"

sort -u -o "$manifest" "$manifest"

# --- up to date? --------------------------------------------------------------------------
key=$({
	cat "$manifest" "$0" "${lists[@]}"
	echo "$kver ${TERN_GUEST_SH:-}"
	# contents, not sizes and mtimes: dpkg -x gives a package's files the changelog's date,
	# so a rebuilt provider of the same size would otherwise leave a stale image
	cut -d' ' -f2 "$manifest" | xargs sha256sum
} | sha256sum | cut -c1-32)
if [ $force = 0 ] && [ -f "$out" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
	echo "$out"
	exit 0
fi

# --- stage and pack -----------------------------------------------------------------------
log "building $out"
stage=$(mktemp -d "$fout/initramfs.stage.XXXXXX")
# mktemp made it 0700, and it becomes the guests' /: users other than root (verbs.t's
# unprivileged RDMA user) could open nothing
chmod 0755 "$stage"
mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc/tern/init.d,dev,proc,sys,run,tmp,root}
mkdir -p "$stage"/var/{log,run} "$stage/sys/kernel/debug" "$stage/mnt"
for d in bin sbin lib lib64; do ln -s "usr/$d" "$stage/$d"; done
declare -A made
while read -r dst src; do
	dir=${dst%/*}
	[ -n "${made[d$dir]:-}" ] || { mkdir -p "$stage$dir"; made[d$dir]=1; }
	cp -L --preserve=mode "$src" "$stage$dst"
done < "$manifest"
chmod 0755 "$stage/init" "$stage/sbin/tern-agent" "$stage/sbin/tern-failnth"

depmod -b "$stage" "$kver"

# busybox applets wherever no real binary of that name was installed (one process, not 400)
"$stage/bin/busybox" --list | /usr/bin/python3 -c '
import os, sys
stage = sys.argv[1]
for name in sys.stdin.read().split():
    if not any(os.path.lexists(os.path.join(stage, d, name)) for d in ("usr/bin", "usr/sbin")):
        os.symlink("/bin/busybox", os.path.join(stage, "usr/bin", name))
' "$stage"

# Debian's static busybox runs its own applets before anything on PATH when it is the shell
# (it would shadow iproute2's ip, for one): /bin/sh must be a real shell. Under TCG a dynamic
# shell costs little more than busybox's once ASLR is off (the harness boots with norandmaps).
ln -sf "${TERN_GUEST_SH:-bash}" "$stage/usr/bin/sh"
printf 'root:x:0:0:root:/root:/bin/sh\n' > "$stage/etc/passwd"
printf 'root:x:0:\n' > "$stage/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$stage/etc/hosts"
printf 'hosts: files\n' > "$stage/etc/nsswitch.conf"
if [ "$(id -u)" = 0 ]; then
	mknod -m 600 "$stage/dev/console" c 5 1
	mknod -m 666 "$stage/dev/null" c 1 3
fi

(cd "$stage" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
	case $out in
	*.gz) gzip -"${TERN_INITRAMFS_GZIP:-6}" ;;
	*) cat ;;
	esac > "$out.tmp"
mv "$out.tmp" "$out"
echo "$key" > "$stamp"
log "initramfs: $(du -h "$out" | cut -f1) $(case $out in *.gz) echo compressed ;;
	*) echo uncompressed ;; esac), $(du -sh "$stage" | cut -f1) unpacked," \
	"$(wc -l < "$manifest") files"
echo "$out"
