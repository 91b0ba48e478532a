// SPDX-License-Identifier: GPL-2.0
/*
 * tern-failnth: run one kernel operation with the N-th fault-injectable allocation of this
 * task failing (/proc/thread-self/fail-nth; needs CONFIG_FAULT_INJECTION and the failslab /
 * fail_page_alloc attributes set up in debugfs). The fail-nth count is armed right before the
 * system call, so only the operation's own allocations are counted.
 *
 *   tern-failnth N load FILE.ko [PARAMS]    finit_module(FILE.ko)
 *   tern-failnth N write FILE STRING        write(2) STRING, e.g. to a driver's bind file
 *   tern-failnth N up|down DEV              SIOCSIFFLAGS (IFF_UP)
 *   tern-failnth N mtu DEV MTU              SIOCSIFMTU
 *
 * Prints "injected=0|1 rc=0|-ERRNO" and exits 0 (the test decides what is acceptable), or 2 on
 * a usage or setup error. N=0 runs the operation without injection. When nothing was injected
 * (N beyond the operation's last fault-injectable call) it also prints "calls=M", the number of
 * such calls the operation made: run it once with a large N to learn how many points there are.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

static int arm(int fd, unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	return n && write(fd, buf, len) != len ? -1 : 0;
}

/*
 * 1 if the N-th call failed; else 0, with the number of calls counted into *calls and the
 * count disarmed; -1 if it could not be disarmed.
 */
static int fired(int fd, unsigned int n, long *calls)
{
	char buf[16] = "";
	unsigned long left;

	*calls = -1;
	if (!n || pread(fd, buf, sizeof(buf) - 1, 0) <= 0)
		return 0;
	/* reads back 0 once the N-th call failed, else what was left of the count */
	left = strtoul(buf, NULL, 10);
	if (left == 0)
		return 1;
	*calls = n - left;
	/*
	 * Disarm: what is left of the count would otherwise fail one of this task's later
	 * allocations, e.g. the pipe buffer of the printf() that reports the result.
	 */
	if (write(fd, "0", 1) != 1)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int n;
	struct ifreq ifr;
	int ffd, rc, injected, sock = -1, mod = -1, file = -1;
	long calls;

	if (argc < 4) {
		fprintf(stderr, "usage: %s N load FILE [PARAMS] | write FILE STRING |"
			" up|down DEV | mtu DEV MTU\n", argv[0]);
		return 2;
	}
	n = strtoul(argv[1], NULL, 0);
	memset(&ifr, 0, sizeof(ifr));
	if (!strcmp(argv[2], "load")) {
		mod = open(argv[3], O_RDONLY | O_CLOEXEC);
		if (mod < 0) {
			perror(argv[3]);
			return 2;
		}
	} else if (!strcmp(argv[2], "write") && argc > 4) {
		file = open(argv[3], O_WRONLY | O_CLOEXEC);
		if (file < 0) {
			perror(argv[3]);
			return 2;
		}
	} else {
		sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (sock < 0 || strlen(argv[3]) >= IFNAMSIZ) {
			perror("socket");
			return 2;
		}
		strcpy(ifr.ifr_name, argv[3]);
		if (!strcmp(argv[2], "mtu") && argc > 4) {
			ifr.ifr_mtu = atoi(argv[4]);
		} else if (!strcmp(argv[2], "up") || !strcmp(argv[2], "down")) {
			if (ioctl(sock, SIOCGIFFLAGS, &ifr)) {
				perror("SIOCGIFFLAGS");
				return 2;
			}
			if (!strcmp(argv[2], "up"))
				ifr.ifr_flags |= IFF_UP;
			else
				ifr.ifr_flags &= ~IFF_UP;
		} else {
			fprintf(stderr, "unknown operation %s\n", argv[2]);
			return 2;
		}
	}
	ffd = open("/proc/thread-self/fail-nth", O_RDWR | O_CLOEXEC);
	if (ffd < 0 && n) {
		perror("/proc/thread-self/fail-nth");
		return 2;
	}
	if (arm(ffd, n)) {
		perror("fail-nth");
		return 2;
	}
	if (mod >= 0)
		rc = syscall(SYS_finit_module, mod, argc > 4 ? argv[4] : "", 0);
	else if (file >= 0)
		rc = write(file, argv[4], strlen(argv[4])) < 0 ? -1 : 0;
	else if (!strcmp(argv[2], "mtu"))
		rc = ioctl(sock, SIOCSIFMTU, &ifr);
	else
		rc = ioctl(sock, SIOCSIFFLAGS, &ifr);
	rc = rc ? -errno : 0;
	injected = fired(ffd, n, &calls);
	if (injected < 0) {
		perror("fail-nth: disarm");
		return 2;
	}
	printf("injected=%d rc=%d", injected, rc);
	if (calls >= 0)
		printf(" calls=%ld", calls);
	printf("%s%s\n", rc ? " " : "", rc ? strerror(-rc) : "");
	return 0;
}
