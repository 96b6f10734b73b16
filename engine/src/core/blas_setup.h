/* SPDX-License-Identifier: Apache-2.0 */
/* OpenBLAS's process-wide setup.
 *
 * Two things, both before any BLAS call (a BLAS call happens only inside
 * an execution, which runs in a context, made after both):
 *  - OpenBLAS keeps one thread: the engine splits GEMMs over its own pool,
 *    and OpenBLAS's own workers would only take cores from it.
 *  - The core (kernel set) OpenBLAS runs is one this CPU can run at its
 *    best.  OpenBLAS picks it from the CPU's family and model; a CPU newer
 *    than the OpenBLAS release (Debian 12 ships 0.3.21) is unknown to it,
 *    and it falls back to an SSE3 core (Prescott), some five times slower
 *    at sgemm on an AVX-512 machine.  When that happens and the CPU has
 *    AVX2 and FMA, the setup switches OpenBLAS to SkylakeX (AVX-512 F, BW,
 *    DQ and VL usable) or Haswell.  A core OpenBLAS did recognise is kept,
 *    and so is any core when the first context created says
 *    blas_keep_core (shlo/context.h).
 *
 * The library reads no environment variable, so whether the user chose a
 * core with OPENBLAS_CORETYPE is the program's to say: the CLI and the
 * server set blas_keep_core when it is set (OpenBLAS itself reads it when
 * it loads, before any of this).  The switch is done when the first
 * context is made, not at load, so that the program can say so first. */
#ifndef SHLO_BLAS_SETUP_H
#define SHLO_BLAS_SETUP_H

#include <stdbool.h>

/* One BLAS thread; the first call does it, later ones nothing (from any
 * thread).  The library's load calls it (blas_setup.c, linalg_common.c). */
void shlo__blas_setup(void);
/* The core switch (and the one-thread setup if not done yet); the first
 * call decides, later ones do nothing.  shlo_context_create calls it. */
void shlo__blas_setup_core(bool keep_core);

/* What the setup left, for benchmarks and reports: "SkylakeX", or
 * "SkylakeX (OpenBLAS picked Prescott)" when the setup switched it. */
const char *shlo__blas_core(void);

#endif
