/* SPDX-License-Identifier: Apache-2.0 */
/* How many CPUs a LAPACK call of one large matrix may give OpenBLAS
 * (engine/src/kernels/lapack_threads.c): the online CPUs less the threads
 * /proc/loadavg counts as runnable besides the caller; unreadable text
 * says nothing (-1), and a machine busier than its CPUs leaves none; a
 * call then gets between one thread and the pool's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include <cmocka.h>

#include "kernels/lapack.h"

static void idle_cpus_from_loadavg(void **state) {
  (void)state;
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  assert_true(cpus >= 1);
  /* only the caller runs: every CPU is free */
  assert_int_equal(shlo__la_idle_cpus("0.00 0.01 0.05 1/120 4242\n"), cpus);
  /* the caller and one other */
  assert_int_equal(shlo__la_idle_cpus("1.50 1.20 0.90 2/300 4242\n"),
                   cpus - 1);
  /* far more runnable than CPUs: none, never a negative count */
  assert_int_equal(shlo__la_idle_cpus("9.0 8.0 7.0 4000/5000 1\n"), 0);
  /* not the kernel's format, or no runnable count */
  assert_int_equal(shlo__la_idle_cpus(""), -1);
  assert_int_equal(shlo__la_idle_cpus("0.1 0.2 0.3\n"), -1);
  assert_int_equal(shlo__la_idle_cpus("0.1 0.2 0.3 0/10 5\n"), -1);
  assert_int_equal(shlo__la_idle_cpus("load: high"), -1);
}

static void threads_within_free_cpus(void **state) {
  (void)state;
  assert_int_equal(shlo__la_threads_within(4, -1), 4); /* not known */
  assert_int_equal(shlo__la_threads_within(4, 16), 4); /* the pool's */
  assert_int_equal(shlo__la_threads_within(4, 4), 4);
  assert_int_equal(shlo__la_threads_within(4, 3), 3);
  assert_int_equal(shlo__la_threads_within(4, 1), 1);
  assert_int_equal(shlo__la_threads_within(4, 0), 1); /* never none */
  assert_int_equal(shlo__la_threads_within(1, 8), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(idle_cpus_from_loadavg),
      cmocka_unit_test(threads_within_free_cpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
