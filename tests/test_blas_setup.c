/* SPDX-License-Identifier: Apache-2.0 */
/* OpenBLAS's setup (engine/src/core/blas_setup.c), done when the first
 * context is made: the core OpenBLAS runs serves this CPU, or is the one
 * OPENBLAS_CORETYPE names when the user set it and the program said so
 * with blas_keep_core, as the CLI and the server do (ctest runs this
 * program both ways); sgemm on that
 * core gives the product; and shlo_kernels_info names the core. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cblas.h>
#include <cmocka.h>

#include "shlo/context.h"
#include "shlo/engine.h"

/* what the environment held when the process started (the setup may set
 * and clear the variable while it switches, never leave it changed) */
static const char *coretype_at_start;

static bool cpu_has_avx2_fma(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

static void core_serves_this_cpu_or_the_user(void **state) {
  (void)state;
  const char *core = openblas_get_corename();
  assert_non_null(core);
  if (coretype_at_start) {
    assert_string_equal(getenv("OPENBLAS_CORETYPE"), coretype_at_start);
    assert_int_equal(strcasecmp(core, coretype_at_start), 0);
    return;
  }
  assert_null(getenv("OPENBLAS_CORETYPE"));
  if (!cpu_has_avx2_fma()) return; /* OpenBLAS's own pick stands */
  static const char *const avx2_cores[] = {"Haswell", "Zen", "SkylakeX",
                                           "Cooperlake", "SapphireRapids"};
  bool found = false;
  for (size_t i = 0; i < sizeof avx2_cores / sizeof avx2_cores[0]; i++)
    found = found || !strcasecmp(core, avx2_cores[i]);
  if (!found) fail_msg("OpenBLAS runs core %s on a CPU with AVX2 and FMA", core);
}

/* A product large enough for OpenBLAS's blocked kernels, with edges that
 * are not multiples of any register block, against a double loop. */
static void sgemm_on_the_core_is_the_product(void **state) {
  (void)state;
  enum { M = 203, N = 157, K = 171 };
  float *a = malloc(sizeof(float) * M * K), *b = malloc(sizeof(float) * K * N);
  float *c = malloc(sizeof(float) * M * N);
  assert_non_null(a);
  assert_non_null(b);
  assert_non_null(c);
  uint32_t s = 12345;
  for (int i = 0; i < M * K; i++) {
    s = s * 1664525u + 1013904223u;
    a[i] = (float)(s >> 8) / (float)(1 << 24) - 0.5f;
  }
  for (int i = 0; i < K * N; i++) {
    s = s * 1664525u + 1013904223u;
    b[i] = (float)(s >> 8) / (float)(1 << 24) - 0.5f;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K,
              b, N, 0.0f, c, N);
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double want = 0, mag = 0;
      for (int k = 0; k < K; k++) {
        want += (double)a[i * K + k] * b[k * N + j];
        mag += fabs((double)a[i * K + k] * b[k * N + j]);
      }
      /* f32 accumulation in any order: K roundings of at most mag's size */
      if (fabs(c[i * N + j] - want) > K * 0x1p-24 * mag + 1e-30)
        fail_msg("c[%d][%d] = %.9g, want %.9g", i, j, c[i * N + j], want);
    }
  free(a);
  free(b);
  free(c);
}

static void kernels_info_names_the_core(void **state) {
  (void)state;
  const char *info = shlo_kernels_info();
  const char *blas = strstr(info, "blas ");
  assert_non_null(strstr(info, "vmath "));
  assert_non_null(blas);
  const char *core = openblas_get_corename();
  assert_int_equal(strncasecmp(blas + 5, core, strlen(core)), 0);
}

int main(void) {
  coretype_at_start = getenv("OPENBLAS_CORETYPE");
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.blas_keep_core = coretype_at_start != NULL;
  if (shlo_default_context_configure(&o) != SHLO_OK || !shlo_default_context())
    return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(core_serves_this_cpu_or_the_user),
      cmocka_unit_test(sgemm_on_the_core_is_the_product),
      cmocka_unit_test(kernels_info_names_the_core),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
