/* SPDX-License-Identifier: Apache-2.0 */
/* The op tables generated from SHLO_OP_LIST: names, compile dispatch,
 * flags and pretty-form keywords; and from SHLO_OP_FACTS (op_facts.h),
 * checked here row by row against SHLO_OP_LIST: quantized storage,
 * refinement rule, reducer and VHLO name (the lane column is read in
 * elementwise.c, which knows the lane ops).  The verifier's dispatch is
 * generated in verify.c, the elementwise loops in elementwise.c, the CHLO
 * functions in chlo.c, all from the same rows. */
#include <string.h>

#include "ops/ops.h"

_Static_assert(SHLO_OP_UNKNOWN == SHLO_OP_CODE_UNKNOWN,
               "shlo/ir.h promises callers the unknown op's code");

#define SHLO_OPS_CHECK_SIZE(tbl)                                              \
  _Static_assert(sizeof tbl / sizeof tbl[0] == SHLO_OP_COUNT,                 \
                 #tbl " must have one entry per op code")

static const char *const op_names[] = {
    [SHLO_OP_UNKNOWN] = "<unknown>",
#define SHLO_OP_NAME(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = name,
    SHLO_OP_LIST(SHLO_OP_NAME)
#undef SHLO_OP_NAME
};
SHLO_OPS_CHECK_SIZE(op_names);

static const shlo_compile_fn op_compile[] = {
    [SHLO_OP_UNKNOWN] = shlo__compile_unimplemented,
#define SHLO_OP_FN(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = shlo__compile_##c,
    SHLO_OP_LIST(SHLO_OP_FN)
#undef SHLO_OP_FN
};
SHLO_OPS_CHECK_SIZE(op_compile);

/* Unknown ops (a dialect the engine does not know) are not refused
 * per-axis types here: the verifier has nothing to say about them. */
static const unsigned char op_flags[] = {
    [SHLO_OP_UNKNOWN] = SHLO_OPF_PER_AXIS,
#define SHLO_OP_FLAGS(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = (fl),
    SHLO_OP_LIST(SHLO_OP_FLAGS)
#undef SHLO_OP_FLAGS
};
SHLO_OPS_CHECK_SIZE(op_flags);

static const char *const op_keywords[] = {
    [SHLO_OP_UNKNOWN] = 0,
#define SHLO_OP_KW(e, name, c, v, fl, k, kw) [SHLO_OP_##e] = (kw),
    SHLO_OP_LIST(SHLO_OP_KW)
#undef SHLO_OP_KW
};
SHLO_OPS_CHECK_SIZE(op_keywords);

/* op_facts.h must have one row per op of ops.h, in ops.h's order: each
 * row's position is its op's code less one.  A row naming no op, a missing
 * row or one out of place fails here. */
enum {
#define SHLO_FACT_POS(e, q, r, red, lane, vhlo) SHLO__FACT_POS_##e,
  SHLO_OP_FACTS(SHLO_FACT_POS)
#undef SHLO_FACT_POS
  SHLO__FACT_ROWS
};
_Static_assert(SHLO__FACT_ROWS + 1 == SHLO_OP_COUNT,
               "ops/op_facts.h must have one row per op of ops.h");
#define SHLO_FACT_CHECK(e, q, r, red, lane, vhlo)                            \
  _Static_assert(SHLO__FACT_POS_##e + 1 == SHLO_OP_##e,                       \
                 "ops/op_facts.h row " #e " is not in ops.h's order");
SHLO_OP_FACTS(SHLO_FACT_CHECK)
#undef SHLO_FACT_CHECK

static const unsigned char op_quant[] = {
    [SHLO_OP_UNKNOWN] = SHLO_QUANT_VIA_FLOAT,
#define SHLO_FACT_Q(e, q, r, red, lane, vhlo) [SHLO_OP_##e] = SHLO__QUANT_##q,
    SHLO_OP_FACTS(SHLO_FACT_Q)
#undef SHLO_FACT_Q
};
SHLO_OPS_CHECK_SIZE(op_quant);

static const unsigned char op_refine[] = {
    [SHLO_OP_UNKNOWN] = SHLO_REFINE_NONE,
#define SHLO_FACT_R(e, q, r, red, lane, vhlo)                                \
  [SHLO_OP_##e] = SHLO__REFINE_##r,
    SHLO_OP_FACTS(SHLO_FACT_R)
#undef SHLO_FACT_R
};
SHLO_OPS_CHECK_SIZE(op_refine);

static const unsigned char op_reducer[] = {
    [SHLO_OP_UNKNOWN] = SHLO_REDUCER_NONE,
#define SHLO_FACT_RED(e, q, r, red, lane, vhlo)                              \
  [SHLO_OP_##e] = SHLO__REDUCER_##red,
    SHLO_OP_FACTS(SHLO_FACT_RED)
#undef SHLO_FACT_RED
};
SHLO_OPS_CHECK_SIZE(op_reducer);

static const char *const op_vhlo[] = {
    [SHLO_OP_UNKNOWN] = NULL,
#define SHLO_FACT_V(e, q, r, red, lane, vhlo) [SHLO_OP_##e] = vhlo,
    SHLO_OP_FACTS(SHLO_FACT_V)
#undef SHLO_FACT_V
};
SHLO_OPS_CHECK_SIZE(op_vhlo);

shlo_op_quant shlo__op_quant(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? (shlo_op_quant)op_quant[code]
                                        : SHLO_QUANT_VIA_FLOAT;
}

shlo_op_refine shlo__op_refine(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? (shlo_op_refine)op_refine[code]
                                        : SHLO_REFINE_NONE;
}

shlo_op_reducer shlo__op_reducer(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? (shlo_op_reducer)op_reducer[code]
                                        : SHLO_REDUCER_NONE;
}

const char *shlo__op_vhlo(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_vhlo[code] : NULL;
}

shlo_opcode shlo__op_lookup(const char *name, size_t len) {
  for (int i = 1; i < SHLO_OP_COUNT; i++)
    if (strlen(op_names[i]) == len && !memcmp(op_names[i], name, len))
      return (shlo_opcode)i;
  return SHLO_OP_UNKNOWN;
}

const char *shlo__op_name(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_names[code] : "<unknown>";
}

/* The public face of the table (shlo/ir.h): code numbers are this
 * build's, so a caller asks for them by name. */
int shlo_op_code_of(const char *name) {
  return name ? (int)shlo__op_lookup(name, strlen(name)) : SHLO_OP_UNKNOWN;
}

const char *shlo_op_code_name(int code) {
  return code > SHLO_OP_UNKNOWN && code < SHLO_OP_COUNT ? op_names[code]
                                                        : NULL;
}

shlo_compile_fn shlo__op_compile_fn(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_compile[code]
                                        : shlo__compile_unimplemented;
}

unsigned shlo__op_flags(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_flags[code] : SHLO_OPF_PER_AXIS;
}

/* The row's keywords are SHLO_KW pairs; a handful per op, so a scan is
 * cheaper than any index. */
const char *shlo__op_keyword(shlo_opcode code, int i) {
  const char *s = (unsigned)code < SHLO_OP_COUNT ? op_keywords[code] : NULL;
  for (; s && *s; i--) {
    if (!i) return s;
    s += strlen(s) + 1; /* the attribute */
    s += strlen(s) + 1;
  }
  return NULL;
}

const char *shlo__op_keyword_attr(shlo_opcode code, const char *kw,
                                  size_t n) {
  const char *s = (unsigned)code < SHLO_OP_COUNT ? op_keywords[code] : NULL;
  while (s && *s) {
    const char *attr = s + strlen(s) + 1;
    if (strlen(s) == n && !memcmp(s, kw, n)) return attr;
    s = attr + strlen(attr) + 1;
  }
  return NULL;
}
