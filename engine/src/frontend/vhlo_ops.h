/* The table of VHLO ops this build reads (vhlo_ops.c). */
#ifndef SHLO_VHLO_OPS_H
#define SHLO_VHLO_OPS_H

#include <stdbool.h>
#include <stddef.h>

#define VHLO_MAX_OP_ATTRS 32

typedef struct vhlo_op_def {
  const char *name;  /* "compare_v1" (without "vhlo.") */
  const char *attrs; /* its attribute names, space-separated */
} vhlo_op_def;

/* The op named name, or NULL when this build does not know it. */
const vhlo_op_def *vhlo_op_find(const char *name);

/* d's attribute names sorted, the order of its properties, into names
 * (pointing into buf); newer: with the names a later StableHLO added.
 * Returns the count, or -1 if buf/names are short. */
int vhlo_op_attr_names(const vhlo_op_def *d, bool newer, char *buf,
                       size_t cap, const char **names, int max);

#endif
