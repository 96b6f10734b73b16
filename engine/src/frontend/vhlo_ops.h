/* SPDX-License-Identifier: Apache-2.0 */
/* The table of VHLO ops this build reads (vhlo_ops.c). */
#ifndef SHLO_VHLO_OPS_H
#define SHLO_VHLO_OPS_H

#include <stdbool.h>
#include <stddef.h>

#define VHLO_MAX_OP_ATTRS 32

/* A StableHLO version as a number: 1.20.0 is 12000. */
typedef int vhlo_version;

typedef struct vhlo_op_def {
  const char *name;   /* "compare_v1" (without "vhlo.") */
  vhlo_version since; /* the first StableHLO with this op version */
  const char *attrs;  /* its attribute names, space-separated */
} vhlo_op_def;

/* The newest op version of base ("gather") that StableHLO `at` has, or
 * NULL; *oldest then gets the first version that has any (0 if none). */
const vhlo_op_def *shlo__vhlo_op_at(const char *base, vhlo_version at,
                              vhlo_version *oldest);

/* "1.20.0" -> 12000; -1 when not MAJOR.MINOR.PATCH within range. */
vhlo_version shlo__vhlo_version_parse(const char *s);
/* 12000 -> "1.20.0" into buf. */
void shlo__vhlo_version_format(vhlo_version v, char *buf, size_t cap);

/* The op named name, or NULL when this build does not know it. */
const vhlo_op_def *shlo__vhlo_op_find(const char *name);
/* The i-th op of the table (sorted by name), NULL past its end: for the
 * test that checks it against the op table's vhlo column. */
const vhlo_op_def *shlo__vhlo_op_nth(size_t i);

/* d's attribute names sorted, the order of its properties, into names
 * (pointing into buf); newer: with the names a later StableHLO added.
 * Returns the count, or -1 if buf/names are short. */
int shlo__vhlo_op_attr_names(const vhlo_op_def *d, bool newer, char *buf,
                       size_t cap, const char **names, int max);

#endif
