// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-pingpong: a ping-pong between rank 0 and rank 1 (tests/apps/mpi.py). For each message
 * size, rank 0 sends a buffer whose every byte depends on (size, iteration, offset), rank 1
 * checks every byte and answers with a different pattern, which rank 0 checks in turn. Prints
 * one line per size (round-trip latency, bandwidth) and "pingpong: ok"; any wrong byte aborts
 * the job with the offset and the values.
 *
 * usage: mpi-pingpong ITERS SIZE...
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(size_t size, int iter, size_t i, int reply)
{
	uint32_t x = (uint32_t)(i * 2654435761u) ^ (uint32_t)(iter * 40503u) ^
		     (uint32_t)size ^ (reply ? 0x5a5a5a5au : 0);

	return (unsigned char)(x ^ x >> 8 ^ x >> 16 ^ x >> 24);
}

static void fill(unsigned char *b, size_t size, int iter, int reply)
{
	for (size_t i = 0; i < size; i++)
		b[i] = pattern(size, iter, i, reply);
}

static void check(const unsigned char *b, size_t size, int iter, int reply, int rank)
{
	for (size_t i = 0; i < size; i++) {
		unsigned char want = pattern(size, iter, i, reply);

		if (b[i] != want) {
			fprintf(stderr, "rank %d: size %zu iteration %d: byte %zu is 0x%02x, "
				"expected 0x%02x\n", rank, size, iter, i, b[i], want);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
}

int main(int argc, char **argv)
{
	int rank, nprocs, iters;
	char name[MPI_MAX_PROCESSOR_NAME];
	int namelen;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	MPI_Get_processor_name(name, &namelen);
	printf("rank %d of %d on %s\n", rank, nprocs, name);
	fflush(stdout);
	if (nprocs != 2 || argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun -np 2 %s ITERS SIZE...\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	iters = atoi(argv[1]);
	for (int a = 2; a < argc; a++) {
		size_t size = strtoul(argv[a], NULL, 0);
		unsigned char *out = malloc(size ? size : 1), *in = malloc(size ? size : 1);
		double t0, t;

		if (!out || !in)
			MPI_Abort(MPI_COMM_WORLD, 1);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int it = 0; it < iters; it++) {
			if (rank == 0) {
				fill(out, size, it, 0);
				MPI_Send(out, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD);
				MPI_Recv(in, (int)size, MPI_BYTE, 1, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				check(in, size, it, 1, rank);
			} else {
				MPI_Recv(in, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD,
					 MPI_STATUS_IGNORE);
				check(in, size, it, 0, rank);
				fill(out, size, it, 1);
				MPI_Send(out, (int)size, MPI_BYTE, 0, it, MPI_COMM_WORLD);
			}
		}
		t = MPI_Wtime() - t0;
		if (rank == 0)
			printf("pingpong size %zu iterations %d: round trip %.1f us, %.2f MB/s\n",
			       size, iters, t / iters * 1e6, 2.0 * size * iters / t / 1e6);
		free(out);
		free(in);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("pingpong: ok\n");
	MPI_Finalize();
	return 0;
}
