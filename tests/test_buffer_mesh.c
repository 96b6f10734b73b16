/* SPDX-License-Identifier: Apache-2.0 */
/* What StableHLO 1.13-1.20 added to the text that artifacts of those
 * versions carry: memref<...> buffer types, and replica groups named by
 * mesh axes (#stablehlo.replica_group_mesh_axes / #stablehlo.axis_ref).
 * Each parses, prints back to text that parses to the same print, and
 * verifies with its rules; mesh-axis collectives are refused at compile
 * as not supported (the mesh's axis sizes are not read). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "shlo/engine.h"

static const char buffer_prog[] =
    "func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {\n"
    "  %0 = \"stablehlo.custom_call\"(%arg0) {call_target_name = \"Pin\", "
    "api_version = 4 : i32} : (tensor<2xf32>) -> memref<2xf32>\n"
    "  %1 = \"stablehlo.custom_call\"(%0) {call_target_name = \"Unpin\", "
    "api_version = 4 : i32} : (memref<2xf32>) -> tensor<2xf32>\n"
    "  func.return %1 : tensor<2xf32>\n}\n";

static const char mesh_prog_fmt[] =
    "func.func private @mesh()\n"
    "func.func @main(%%arg0: tensor<f32>) -> tensor<f32> {\n"
    "  %%0 = \"stablehlo.all_reduce\"(%%arg0) ({\n"
    "    ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
    "      %%1 = \"stablehlo.add\"(%%a, %%b) : (tensor<f32>, tensor<f32>) -> "
    "tensor<f32>\n"
    "      \"stablehlo.return\"(%%1) : (tensor<f32>) -> ()\n"
    "  }) {replica_groups = #stablehlo.replica_group_mesh_axes<mesh = %s, "
    "axes = [%s]>} : (tensor<f32>) -> tensor<f32>\n"
    "  func.return %%0 : tensor<f32>\n}\n";

static shlo_module *parse_ok(const char *text) {
  shlo_module *m = NULL;
  shlo_diag d;
  if (shlo_parse_module(text, strlen(text), "t.mlir", &m, &d)) {
    char msg[SHLO_DIAG_MAX + 128];
    shlo_diag_format(&d, msg, sizeof msg);
    fail_msg("parse: %s", msg);
  }
  return m;
}

/* print -> parse -> print is a fixed point; returns the first print. */
static char *print_round_trip(const char *text) {
  shlo_module *m = parse_ok(text);
  char *p1 = shlo_module_print(m);
  shlo_module_free(m);
  m = parse_ok(p1);
  char *p2 = shlo_module_print(m);
  shlo_module_free(m);
  assert_string_equal(p1, p2);
  free(p2);
  return p1;
}

static void test_memref_parses_and_prints(void **state) {
  (void)state;
  char *p = print_round_trip(buffer_prog);
  assert_non_null(strstr(p, "-> (memref<2xf32>)"));
  assert_non_null(strstr(p, "(memref<2xf32>) -> (tensor<2xf32>)"));
  free(p);
  shlo_module *m = NULL;
  shlo_diag d;
  const char bad[] = "func.func @f(%a: memref<*xf32>) -> () {\n"
                     "  func.return\n}\n";
  assert_int_not_equal(shlo_parse_module(bad, strlen(bad), "b", &m, &d),
                       SHLO_OK);
  assert_non_null(strstr(d.message, "memref"));
}

static shlo_status verify_mesh(const char *mesh, const char *axes,
                               shlo_diag *d) {
  char text[4096];
  snprintf(text, sizeof text, mesh_prog_fmt, mesh, axes);
  shlo_module *m = parse_ok(text);
  shlo_executable *e = NULL;
  shlo_status st = shlo_compile(m, NULL, &e, d);
  shlo_executable_free(e);
  shlo_module_free(m);
  return st;
}

static void test_mesh_axes(void **state) {
  (void)state;
  char text[4096];
  snprintf(text, sizeof text, mesh_prog_fmt, "@mesh",
           "#stablehlo.axis_ref<name = \"x\", sub_axis_info = ( 1 ) 2>, "
           "#stablehlo.axis_ref<name = \"y\">");
  char *p = print_round_trip(text);
  assert_non_null(strstr(p, "sub_axis_info = (1)2"));
  free(p);
  shlo_diag d;
  /* valid: verifies, then compile says what it cannot do */
  assert_int_equal(verify_mesh("@mesh", "#stablehlo.axis_ref<name = \"x\">",
                               &d),
                   SHLO_EUNSUPPORTED);
  assert_non_null(strstr(d.message, "mesh"));
  assert_int_equal(verify_mesh("@nomesh", "#stablehlo.axis_ref<name = \"x\">",
                               &d),
                   SHLO_EVERIFY);
  assert_non_null(strstr(d.message, "symbol of the module"));
  assert_int_equal(verify_mesh("@mesh", "", &d), SHLO_EVERIFY);
  assert_int_equal(verify_mesh("@mesh", "#stablehlo.axis_ref<name = \"x\">, "
                                        "#stablehlo.axis_ref<name = \"x\">",
                               &d),
                   SHLO_EVERIFY);
  assert_non_null(strstr(d.message, "twice"));
}

static void test_sub_axis_info_needs_sizes(void **state) {
  (void)state;
  char text[4096];
  snprintf(text, sizeof text, mesh_prog_fmt, "@mesh",
           "#stablehlo.axis_ref<name = \"x\", sub_axis_info = (0)2>");
  shlo_module *m = NULL;
  shlo_diag d;
  assert_int_not_equal(shlo_parse_module(text, strlen(text), "t", &m, &d),
                       SHLO_OK);
  assert_non_null(strstr(d.message, "positive"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_memref_parses_and_prints),
      cmocka_unit_test(test_mesh_axes),
      cmocka_unit_test(test_sub_axis_info_needs_sizes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
