# SPDX-License-Identifier: GPL-2.0
# Build tern's kernel modules out of tree against installed kernel headers.
#   make                 build for $(KVER) (see scripts/lib/kver.sh)
#   make install         install into /lib/modules/$(KVER)/updates and run depmod
#   make W=1 C=2         extra warnings and sparse, as the kernel's own build takes them
KVER ?= $(shell $(CURDIR)/scripts/lib/kver.sh)
KDIR ?= /lib/modules/$(KVER)/build

all: modules

modules:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install
	depmod -a $(KVER)

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean

.PHONY: all modules install clean
