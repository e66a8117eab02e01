/* A small MPI + OpenMP application for the real-application tests: Jacobi sweeps on an
 * N x N grid split in row blocks over the ranks, halo rows exchanged with MPI_Sendrecv,
 * each rank's rows swept by its OpenMP threads. It reports what a real code does: its rank
 * and thread counts, its own time for the sweeps (start-up excluded) and a rate.
 *
 * Built with the mpich wheel's mpicc (libmpi.so.12, the MPICH ABI family).
 * Usage: jacobi N [ITERATIONS]
 */
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = argc > 1 ? atol(argv[1]) : 512;
    int iters = argc > 2 ? atoi(argv[2]) : 50;
    long rows = n / size + (rank < n % size ? 1 : 0);
    double *a = calloc((rows + 2) * n, sizeof(double));
    double *b = calloc((rows + 2) * n, sizeof(double));
    for (long i = 1; i <= rows; i++)
        for (long j = 0; j < n; j++) a[i * n + j] = (double)((i * 7 + j * 13) % 17);
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        MPI_Sendrecv(a + n, n, MPI_DOUBLE, up, 0, a + (rows + 1) * n, n, MPI_DOUBLE, down, 0,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Sendrecv(a + rows * n, n, MPI_DOUBLE, down, 1, a, n, MPI_DOUBLE, up, 1,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
#pragma omp parallel for schedule(static)
        for (long i = 1; i <= rows; i++)
            for (long j = 1; j < n - 1; j++)
                b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] +
                                       a[i * n + j - 1] + a[i * n + j + 1]);
        double *t = a; a = b; b = t;
    }
    double local = 0.0, total = 0.0;
    for (long i = 1; i <= rows; i++) local += a[i * n + n / 2];
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("jacobi: ranks %d threads %d n %ld iterations %d\n", size, omp_get_max_threads(),
               n, iters);
        printf("checksum %.6e\n", total);
        printf("time %.6f s\n", slowest);
        printf("rate %.3f Mupdates/s\n", (double)n * n * iters / slowest / 1e6);
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
