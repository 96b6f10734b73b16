/* SPDX-License-Identifier: Apache-2.0 */
/* Complex log_plus_one near zero: log(1 + z) must keep the digits of a
 * tiny z (computing 1 + z first loses them).  Reference values are
 * log(1 + z) evaluated with 40 significant digits (mpmath), rounded to
 * double. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/value.h"
#include "shlo/engine.h"

static void close_to(double got, double want) {
  double err = fabs(got - want), scale = fabs(want);
  if (!(err <= 4e-16 * scale || err == 0)) {
    fprintf(stderr, "got %.17g, want %.17g\n", got, want);
    fail();
  }
}

static void log_plus_one_keeps_tiny_arguments(void **state) {
  (void)state;
  const char *text =
      "func.func @main() -> tensor<3xcomplex<f64>> {\n"
      "  %c = stablehlo.constant dense<[(1.0e-10, 1.0e-10), "
      "(-1.0e-12, 3.0e-12), (0.25, -0.125)]> : tensor<3xcomplex<f64>>\n"
      "  %0 = stablehlo.log_plus_one %c : tensor<3xcomplex<f64>>\n"
      "  func.return %0 : tensor<3xcomplex<f64>>\n}\n";
  shlo_module *m;
  shlo_executable *e;
  shlo_diag d;
  shlo_diag_clear(&d);
  assert_int_equal(shlo_load(text, strlen(text), "t.mlir", NULL, &m, &e, &d),
                   SHLO_OK);
  shlo_value **r = NULL;
  int nr = 0;
  assert_int_equal(shlo_execute(e, NULL, NULL, 0, &r, &nr, &d), SHLO_OK);
  assert_int_equal(nr, 1);
  const double *v = r[0]->data;
  static const double want[6] = {1e-10, 9.999999999e-11,
                                 -9.99999999996e-13, 3.0000000000030003e-12,
                                 0.2281187167407938, -0.09966865249116202};
  for (int i = 0; i < 6; i++) close_to(v[i], want[i]);
  shlo_value_unref(r[0]);
  free(r);
  shlo_executable_free(e);
  shlo_module_free(m);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(log_plus_one_keeps_tiny_arguments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
