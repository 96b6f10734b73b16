/* SPDX-License-Identifier: Apache-2.0 */
/* The op table's per-op facts (engine/src/ops/op_facts.h): that every row
 * gives each column a value the consumers accept, and that the values
 * agree with each other and with the tables outside the engine's op table
 * they stand for (the VHLO op list, the elementwise rows, the lane ops).
 * A row that lacks a column, or an op without a row, already fails the
 * build (ops.c); this test catches a row whose choice is inconsistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "frontend/vhlo_ops.h"
#include "kernels/vchain.h"
#include "ops/ops.h"

/* The columns as the X-macro gives them, indexed by op code. */
static const int lane_of[SHLO_OP_COUNT] = {
#define T_LANE(e, q, r, red, lane, vhlo) [SHLO_OP_##e] = SHLO__LANE_##lane,
    SHLO_OP_FACTS(T_LANE)
#undef T_LANE
};

/* The elementwise rows and their SHLO_EW arity and float loop (0 arity:
 * no SHLO_EW column). */
#define Y 1
#define N 0
static const bool is_ew_row[SHLO_OP_COUNT] = {
#define T_EW(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = true,
    SHLO_OPS_ELEMENTWISE(T_EW)
#undef T_EW
};
#define T_EW_FIELDS(e, arity, kinds, i, f, c, i1) [SHLO_OP_##e] = {arity, f},
#define T_EW_ROW(e, name, c, v, fl, k, kw) SHLO_EW_ROW(T_EW_FIELDS, e, k)
static const int ew_row[SHLO_OP_COUNT][2] = {SHLO_OPS_ELEMENTWISE(T_EW_ROW)};
#undef T_EW_ROW
#undef T_EW_FIELDS

static int rows_in_facts(void) {
  int n = 0;
#define T_COUNT(e, q, r, red, lane, vhlo) n++;
  SHLO_OP_FACTS(T_COUNT)
#undef T_COUNT
  return n;
}

static void test_every_op_has_a_row(void **state) {
  (void)state;
  assert_int_equal(rows_in_facts(), SHLO_OP_COUNT - 1);
  for (int c = 1; c < SHLO_OP_COUNT; c++) {
    shlo_op_quant q = shlo__op_quant((shlo_opcode)c);
    assert_true(q == SHLO_QUANT_STORAGE || q == SHLO_QUANT_VIA_FLOAT ||
                q == SHLO_QUANT_REFUSED);
    assert_true(shlo__op_refine((shlo_opcode)c) <= SHLO_REFINE_LIKE_OPERAND1);
    assert_true(shlo__op_reducer((shlo_opcode)c) <= SHLO_REDUCER_XOR);
    assert_true(lane_of[c] >= SHLO_LANE_NONE && lane_of[c] < SHLO_LANE_COUNT);
  }
  /* codes outside the table have no facts */
  assert_int_equal(shlo__op_refine(SHLO_OP_COUNT), SHLO_REFINE_NONE);
  assert_int_equal(shlo__op_reducer(SHLO_OP_UNKNOWN), SHLO_REDUCER_NONE);
  assert_null(shlo__op_vhlo(SHLO_OP_COUNT));
}

/* An op's VHLO name is its own mnemonic less the dialect, and names op
 * versions the VHLO table has. */
static void test_vhlo_names_are_the_ops(void **state) {
  (void)state;
  for (int c = 1; c < SHLO_OP_COUNT; c++) {
    const char *v = shlo__op_vhlo((shlo_opcode)c);
    const char *name = shlo__op_name((shlo_opcode)c);
    if (!v) continue;
    char full[128];
    if (!strcmp(name, "func.return") || !strcmp(name, "func.call"))
      snprintf(full, sizeof full, "func.%s", v);
    else snprintf(full, sizeof full, "stablehlo.%s", v);
    if (strcmp(full, name)) fail_msg("%s: VHLO name %s", name, v);
    char v1[128];
    snprintf(v1, sizeof v1, "%s_v1", v);
    if (!shlo__vhlo_op_find(v1)) fail_msg("%s: no vhlo.%s", name, v1);
  }
}

/* Every op of the VHLO table is an op of the op table (save func_v1, the
 * function itself, which the IR keeps as a function, not an op), and a
 * stablehlo op the VHLO table lists has the VHLO name. */
static void test_vhlo_table_is_in_op_table(void **state) {
  (void)state;
  int n = 0;
  for (size_t i = 0; shlo__vhlo_op_nth(i); i++, n++) {
    const char *vname = shlo__vhlo_op_nth(i)->name;
    const char *us = strrchr(vname, '_');
    assert_non_null(us);
    char base[96];
    snprintf(base, sizeof base, "%.*s", (int)(us - vname), vname);
    if (!strcmp(base, "func")) continue;
    bool found = false;
    for (int c = 1; c < SHLO_OP_COUNT && !found; c++) {
      const char *v = shlo__op_vhlo((shlo_opcode)c);
      found = v && !strcmp(v, base);
    }
    if (!found) fail_msg("vhlo.%s names no op of the op table", vname);
    char full[128];
    snprintf(full, sizeof full, "stablehlo.%s", base);
    shlo_opcode c = shlo__op_lookup(full, strlen(full));
    if (c != SHLO_OP_UNKNOWN && strcmp(shlo__op_vhlo(c), base))
      fail_msg("%s has VHLO name %s", full, shlo__op_vhlo(c));
  }
  assert_true(n > 100);
}

/* A lane op is the f32 loop of an elementwise row with a float scalar
 * function, of the lane op's arity. */
static void test_lanes_are_elementwise(void **state) {
  (void)state;
  int lanes = 0;
  for (int c = 1; c < SHLO_OP_COUNT; c++) {
    if (lane_of[c] == SHLO_LANE_NONE) continue;
    lanes++;
    const char *name = shlo__op_name((shlo_opcode)c);
    if (!is_ew_row[c] || ew_row[c][1] != Y)
      fail_msg("%s: a lane op but no elementwise float loop", name);
    int arity = shlo_lane_op_binary(lane_of[c]) ? 2 : 1;
    if (ew_row[c][0] != arity) fail_msg("%s: lane arity %d", name, arity);
  }
  assert_int_equal(lanes, SHLO_LANE_COUNT - 1); /* each lane op once */
}

/* A reducer is a binary elementwise op; refinement's elementwise rule is
 * exactly the elementwise rows'. */
static void test_reducers_and_refine(void **state) {
  (void)state;
  for (int c = 1; c < SHLO_OP_COUNT; c++) {
    const char *name = shlo__op_name((shlo_opcode)c);
    if (shlo__op_reducer((shlo_opcode)c) != SHLO_REDUCER_NONE &&
        (!is_ew_row[c] || ew_row[c][0] != 2))
      fail_msg("%s: a reducer but not a binary elementwise op", name);
    bool ew_rule = shlo__op_refine((shlo_opcode)c) == SHLO_REFINE_ELEMENTWISE;
    if (ew_rule != is_ew_row[c])
      fail_msg("%s: refine rule disagrees with its elementwise row", name);
  }
  assert_int_equal(shlo__op_reducer(SHLO_OP_ADD), SHLO_REDUCER_SUM);
  assert_int_equal(shlo__op_refine(SHLO_OP_CALL), SHLO_REFINE_CALL);
  assert_int_equal(shlo__op_refine(SHLO_OP_COMPOSITE), SHLO_REFINE_CALL);
}

/* Storage ops include the quantizers themselves and the pure movers;
 * arithmetic runs via float. */
static void test_quant_column(void **state) {
  (void)state;
  static const shlo_opcode storage[] = {
      SHLO_OP_UNIFORM_QUANTIZE, SHLO_OP_UNIFORM_DEQUANTIZE,
      SHLO_OP_CONSTANT, SHLO_OP_RESHAPE, SHLO_OP_TRANSPOSE,
      SHLO_OP_BITCAST_CONVERT};
  for (size_t i = 0; i < sizeof storage / sizeof *storage; i++)
    assert_int_equal(shlo__op_quant(storage[i]), SHLO_QUANT_STORAGE);
  assert_int_equal(shlo__op_quant(SHLO_OP_ADD), SHLO_QUANT_VIA_FLOAT);
  assert_int_equal(shlo__op_quant(SHLO_OP_DOT_GENERAL), SHLO_QUANT_VIA_FLOAT);
  assert_int_equal(shlo__op_quant(SHLO_OP_AFTER_ALL), SHLO_QUANT_REFUSED);
  int n = 0;
  for (int c = 1; c < SHLO_OP_COUNT; c++)
    n += shlo__op_quant((shlo_opcode)c) == SHLO_QUANT_STORAGE;
  /* quant.c's list before the table held it, and tensor.cast */
  assert_int_equal(n, 52);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_op_has_a_row),
      cmocka_unit_test(test_vhlo_names_are_the_ops),
      cmocka_unit_test(test_vhlo_table_is_in_op_table),
      cmocka_unit_test(test_lanes_are_elementwise),
      cmocka_unit_test(test_reducers_and_refine),
      cmocka_unit_test(test_quant_column),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
