#!/bin/sh
# Print the kernel release to build tern's modules for: $KVER if set; else the running kernel
# when its headers are installed; else the Debian 6.1 ABI that linux-headers-amd64 resolves to.
if [ -n "${KVER:-}" ]; then echo "$KVER"; exit 0; fi
if [ -d "/lib/modules/$(uname -r)/build" ]; then uname -r; exit 0; fi
apt-cache depends linux-headers-amd64 2>/dev/null |
	sed -n 's/.*Depends: linux-headers-\(.*\)$/\1/p' | head -n 1
