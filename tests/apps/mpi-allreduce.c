// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-allreduce: MPI_Allreduce across all ranks (tests/apps/mpi.py) of int64 sums, double
 * sums (exact: small integers) and int maxima, for each count given; every element of the
 * result is compared with the value computed locally. Prints "allreduce: ok" when all match
 * on every rank; a wrong element aborts the job.
 *
 * usage: mpi-allreduce ROUNDS COUNT...
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t contrib(int rank, int round, size_t i)
{
	return (int64_t)rank * 1000003 + (int64_t)i * 7 + round;
}

int main(int argc, char **argv)
{
	int rank, nprocs, rounds;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
	if (argc < 3) {
		if (rank == 0)
			fprintf(stderr, "usage: mpirun %s ROUNDS COUNT...\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	rounds = atoi(argv[1]);
	for (int a = 2; a < argc; a++) {
		size_t n = strtoul(argv[a], NULL, 0);
		int64_t *s = malloc(n * sizeof(*s)), *sr = malloc(n * sizeof(*sr));
		double *d = malloc(n * sizeof(*d)), *dr = malloc(n * sizeof(*dr));
		int *m = malloc(n * sizeof(*m)), *mr = malloc(n * sizeof(*mr));
		double t0 = MPI_Wtime();

		if (!s || !sr || !d || !dr || !m || !mr)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int r = 0; r < rounds; r++) {
			for (size_t i = 0; i < n; i++) {
				s[i] = contrib(rank, r, i);
				d[i] = (double)(rank + 1) * (double)(i % 1024) + r;
				m[i] = (int)((i * 31 + (size_t)rank * 17 + (size_t)r) % 1000);
			}
			MPI_Allreduce(s, sr, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(d, dr, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
			MPI_Allreduce(m, mr, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
			for (size_t i = 0; i < n; i++) {
				int64_t ws = 0;
				double wd = 0;
				int wm = -1;

				for (int p = 0; p < nprocs; p++) {
					int v = (int)((i * 31 + (size_t)p * 17 + (size_t)r) % 1000);

					ws += contrib(p, r, i);
					wd += (double)(p + 1) * (double)(i % 1024) + r;
					wm = v > wm ? v : wm;
				}
				if (sr[i] != ws || dr[i] != wd || mr[i] != wm) {
					fprintf(stderr, "rank %d: count %zu round %d element %zu: "
						"sum %lld (want %lld), dsum %g (want %g), "
						"max %d (want %d)\n", rank, n, r, i,
						(long long)sr[i], (long long)ws, dr[i], wd,
						mr[i], wm);
					MPI_Abort(MPI_COMM_WORLD, 2);
				}
			}
		}
		if (rank == 0)
			printf("allreduce count %zu rounds %d: %.1f us per allreduce\n", n, rounds,
			       (MPI_Wtime() - t0) / rounds / 3 * 1e6);
		free(s);
		free(sr);
		free(d);
		free(dr);
		free(m);
		free(mr);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("allreduce: ok on %d ranks\n", nprocs);
	MPI_Finalize();
	return 0;
}
