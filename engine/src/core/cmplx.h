/* SPDX-License-Identifier: Apache-2.0 */
/* <complex.h> with CMPLX also under clang: glibc before 2.37 defines it
 * only for GCC's version numbers, and the fuzz build (fuzz/) uses clang. */
#ifndef SHLO_CORE_CMPLX_H
#define SHLO_CORE_CMPLX_H

#include <complex.h>

#if !defined(CMPLX) && defined(__clang__)
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

#endif
