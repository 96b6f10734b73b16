/* OpenBLAS's process-wide setup, done once when the engine is loaded.
 *
 * Two things, both before any BLAS call:
 *  - OpenBLAS keeps one thread: the engine splits GEMMs over its own pool,
 *    and OpenBLAS's own workers would only take cores from it.
 *  - The core (kernel set) OpenBLAS runs is one this CPU can run at its
 *    best.  OpenBLAS picks it from the CPU's family and model; a CPU newer
 *    than the OpenBLAS release (Debian 12 ships 0.3.21) is unknown to it,
 *    and it falls back to an SSE3 core (Prescott), some five times slower
 *    at sgemm on an AVX-512 machine.  When that happens and the CPU has
 *    AVX2 and FMA, the setup switches OpenBLAS to SkylakeX (AVX-512 F, BW,
 *    DQ and VL usable) or Haswell.  A core OpenBLAS did recognise is kept,
 *    and so is OPENBLAS_CORETYPE when the user set it. */
#ifndef SHLO_BLAS_SETUP_H
#define SHLO_BLAS_SETUP_H

/* Do the setup; the first call does it, later ones nothing (from any
 * thread).  The library's load calls it (blas_setup.c, linalg_common.c). */
void shlo__blas_setup(void);

/* What the setup left, for benchmarks and reports: "SkylakeX", or
 * "SkylakeX (OpenBLAS picked Prescott)" when the setup switched it. */
const char *shlo__blas_core(void);

#endif
