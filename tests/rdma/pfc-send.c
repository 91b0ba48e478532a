// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pfc-send: send 802.1Qbb PFC frames on an interface through an AF_PACKET socket, as a
 * misbehaving peer in a PFC storm would (tests/guest/dcb.t).
 *
 *   pfc-send IFACE PRIO SECONDS [QUANTA [INTERVAL_US]]
 *
 * Every INTERVAL_US microseconds (default 1000; below 1000 the program spins between frames)
 * for SECONDS seconds, one PFC frame that pauses priority PRIO for QUANTA pause quanta
 * (default 65535: XOFF). Prints the number of frames sent. Needs CAP_NET_RAW.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PFC_ETHERTYPE	0x8808
#define PFC_OPCODE	0x0101
#define FRAME_LEN	60	/* minimum Ethernet frame without FCS */

static unsigned long arg(const char *s, const char *what, unsigned long max)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v > max) {
		fprintf(stderr, "pfc-send: bad %s '%s' (0..%lu)\n", what, s, max);
		exit(2);
	}
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const uint8_t dmac[6] = { 0x01, 0x80, 0xc2, 0x00, 0x00, 0x01 };
	unsigned long prio, secs, quanta = 0xffff, interval = 1000, sent = 0;
	struct sockaddr_ll sll;
	uint8_t frame[FRAME_LEN];
	struct timespec gap;
	struct ifreq ifr;
	double start, end;
	int fd;

	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: pfc-send IFACE PRIO SECONDS [QUANTA [INTERVAL_US]]\n");
		return 2;
	}
	prio = arg(argv[2], "priority", 7);
	secs = arg(argv[3], "duration", 3600);
	if (argc > 4)
		quanta = arg(argv[4], "quanta", 0xffff);
	if (argc > 5)
		interval = arg(argv[5], "interval", 1000000);

	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0) {
		perror("pfc-send: socket");
		return 1;
	}
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", argv[1]);
	if (ioctl(fd, SIOCGIFINDEX, &ifr) < 0) {
		perror("pfc-send: SIOCGIFINDEX");
		return 1;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_ifindex = ifr.ifr_ifindex;
	sll.sll_halen = 6;
	memcpy(sll.sll_addr, dmac, 6);
	if (ioctl(fd, SIOCGIFHWADDR, &ifr) < 0) {
		perror("pfc-send: SIOCGIFHWADDR");
		return 1;
	}

	memset(frame, 0, sizeof(frame));
	memcpy(frame, dmac, 6);
	memcpy(frame + 6, ifr.ifr_hwaddr.sa_data, 6);
	frame[12] = PFC_ETHERTYPE >> 8;
	frame[13] = PFC_ETHERTYPE & 0xff;
	frame[14] = PFC_OPCODE >> 8;
	frame[15] = PFC_OPCODE & 0xff;
	frame[16] = 0;				/* class-enable vector, bit p: priority p */
	frame[17] = 1u << prio;
	frame[18 + 2 * prio] = quanta >> 8;	/* time of priority p */
	frame[19 + 2 * prio] = quanta & 0xff;

	gap.tv_sec = interval / 1000000;
	gap.tv_nsec = (interval % 1000000) * 1000;
	start = now();
	end = start + secs;
	do {
		if (sendto(fd, frame, sizeof(frame), 0, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
			if (errno != ENOBUFS && errno != EAGAIN) {
				perror("pfc-send: sendto");
				return 1;
			}
		} else {
			sent++;
		}
		/*
		 * Sleeps are at least a timer tick in a guest: below a millisecond, spin to the
		 * next frame's time instead (pause quanta at 25 Gb/s last 20 ns: 65535 of them
		 * only 1.3 ms, and a storm needs the pause kept up without a gap).
		 */
		if (interval >= 1000)
			nanosleep(&gap, NULL);
		else
			while (now() < start + (sent + 1) * interval / 1e6 && now() < end)
				;
	} while (now() < end);
	printf("%lu\n", sent);
	close(fd);
	return 0;
}
