/*
 * golden_util.h: what the C programs of examples-c/quda-api/ share: reading
 * a golden data file, comparing vectors, and counting failed checks.
 */
#ifndef LATSOL_QUDA_API_GOLDEN_UTIL_H
#define LATSOL_QUDA_API_GOLDEN_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int failures = 0;

/* n raw little-endian doubles of DIR/NAME (exits 2 if they are missing). */
static inline double *read_f64(const char *dir, const char *name, size_t n) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  double *v = malloc(n * sizeof(double));
  FILE *f = fopen(path, "rb");
  if (!v || !f || fread(v, sizeof(double), n, f) != n) {
    fprintf(stderr, "cannot read %zu doubles from %s\n", n, path);
    exit(2);
  }
  fclose(f);
  return v;
}

/* |a - b| / |b|. */
static inline double rel_diff(const double *a, const double *b, size_t n) {
  double d = 0, r = 0;
  for (size_t i = 0; i < n; i++) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    r += b[i] * b[i];
  }
  return sqrt(d / r);
}

/* Prints a check and counts it if err exceeds bound. */
static inline void check(const char *what, double err, double bound) {
  const int ok = err <= bound;
  printf("%-52s %.2e (bound %.0e) %s\n", what, err, bound, ok ? "ok" : "FAILED");
  if (!ok) failures++;
}

#endif
