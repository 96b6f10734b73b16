/* SPDX-License-Identifier: Apache-2.0 */
/* Unknown names as parse errors with suggestions (names.h). */
#include "frontend/names.h"

#include <stdio.h>
#include <string.h>

#include "core/suggest.h"
#include "ops/ops.h"

/* Dialects whose every op is a row of the op table: any other name in them
 * is a misspelling, as MLIR's parser says of registered dialects. */
static const char *const closed_dialects[] = {"stablehlo", "func", "check",
                                              "interpreter", NULL};

static bool dialect_closed(const char *name, size_t n) {
  const char *dot = memchr(name, '.', n);
  if (!dot) return false;
  size_t dn = (size_t)(dot - name);
  for (int i = 0; closed_dialects[i]; i++)
    if (strlen(closed_dialects[i]) == dn &&
        !memcmp(closed_dialects[i], name, dn))
      return true;
  return false;
}

/* The op name nearest to name[0..n), judged on the part after the dot
 * (its length sets how far a typo may be). */
static const char *nearest_op(const char *name, size_t n) {
  const char *dot = memchr(name, '.', n);
  size_t mn = dot ? n - (size_t)(dot - name) - 1 : n;
  const char *best = NULL;
  int best_d = 1 << 20;
  for (int c = SHLO_OP_UNKNOWN + 1; c < SHLO_OP_COUNT; c++) {
    const char *known = shlo__op_name((shlo_opcode)c);
    int d = shlo__edit_distance(name, n, known, strlen(known));
    if (d < best_d) best_d = d, best = known;
  }
  return shlo__near_enough(mn, best_d) ? best : NULL;
}

void shlo__check_unknown_op(parser *P, const char *at, const char *name,
                            size_t n) {
  const char *dot = memchr(name, '.', n);
  size_t dn = dot ? (size_t)(dot - name) : n;
  bool closed = dialect_closed(name, n);
  /* chlo's ops are all in the table too, but one it lacks would rather be
   * "not implemented" than a typo: only a near miss is refused there; in
   * other dialects, only a misspelt "stablehlo" */
  bool chlo = dn == 4 && !memcmp(name, "chlo", 4);
  bool stablehlo_typo =
      shlo__near_enough(dn, shlo__edit_distance(name, dn, "stablehlo", 9));
  if (!closed && !chlo && !stablehlo_typo) return;
  const char *near = nearest_op(name, n);
  if (near)
    shlo__perr_at(P, at, "unknown operation '%.*s' (did you mean %s?)",
                  (int)n, name, near);
  if (closed)
    shlo__perr_at(P, at, "unknown operation '%.*s': the %.*s dialect has no "
                  "such op", (int)n, name, (int)dn, name);
}

/* ---- enums --------------------------------------------------------------- */

static const struct {
  const char *kind;
  const char *const values[8];
} enums[] = {
    {"comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT", NULL}},
    {"comparison_type",
     {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED", NULL}},
    {"fft_type", {"FFT", "IFFT", "RFFT", "IRFFT", NULL}},
    {"rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX", NULL}},
    {"rng_distribution", {"UNIFORM", "NORMAL", NULL}},
    {"transpose", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE",
                   "ADJOINT", NULL}},
    {"precision", {"DEFAULT", "HIGH", "HIGHEST", NULL}},
};
#define N_ENUMS (sizeof enums / sizeof enums[0])

/* "EQ, NE, GE" of a value list. */
static void list_values(const char *const *v, char *buf, size_t cap) {
  size_t m = 0;
  buf[0] = 0;
  for (int i = 0; v[i] && m < cap; i++)
    m += (size_t)snprintf(buf + m, cap - m, "%s%s", i ? ", " : "", v[i]);
}

void shlo__check_enum(parser *P, const char *kind_at, const char *value_at,
                      const char *dialect, size_t dn, const char *kind,
                      const char *value) {
  const char *at = value_at;
  for (size_t i = 0; i < N_ENUMS; i++) {
    if (strcmp(enums[i].kind, kind)) continue;
    for (int k = 0; enums[i].values[k]; k++)
      if (!strcmp(enums[i].values[k], value)) return;
    char list[160];
    list_values(enums[i].values, list, sizeof list);
    const char *near = shlo__suggest(value, strlen(value), enums[i].values, -1);
    if (near)
      shlo__perr_at(P, at, "unknown %s '%s' (did you mean %s?); expected one "
                    "of %s", kind, value, near, list);
    shlo__perr_at(P, at, "unknown %s '%s'; expected one of %s", kind, value,
                  list);
  }
  /* a kind this parser does not list: refused only as a typo of one */
  bool ours = dialect && ((dn == 9 && !memcmp(dialect, "stablehlo", 9)) ||
                          (dn == 4 && !memcmp(dialect, "chlo", 4)));
  if (!ours) return;
  const char *kinds[N_ENUMS + 1];
  for (size_t i = 0; i < N_ENUMS; i++) kinds[i] = enums[i].kind;
  kinds[N_ENUMS] = NULL;
  const char *near = shlo__suggest(kind, strlen(kind), kinds, -1);
  if (near)
    shlo__perr_at(P, kind_at, "unknown enum kind '%s' (did you mean %s?)", kind,
                  near);
}

/* ---- types and keywords -------------------------------------------------- */

const char *shlo__suggest_elem_type(const char *s, size_t n) {
  const char *names[SHLO_ELEM_COUNT + 1];
  for (int t = 0; t < SHLO_ELEM_COUNT; t++)
    names[t] = shlo_elem_name((shlo_elem_type)t);
  names[SHLO_ELEM_COUNT] = NULL;
  return shlo__suggest(s, n, names, -1);
}

/* Keywords the pretty loop reads for any op (parse_pretty.c). */
static const char *const loop_keywords[] = {
    "contracting_dims", "batching_dims", "window", "dim_numbers",
    "algorithm", "precision", NULL};

void shlo__check_pretty_keyword(parser *P, const char *at, shlo_opcode code,
                                const char *kw, size_t n) {
  if (shlo__op_keyword_attr(code, kw, n)) return;
  const char *own[64];
  int k = 0;
  for (const char *s; k < 63 && (s = shlo__op_keyword(code, k)); k++)
    own[k] = s;
  for (int i = 0; loop_keywords[i] && k < 63; i++) own[k++] = loop_keywords[i];
  own[k] = NULL;
  for (int i = 0; own[i]; i++)
    if (strlen(own[i]) == n && !memcmp(own[i], kw, n)) return;
  const char *near = shlo__suggest(kw, n, own, -1);
  if (near)
    shlo__perr_at(P, at, "unknown keyword '%.*s' in %s (did you mean %s?)",
                  (int)n, kw, shlo__op_name(code), near);
}

static const char *const window_keys[] = {"stride", "pad", "lhs_dilate",
                                          "rhs_dilate", "reverse", NULL};

void shlo__check_window_key(parser *P, const char *text_start,
                            const char *text_end, const char *key) {
  for (int i = 0; window_keys[i]; i++)
    if (!strcmp(window_keys[i], key)) return;
  /* the key's own position in the window's text, for the error */
  size_t kn = strlen(key);
  const char *at = text_start;
  for (const char *p = text_start; p + kn <= text_end; p++)
    if (!memcmp(p, key, kn)) {
      at = p;
      break;
    }
  const char *near = shlo__suggest(key, kn, window_keys, -1);
  shlo__perr_at(P, at, "unknown window key '%s'%s%s%s; expected stride, pad, "
                "lhs_dilate, rhs_dilate or reverse", key,
                near ? " (did you mean " : "", near ? near : "",
                near ? "?)" : "");
}
