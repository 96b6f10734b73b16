/* SPDX-License-Identifier: Apache-2.0 */
/* shlo_kernels_info (shlo/engine.h): the run-time picks of vmath.c,
 * blas_setup.c and gemm_bf16.c in one line. */
#include <pthread.h>
#include <stdio.h>

#include "core/blas_setup.h"
#include "kernels/gemm_bf16.h"
#include "kernels/vmath.h"
#include "shlo/engine.h"

static char info_text[160];
static pthread_once_t info_once = PTHREAD_ONCE_INIT;

static void info_write(void) {
  snprintf(info_text, sizeof info_text, "vmath %s, blas %s, bf16 gemm %s",
           shlo__vmath_isa(), shlo__blas_core(),
           shlo__gemm_bf16_available() ? "avx512_bf16" : "widened to f32");
}

const char *shlo_kernels_info(void) {
  /* the picks are made once, so one text serves every caller */
  pthread_once(&info_once, info_write);
  return info_text;
}
