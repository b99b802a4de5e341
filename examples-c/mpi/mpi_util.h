/*
 * mpi_util.h: what the MPI programs of examples-c/mpi/ share: the grid of
 * ranks from the command line, a rank's part of a golden field (every
 * rank reads the whole file and keeps its own sites, as a test does; a
 * production code reads its part), and checks over all ranks.
 */
#ifndef LATSOL_MPI_UTIL_H
#define LATSOL_MPI_UTIL_H

#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "../quda-api/golden_util.h"

/* The golden sets' lattice. */
static const int GLOBAL[4] = {6, 4, 4, 8};

/* "X,Y,Z,T" into grid (exits 2 on anything else). */
static inline void parse_grid(const char *s, int grid[4]) {
  if (sscanf(s, "%d,%d,%d,%d", &grid[0], &grid[1], &grid[2], &grid[3]) != 4) {
    fprintf(stderr, "a grid is X,Y,Z,T, not %s\n", s);
    exit(2);
  }
}

/* MPI_Init, the command line (CLOVER_DIR X,Y,Z,T), this rank and the size. */
static inline void start(int *argc, char ***argv, int grid[4], int *rank, int *size) {
  MPI_Init(argc, argv);
  if (*argc != 3) {
    fprintf(stderr, "usage: %s CLOVER_DIR X,Y,Z,T\n", (*argv)[0]);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  parse_grid((*argv)[2], grid);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
}

static inline size_t volume(const int d[4]) { return (size_t)d[0] * d[1] * d[2] * d[3]; }

/* The even-odd index of site x on a lattice of extents d. */
static inline size_t eo_index(const int d[4], const int x[4]) {
  const size_t lex = x[0] + (size_t)d[0] * (x[1] + (size_t)d[1] * (x[2] + (size_t)d[2] * x[3]));
  return ((x[0] + x[1] + x[2] + x[3]) % 2) * (volume(d) / 2) + lex / 2;
}

/* This rank's part: local extents and the global coordinates of its first site. */
typedef struct {
  int local[4], origin[4];
} part_t;

/* The part of grid coordinates c. */
static inline part_t part_at(const int grid[4], const int c[4]) {
  part_t p;
  for (int mu = 0; mu < 4; mu++) {
    p.local[mu] = GLOBAL[mu] / grid[mu];
    p.origin[mu] = c[mu] * p.local[mu];
  }
  return p;
}

/* The local part of a global field of `per` doubles a site (even-odd order). */
static inline double *local_of(const part_t *p, const double *global, size_t per) {
  double *out = malloc(volume(p->local) * per * sizeof(double));
  int x[4];
  for (x[3] = 0; x[3] < p->local[3]; x[3]++)
    for (x[2] = 0; x[2] < p->local[2]; x[2]++)
      for (x[1] = 0; x[1] < p->local[1]; x[1]++)
        for (x[0] = 0; x[0] < p->local[0]; x[0]++) {
          int g[4];
          for (int mu = 0; mu < 4; mu++) g[mu] = p->origin[mu] + x[mu];
          const size_t i = eo_index(p->local, x), j = eo_index(GLOBAL, g);
          for (size_t k = 0; k < per; k++) out[i * per + k] = global[j * per + k];
        }
  return out;
}

/* The local links in QDP order (four arrays in one), the anti-periodic sign
 * folded into the T links of the global last time slice. */
static inline double *local_links_qdp(const part_t *p, const double *global_qdp) {
  const size_t V = volume(GLOBAL), v = volume(p->local);
  double *out = malloc(4 * v * 18 * sizeof(double));
  for (int mu = 0; mu < 4; mu++) {
    double *part = local_of(p, global_qdp + mu * V * 18, 18);
    int x[4];
    for (x[3] = 0; x[3] < p->local[3]; x[3]++)
      for (x[2] = 0; x[2] < p->local[2]; x[2]++)
        for (x[1] = 0; x[1] < p->local[1]; x[1]++)
          for (x[0] = 0; x[0] < p->local[0]; x[0]++)
            if (mu == 3 && p->origin[3] + x[3] == GLOBAL[3] - 1)
              for (int k = 0; k < 18; k++) part[eo_index(p->local, x) * 18 + k] *= -1;
    for (size_t k = 0; k < v * 18; k++) out[mu * v * 18 + k] = part[k];
    free(part);
  }
  return out;
}

/* |a - b| / |b| over every rank. */
static inline double rel_diff_all(const double *a, const double *b, size_t n) {
  double s[2] = {0, 0}, all[2];
  for (size_t i = 0; i < n; i++) {
    s[0] += (a[i] - b[i]) * (a[i] - b[i]);
    s[1] += b[i] * b[i];
  }
  MPI_Allreduce(s, all, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return sqrt(all[0] / all[1]);
}

/* `check` of a value every rank holds alike: printed by rank 0 only. */
static inline void check_all(const char *what, double err, double bound) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    check(what, err, bound);
  else if (!(err <= bound))
    failures++;
}

/* Rank 0 says whether every rank's checks passed; the exit status. */
static inline int finish(void) {
  int all = 0, rank;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    if (all)
      printf("%d check(s) FAILED\n", all);
    else
      printf("all checks passed\n");
  }
  MPI_Finalize();
  return all ? 1 : 0;
}

#endif
