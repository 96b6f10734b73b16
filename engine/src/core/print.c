/* SPDX-License-Identifier: Apache-2.0 */
/* Values as text, in the StableHLO interpreter's layout:
 *
 *   tensor<2x2xi8> {
 *     [
 *       [1, 2],
 *       [3, 4]
 *     ]
 *   }
 *
 * Rank-0 tensors print on one line (`tensor<ui8> {1}`), floats as %e, i1 as
 * true/false, complex as [re, im]. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/value.h"
#include "shlo/tensor.h"
#include "core/elemfmt.h"

/* Dimension d of the tensor starting at flat index base, at indent. */
static void print_dim(strbuf *b, const shlo_value *v, int d, int64_t base,
                      const int64_t *strides, int indent) {
  if (d == v->rank - 1 || v->dims[d] == 0) {
    shlo__sb_printf(b, "%*s[", indent, "");
    if (d == v->rank - 1)
      for (int64_t i = 0; i < v->dims[d]; i++) {
        if (i) shlo__sb_printf(b, ", ");
        shlo__sb_put_elem(b, v, base + i, SHLO_ELEMFMT_MLIR);
      }
    shlo__sb_printf(b, "]");
    return;
  }
  shlo__sb_printf(b, "%*s[\n", indent, "");
  for (int64_t i = 0; i < v->dims[d]; i++) {
    print_dim(b, v, d + 1, base + i * strides[d], strides, indent + 2);
    shlo__sb_printf(b, i + 1 < v->dims[d] ? ",\n" : "\n");
  }
  shlo__sb_printf(b, "%*s]", indent, "");
}

static void print_type(strbuf *b, const shlo_value *v) {
  if (v->kind == SHLO_TYPE_TOKEN) {
    shlo__sb_printf(b, "!stablehlo.token");
    return;
  }
  if (v->kind == SHLO_TYPE_TUPLE) {
    shlo__sb_printf(b, "tuple<");
    for (int i = 0; i < v->n_elems; i++) {
      if (i) shlo__sb_printf(b, ", ");
      print_type(b, v->elems[i]);
    }
    shlo__sb_printf(b, ">");
    return;
  }
  shlo_type t = {.kind = SHLO_TYPE_TENSOR, .elem = v->elem, .rank = v->rank,
                 .quant = v->quant};
  memcpy(t.dims, v->dims, sizeof t.dims);
  char buf[512];
  shlo_type_format(&t, buf, sizeof buf);
  shlo__sb_printf(b, "%s", buf);
}

static void print_value(strbuf *b, const shlo_value *v, int indent) {
  if (v->kind == SHLO_TYPE_TUPLE) {
    shlo__sb_printf(b, "%*stuple {\n", indent, "");
    for (int i = 0; i < v->n_elems; i++) {
      print_value(b, v->elems[i], indent + 2);
      shlo__sb_printf(b, "\n");
    }
    shlo__sb_printf(b, "%*s}", indent, "");
    return;
  }
  shlo__sb_printf(b, "%*s", indent, "");
  print_type(b, v);
  if (v->kind == SHLO_TYPE_TOKEN) return;
  if (v->rank == 0) {
    shlo__sb_printf(b, " {");
    shlo__sb_put_elem(b, v, 0, SHLO_ELEMFMT_MLIR);
    shlo__sb_printf(b, "}");
    return;
  }
  int64_t strides[SHLO_MAX_RANK];
  shlo_strides(v->rank, v->dims, strides);
  shlo__sb_printf(b, " {\n");
  print_dim(b, v, 0, 0, strides, indent + 2);
  shlo__sb_printf(b, "\n%*s}", indent, "");
}

char *shlo_value_to_string(const shlo_value *v) {
  strbuf b = {0};
  print_value(&b, v, 0);
  return shlo__sb_take(&b);
}
