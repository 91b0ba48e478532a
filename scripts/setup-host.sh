#!/usr/bin/env bash
# Install what building and testing tern needs on a Debian 12 machine (idempotent).
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

stamp=$TERN_CACHE/setup-host.stamp
pkgs=(
	# kernel module build and static checks
	build-essential bc bison flex libelf-dev libssl-dev sparse dwarves kmod
	linux-headers-amd64 linux-source-6.1 dpkg-dev
	# QEMU 7.2 from Debian's source
	ninja-build meson pkg-config python3 python3-venv libglib2.0-dev libpixman-1-dev
	libslirp-dev libfdt-dev zlib1g-dev qemu-system-data seabios
	# guests: initramfs contents and tools run inside them
	busybox-static cpio gzip iproute2 ethtool iperf3 iputils-ping procps
	# host tests; the model's fuzzers (tests/host/fuzz.t: clang's libFuzzer)
	perl clang libclang-rt-14-dev
	# RDMA: the provider is built in rdma-core's source (scripts/build-provider.sh); guests
	# run Debian's libibverbs, its utilities, perftest and Soft-RoCE's provider
	cmake libibverbs-dev librdmacm-dev ibverbs-utils ibverbs-providers rdmacm-utils perftest
	rdma-core
	# storage over RDMA in guests (tests/guest/storage.t): NVMe-oF host tools, fio, and the
	# NFS server and client userland (exportfs, rpc.mountd, rpc.nfsd, mount.nfs4)
	nvme-cli fio nfs-kernel-server nfs-common netbase
	# RDMA middleware and diagnostics in guests (tests/guest/apps.t, the apps image): UCX,
	# libfabric, Open MPI, qperf; iSER (open-iscsi) and SMB Direct (ksmbd, cifs) in storage.t
	ucx-utils libfabric-bin openmpi-bin libopenmpi-dev qperf open-iscsi ksmbd-tools cifs-utils
	# mpirun's remote launcher in the guests (tests/apps/mpi.py): Dropbear's ssh server/client
	dropbear-bin
	# debug guest kernel (scripts/build-debug-kernel.sh)
	ccache
	# the NIC model as an ns-3 device (model/ns3, tests/host/ns3.t): Debian's ns-3 3.37
	libns3-dev
	# the PTP hardware clock in guests (tests/guest/ethernet.t): linuxptp's phc_ctl, ptp4l
	linuxptp
	# decoding captured RoCEv2 traffic (bench/loss.py and tests looking at the wire)
	tshark
	# Debian packages of the driver (scripts/build-packages.sh): tern-dkms and the provider
	debhelper dh-dkms dkms fakeroot lsb-release
	# the manual (scripts/build-docs.sh, tests/static/docs.t); kernel-doc comes from
	# linux-source-6.1 above
	python3-sphinx
	# benchmark results as plots (bench/results.py, bench/plots.py, tests/static/bench.t)
	python3-matplotlib
)
want=$(printf '%s\n' "${pkgs[@]}" | sort | sha256sum | cut -c1-16)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	log "host packages already installed"
	exit 0
fi
"$TERN_TOP/scripts/lib/apt-sources.sh" >/dev/null
log "apt-get update"
apt-get update -q >/dev/null
# wireshark-common asks whether non-root users may capture; no (and no question).
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
log "installing ${#pkgs[@]} packages"
DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${pkgs[@]}" >/dev/null
echo "$want" > "$stamp"
log "host packages installed"
