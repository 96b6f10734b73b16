/* SPDX-License-Identifier: Apache-2.0 */
/* VHLO attributes -> StableHLO attribute text (vhlo_lower.c): the op's
 * StableHLO name and its attributes as the text parser reads them. */
#ifndef SHLO_VHLO_LOWER_H
#define SHLO_VHLO_LOWER_H

#include "frontend/vhlo.h"
#include "frontend/vhlo_ops.h"

typedef struct nattr {
  const char *name;
  const vattr *a;
} nattr;

typedef struct lowered {
  char name[96]; /* "stablehlo.add" */
  int n;
  const char *names[VHLO_MAX_OP_ATTRS * 2];
  const char *texts[VHLO_MAX_OP_ATTRS * 2];
} lowered;

/* Lower op vname ("compare_v1") with attributes in[0..n) to StableHLO;
 * in_func: the op sits directly in a function body (return -> func.return).
 * Attributes come out sorted by name. */
void shlo__vhlo_lower_op(vhlo_ctx *v, bc_cursor *c, const char *vname, bool in_func,
                   const nattr *in, int n, lowered *out);

/* A string as MLIR writes it: quoted and escaped, or bare when symbol and
 * it is an identifier. */
void shlo__vhlo_put_string(strbuf *b, const char *s, size_t n, bool symbol);
/* " {k = v, ...}" for an argument or result dictionary. */
void shlo__vhlo_put_dict(vhlo_ctx *v, bc_cursor *c, strbuf *b, const vattr *d);
/* " attributes {...}" with in's attributes whose names are not listed in
 * skip (space-separated); nothing when none remain. */
void shlo__vhlo_put_extra_attrs(vhlo_ctx *v, bc_cursor *c, strbuf *b,
                          const nattr *in, int n, const char *skip);

#endif
