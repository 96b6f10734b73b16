/* SPDX-License-Identifier: Apache-2.0 */
/* The IR: what the parser builds and the verifier and compiler read.
 *
 * A module owns an arena; every func, op, block, type, attribute and string
 * below lives in it and dies with shlo_module_free.  Values are numbered per
 * function (block arguments and op results alike), so an op inside a region
 * may use any value defined before it in an enclosing block.  Attributes are
 * kept under their generic (canonical) names whichever form the text used:
 * `stablehlo.transpose %x, dims = [1, 0]` stores `permutation`. */
#ifndef SHLO_IR_H
#define SHLO_IR_H

#include "shlo/limits.h"
#include "shlo/status.h"
#include "shlo/tensor.h"
#include "shlo/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct shlo_loc {
  int line, col; /* 1-based; 0 = unknown */
} shlo_loc;

typedef enum {
  SHLO_ATTR_UNIT,        /* a name without value, `{has_side_effect}` */
  SHLO_ATTR_BOOL,        /* true / false */
  SHLO_ATTR_INT,         /* 3 : i64 (type NULL when untyped) */
  SHLO_ATTR_FLOAT,       /* 1.0 : f32 */
  SHLO_ATTR_STRING,      /* "text" */
  SHLO_ATTR_SYMBOL,      /* @name (stored without '@') */
  SHLO_ATTR_TYPE,        /* a type used as an attribute */
  SHLO_ATTR_ARRAY,       /* [a, b, ...] */
  SHLO_ATTR_DENSE_ARRAY, /* array<i64: 1, 2> */
  SHLO_ATTR_DENSE,       /* dense<...> : tensor<...> */
  SHLO_ATTR_ENUM,        /* #stablehlo<comparison_direction LT>, or a bare
                            keyword such as FFT */
  SHLO_ATTR_STRUCT,      /* #stablehlo.gather<k = v, ...>; with name NULL a
                            dictionary {k = v, ...} */
  SHLO_ATTR_CONV_DIMS,   /* [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f] */
  SHLO_ATTR_OPAQUE,      /* anything else, kept as its text */
} shlo_attr_kind;

typedef struct shlo_attr shlo_attr;

typedef struct shlo_named_attr {
  const char *name;
  const shlo_attr *value;
} shlo_named_attr;

struct shlo_attr {
  shlo_attr_kind kind;
  bool b;
  int64_t i;
  double f;
  const shlo_type *type; /* INT/FLOAT: its type (NULL if none); TYPE; DENSE */
  const char *str;       /* STRING, SYMBOL, OPAQUE text; ENUM value */
  const char *enum_kind; /* ENUM: "comparison_direction", or NULL if bare */
  const char *struct_name; /* STRUCT: "gather", "conv", ...; NULL for dict */
  int n;                 /* ARRAY items, STRUCT fields, DENSE_ARRAY values */
  const shlo_attr **items;
  shlo_named_attr *fields;
  shlo_elem_type elem;   /* DENSE_ARRAY element type */
  int64_t *ints;         /* DENSE_ARRAY integer values (and bools as 0/1) */
  double *floats;        /* DENSE_ARRAY float values */
  shlo_value *dense;     /* DENSE: the tensor, owned by the module */
  /* CONV_DIMS: dimension numbers, spatial dims in order */
  int64_t conv_in_batch, conv_in_feature, conv_k_in, conv_k_out,
      conv_out_batch, conv_out_feature;
  int conv_n_spatial;
  int64_t conv_in_spatial[SHLO_MAX_RANK], conv_k_spatial[SHLO_MAX_RANK],
      conv_out_spatial[SHLO_MAX_RANK];
};

typedef struct shlo_op shlo_op;

/* A region is one block: arguments and a list of ops; the last op is the
 * terminator (stablehlo.return / func.return). */
typedef struct shlo_block {
  int n_args;
  int *args; /* value ids */
  int n_ops;
  shlo_op **ops;
} shlo_block;

/* shlo_op.code of an op the engine does not know. */
#define SHLO_OP_CODE_UNKNOWN 0

struct shlo_op {
  int code;          /* which op, for a fast comparison: the engine numbers
                        the ops it knows in an order that may change from
                        one version to the next, so compare with
                        shlo_op_code_of("stablehlo.add"), never a literal;
                        SHLO_OP_CODE_UNKNOWN for ops it does not know */
  const char *name;  /* "stablehlo.add" */
  int n_operands;
  int *operands;     /* value ids */
  int n_results;
  int *results;      /* value ids */
  int n_attrs;
  shlo_named_attr *attrs;
  int n_regions;
  shlo_block **regions;
  shlo_loc loc;
};

typedef struct shlo_func {
  const char *name;       /* without '@' */
  const char *visibility; /* "public", "private" or NULL */
  int n_args, n_results;
  const shlo_type **arg_types;
  const shlo_type **result_types;
  const shlo_attr **arg_attrs;    /* dictionaries or NULL, per argument */
  const shlo_attr **result_attrs; /* dictionaries or NULL, per result */
  const shlo_attr *attrs;         /* function attribute dictionary or NULL */
  shlo_block *body;               /* args are the function arguments */
  int n_values;
  const shlo_type **value_types;  /* per value id */
  shlo_loc loc;
} shlo_func;

/* A parsed module: opaque, read through the accessors below.  It owns
 * every func, op, block, type, attribute and string reached from it. */
typedef struct shlo_module shlo_module;

/* Parse MLIR text (len bytes, need not be NUL-terminated) into a module.
 * Bytes that start with the MLIR bytecode magic are read as a portable
 * artifact instead (shlo/artifact.h).
 * filename is copied and used in diagnostics.  On error returns SHLO_EPARSE
 * (or SHLO_ENOMEM), fills diag with file:line:col and sets *out to NULL.
 * Any byte sequence is accepted as input without crash or hang. */
SHLO_API shlo_status shlo_parse_module(const char *text, size_t len,
                              const char *filename, shlo_module **out,
                              shlo_diag *diag);
/* The same within limits (shlo/limits.h; NULL = none): SHLO_ELIMIT for
 * too many ops or a passed deadline, SHLO_ECANCELED when canceled, with
 * the place the parser had reached. */
SHLO_API shlo_status shlo_parse_module_limited(const char *text, size_t len,
                                      const char *filename,
                                      const shlo_compile_limits *limits,
                                      shlo_module **out, shlo_diag *diag);
SHLO_API void shlo_module_free(shlo_module *m);

/* Parse `[dense<...> : tensor<...>, ...]` (or a single dense literal) into
 * *n new values; *values is a malloc'd array of owned references. */
SHLO_API shlo_status shlo_parse_values(const char *text, size_t len,
                              shlo_value ***values, int *n, shlo_diag *diag);

/* Print a module in generic form; re-parsing the text gives the same IR.
 * Returns a malloc'd string (caller frees) or NULL on OOM. */
SHLO_API char *shlo_module_print(const shlo_module *m);

/* What a module holds; each returns what the module owns (borrowed: valid
 * until shlo_module_free).  Its functions in the order the text gives
 * them: shlo_module_func(m, i) for 0 <= i < shlo_module_num_funcs(m), NULL
 * outside that range. */
SHLO_API int shlo_module_num_funcs(const shlo_module *m);
SHLO_API shlo_func *shlo_module_func(const shlo_module *m, int i);
/* The module's @name, or NULL when it has none. */
SHLO_API const char *shlo_module_name(const shlo_module *m);
/* The file name given to the parser. */
SHLO_API const char *shlo_module_filename(const shlo_module *m);
/* The module's attribute dictionary, or NULL. */
SHLO_API const shlo_attr *shlo_module_attrs(const shlo_module *m);
/* Read from a portable artifact (artifact.h): its producer string
 * ("StableHLO_v1.20.0") and StableHLO version ("1.20.0"); NULL for a
 * module read from text. */
SHLO_API const char *shlo_module_producer(const shlo_module *m);
SHLO_API const char *shlo_module_stablehlo_version(const shlo_module *m);

/* Lookups. */
SHLO_API shlo_func *shlo_module_find_func(const shlo_module *m, const char *name);
/* The entry function: @main, else the only function, else NULL. */
SHLO_API shlo_func *shlo_module_entry(const shlo_module *m);
SHLO_API const shlo_attr *shlo_op_attr(const shlo_op *op, const char *name);
/* The code shlo_op.code holds for the op of this full name
 * ("stablehlo.add"); SHLO_OP_CODE_UNKNOWN for a name the engine does not
 * run.  And back: the static full name of a code, NULL for an unknown. */
SHLO_API int shlo_op_code_of(const char *name);
SHLO_API const char *shlo_op_code_name(int code);
SHLO_API const shlo_attr *shlo_attr_field(const shlo_attr *a, const char *name);

/* Attribute readers that accept every spelling the corpus uses.
 * shlo_attr_i64s: DENSE_ARRAY, an ARRAY of INTs, or a DENSE integer tensor;
 * writes up to cap values and returns the count, or -1 if a is NULL or of
 * another kind. */
SHLO_API int shlo_attr_i64s(const shlo_attr *a, int64_t *out, int cap);
SHLO_API bool shlo_attr_get_i64(const shlo_attr *a, int64_t *out);  /* INT, BOOL */
SHLO_API bool shlo_attr_get_f64(const shlo_attr *a, double *out);   /* FLOAT, INT */
/* ENUM value ("LT"), STRING text, or SYMBOL name; NULL otherwise. */
SHLO_API const char *shlo_attr_get_str(const shlo_attr *a);

#ifdef __cplusplus
}
#endif

#endif
