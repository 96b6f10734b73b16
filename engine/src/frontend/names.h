/* SPDX-License-Identifier: Apache-2.0 */
/* Names that do not exist, refused where they are written with the
 * nearest known one suggested (core/suggest.h): ops of the dialects the op
 * table holds entirely, enum kinds and values, element types, pretty-form
 * keywords and convolution window keys.  Each check returns when the name
 * is fine and unwinds with a parse error otherwise. */
#ifndef SHLO_FRONTEND_NAMES_H
#define SHLO_FRONTEND_NAMES_H

#include "frontend/parser_int.h"
#include "ops/ops.h"

/* An op name the op table does not have (code SHLO_OP_UNKNOWN), at `at`:
 * an error when its dialect is one the table holds whole (stablehlo, func,
 * check, interpreter) or when it is a misspelling of a known op; other
 * dialects' ops stay (unregistered ops, refused later as not implemented). */
void shlo__check_unknown_op(parser *P, const char *at, const char *name,
                            size_t n);

/* #dialect<kind value> and pretty enum words: a known kind with a value it
 * does not have, or a misspelt kind of stablehlo/chlo, is an error. */
void shlo__check_enum(parser *P, const char *kind_at, const char *value_at,
                      const char *dialect, size_t dn, const char *kind,
                      const char *value);

/* The element type nearest to a misspelt one, or NULL. */
const char *shlo__suggest_elem_type(const char *s, size_t n);

/* A pretty keyword `kw = ...` that the op does not have but is a
 * misspelling of one it has (or of the keywords every op's loop reads):
 * an error. */
void shlo__check_pretty_keyword(parser *P, const char *at, shlo_opcode code,
                                const char *kw, size_t n);

/* A convolution window = {...} key other than stride, pad, lhs_dilate,
 * rhs_dilate and reverse (MLIR's parser takes only those); text_start and
 * text_end bound the window's text, where the key is found for its
 * position. */
void shlo__check_window_key(parser *P, const char *text_start,
                            const char *text_end, const char *key);

#endif
