/*
 * malloc_quda.h: the part of QUDA's memory-pool header (include/malloc_quda.h
 * of QUDA develop 9521952) that client packages use: the device-pool
 * allocation macros pool_device_malloc(size) and pool_device_free(ptr), which
 * PyQUDA (pyquda/src/malloc_quda.cpp) hands to CuPy and PyTorch as their
 * allocator. Written for latsol, not copied from QUDA.
 *
 * latsol keeps its own device fields and offers no allocator for a client's
 * arrays: the functions below exist so that such clients build and link
 * unchanged, and a call stops (or, with LATSOL_QUDA_ON_ERROR=return, returns
 * NULL) naming itself as not provided, as every QUDA function latsol does not
 * provide does (docs/quda-compat.md).
 */
#ifndef LATSOL_MALLOC_QUDA_H
#define LATSOL_MALLOC_QUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *latsol_quda_pool_device_malloc(size_t size);
void latsol_quda_pool_device_free(void *ptr);

#ifdef __cplusplus
}
#endif

#define pool_device_malloc(size) latsol_quda_pool_device_malloc(size)
#define pool_device_free(ptr) latsol_quda_pool_device_free(ptr)

#endif /* LATSOL_MALLOC_QUDA_H */
