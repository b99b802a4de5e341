/* A host program under a memory limit (setrlimit(RLIMIT_AS)) asks latsol for
 * lattices that do not fit: every call must return LATSOL_ERROR_OUT_OF_MEMORY
 * naming the size and what it was for, never abort the process, and the
 * context must stay usable. Run by tests/out_of_memory.rs; exits non-zero on
 * the first failed check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "latsol.h"

static int failures = 0;

static void expect(int ok, const char *what) {
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

/* The process's current address-space size (VmSize), in bytes. */
static unsigned long long vm_size(void) {
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmSize:", 7) == 0) kib = strtoull(line + 7, NULL, 10);
    if (f) fclose(f);
    return kib * 1024ULL;
}

/* A gauge field of unit links in MILC order (site-major, 4 row-major links). */
static double *unit_links(size_t volume) {
    double *links = calloc(volume * 4 * 18, sizeof(double));
    if (!links) return NULL;
    for (size_t l = 0; l < volume * 4; l++)
        for (int c = 0; c < 3; c++) links[l * 18 + 2 * (3 * c + c)] = 1.0;
    return links;
}

int main(void) {
    latsol_init_param ip = latsol_init_param_default();
    ip.backend = LATSOL_BACKEND_CPU;
    ip.num_threads = 2;
    ip.verbosity = LATSOL_VERBOSITY_SILENT;
    latsol_context *ctx = NULL;
    if (latsol_init(&ip, &ctx) != LATSOL_SUCCESS) {
        fprintf(stderr, "latsol_init: %s\n", latsol_last_error());
        return 2;
    }

    /* The caller's links fit (382 MB); latsol's own copy of them does not. */
    latsol_gauge_param gp = latsol_gauge_param_default();
    gp.dims[0] = gp.dims[1] = gp.dims[2] = 24;
    gp.dims[3] = 48;
    gp.order = LATSOL_GAUGE_ORDER_MILC;
    size_t volume = 24 * 24 * 24 * 48;
    double *big = unit_links(volume);
    if (!big) {
        fprintf(stderr, "cannot allocate the test's own links\n");
        return 2;
    }
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = vm_size() + (256ULL << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0) {
        perror("setrlimit");
        return 2;
    }
    latsol_gauge *gauge = NULL;
    latsol_status s = latsol_gauge_load(ctx, &gp, big, &gauge);
    printf("load 24^3x48 under the limit: %s: %s\n", latsol_status_string(s), latsol_last_error());
    expect(s == LATSOL_ERROR_OUT_OF_MEMORY, "a gauge field that does not fit is OUT_OF_MEMORY");
    expect(strstr(latsol_last_error(), "bytes") != NULL &&
               strstr(latsol_last_error(), "gauge field") != NULL,
           "the message names the size and what it was for");
    expect(gauge == NULL, "no handle is written");
    free(big);

    /* A lattice whose links alone (144 GiB) do not fit: refused before the
     * host arrays are read (the first lattice-sized allocation fails; the
     * neighbour tables are built later, by the CPU backend's first use). */
    double dummy[18] = {0};
    const void *table[4] = {dummy, dummy, dummy, dummy};
    latsol_gauge_param huge = latsol_gauge_param_default();
    huge.dims[0] = huge.dims[1] = huge.dims[2] = huge.dims[3] = 128;
    s = latsol_gauge_load(ctx, &huge, table, &gauge);
    printf("load 128^4: %s: %s\n", latsol_status_string(s), latsol_last_error());
    expect(s == LATSOL_ERROR_OUT_OF_MEMORY, "a 128^4 lattice is OUT_OF_MEMORY");
    expect(strstr(latsol_last_error(), "gauge field") != NULL &&
               strstr(latsol_last_error(), "[128, 128, 128, 128]") != NULL,
           "the message names the field and the lattice");

    /* The context is still usable: a small solve succeeds. */
    latsol_gauge_param sp = latsol_gauge_param_default();
    sp.order = LATSOL_GAUGE_ORDER_MILC;
    size_t v4 = 4 * 4 * 4 * 4;
    double *small = unit_links(v4);
    double *src = calloc(v4 * 24, sizeof(double));
    double *sol = calloc(v4 * 24, sizeof(double));
    if (!small || !src || !sol) {
        fprintf(stderr, "cannot allocate the small fields\n");
        return 2;
    }
    src[0] = 1.0;
    s = latsol_gauge_load(ctx, &sp, small, &gauge);
    expect(s == LATSOL_SUCCESS, "a small gauge field loads after the failures");
    if (s == LATSOL_SUCCESS) {
        latsol_invert_param p = latsol_invert_param_default();
        latsol_invert_result r = latsol_invert_result_default();
        s = latsol_invert(ctx, gauge, &p, sol, src, &r);
        expect(s == LATSOL_SUCCESS && r.true_residual <= p.tol, "and solves");
        latsol_gauge_free(gauge);
    }
    free(small);
    free(src);
    free(sol);
    latsol_end(ctx);
    printf("%s\n", failures ? "FAILED" : "all checks passed");
    return failures ? 1 : 0;
}
