/* SPDX-License-Identifier: Apache-2.0 */
/* Artifact -> StableHLO: the IR tree of bytecode.c, whose ops are VHLO,
 * written out as the StableHLO generic text the parser reads, so an
 * artifact builds exactly the module its text would (artifact.h).
 *
 * Per op: its attributes (a dictionary in bytecode before format 5,
 * properties ordered by vhlo_ops.c's names after), renamed and reshaped
 * from VHLO's flat form to StableHLO's (vhlo_lower.c), then printed in the
 * form print_ir.c prints, attributes sorted by name as MLIR's generic form
 * has them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frontend/module.h"
#include "core/alloc.h"
#include "frontend/vhlo.h"
#include "frontend/vhlo_lower.h"
#include "frontend/vhlo_ops.h"
#include "shlo/artifact.h"

typedef struct writer {
  vhlo_ctx v;
  bc_file *f;
  strbuf b;
  const vtype **value_types; /* per value number */
  int *alias;                /* per value number: 1 + the earlier value it
                                is (an identity op dropped), or 0 */
  const char *version;       /* the artifact's StableHLO version */
} writer;

static const char *op_name(writer *w, const bc_op *op, const char **dialect) {
  const bc_opname *n = &w->f->opnames[op->name];
  *dialect = w->f->dialects[n->dialect];
  return n->name;
}

static bc_cursor op_cursor(writer *w, const bc_op *op) {
  return (bc_cursor){w->f->base + op->offset, w->f->base + w->f->len, "IR section",
                     w->f};
}

/* The refusal for an op from a newer StableHLO than this build. */
static noreturn void unknown_op(writer *w, const bc_op *op, const char *name) {
  bc_cursor c = op_cursor(w, op);
  shlo_diag_set(w->f->diag, SHLO_EUNSUPPORTED, w->f->filename, 0, 0,
                "vhlo.%s: this artifact needs StableHLO %s%s; shlo reads up "
                "to %s (op at byte %zu)",
                name, *w->version ? "" : "> ",
                *w->version ? w->version : SHLO_ARTIFACT_MAX_VERSION,
                SHLO_ARTIFACT_MAX_VERSION, op->offset);
  (void)c;
  longjmp(w->f->on_error, 3);
}

/* The op's attributes, named: its dictionary and its properties. */
static int op_attrs(writer *w, const bc_op *op, const char *name,
                    nattr *out, int max) {
  bc_cursor c = op_cursor(w, op);
  int n = 0;
  if (op->attr_dict >= 0) {
    const vattr *d = shlo__vhlo_attr(&w->v, op->attr_dict);
    if (d->kind != VA_DICT) shlo__bc_fail(&c, "op attributes are not a dictionary");
    for (int i = 0; i < d->n; i++) {
      if (n == max) shlo__bc_fail(&c, "op has too many attributes");
      out[n++] = (nattr){d->keys[i]->s, d->items[i]};
    }
  }
  if (!op->props) return n;
  const vhlo_op_def *def = shlo__vhlo_op_find(name);
  if (!def) unknown_op(w, op, name);
  char buf[1024];
  const char *names[VHLO_MAX_OP_ATTRS];
  bc_cursor pc = {op->props, op->props + op->props_n, "properties section", w->f};
  int have = 0;
  while (!shlo__bc_at_end(&pc)) {
    shlo__bc_varint(&pc);
    have++;
  }
  int k = shlo__vhlo_op_attr_names(def, true, buf, sizeof buf, names,
                             VHLO_MAX_OP_ATTRS);
  if (k != have)
    k = shlo__vhlo_op_attr_names(def, false, buf, sizeof buf, names,
                           VHLO_MAX_OP_ATTRS);
  if (have != k || k < 0)
    shlo__bc_fail(&c, "vhlo.%s has %d properties; this build expects %d", name,
            have, k);
  pc.p = op->props;
  for (int i = 0; i < k; i++) {
    if (n == max) shlo__bc_fail(&c, "op has too many attributes");
    size_t len = strlen(names[i]);
    char *nm = shlo__bc_alloc(w->f, len + 1); /* names[] points into buf */
    memcpy(nm, names[i], len + 1);
    out[n++] = (nattr){nm, shlo__vhlo_attr(&w->v, shlo__bc_index(&pc, w->f->n_attrs,
                                                     "attribute"))};
  }
  return n;
}

/* The value v stands for: itself, or what a dropped identity op passed on
 * (each alias points to a lower number, so the walk ends). */
static int resolve(const writer *w, int v) {
  while (w->alias[v]) v = w->alias[v] - 1;
  return v;
}

static void put_value(writer *w, int v) {
  shlo__sb_printf(&w->b, "%%v%d", resolve(w, v));
}

static void put_types(writer *w, const int *vals, int n) {
  shlo__sb_printf(&w->b, "(");
  for (int i = 0; i < n; i++)
    shlo__sb_printf(&w->b, "%s%s", i ? ", " : "",
                    w->value_types[resolve(w, vals[i])]->text);
  shlo__sb_printf(&w->b, ")");
}

static void write_block(writer *w, const bc_block *blk, int indent,
                        bool in_func, int depth);

static void write_region_body(writer *w, const bc_region *r, int indent,
                              int depth) {
  bc_cursor c = {w->f->base, w->f->base + w->f->len, "IR section", w->f};
  if (r->n_blocks != 1) shlo__bc_fail(&c, "regions must hold exactly one block");
  const bc_block *blk = &r->blocks[0];
  shlo__sb_printf(&w->b, "%*s^bb0(", indent - 2, "");
  for (int i = 0; i < blk->n_args; i++) {
    w->value_types[blk->arg_values[i]] = shlo__vhlo_type(&w->v, blk->arg_types[i]);
    if (i) shlo__sb_printf(&w->b, ", ");
    put_value(w, blk->arg_values[i]);
    shlo__sb_printf(&w->b, ": %s", w->value_types[blk->arg_values[i]]->text);
  }
  shlo__sb_printf(&w->b, "):\n");
  write_block(w, blk, indent, false, depth);
}

/* Ops that pass their one operand on unchanged, dropped with their result
 * standing for the operand: Shardy's sharding constraint (where a value
 * should live, which the caller decides) and the casts between VHLO and
 * builtin types of the same type that StableHLO's serializer puts around
 * an op of another dialect. */
static bool drop_identity(writer *w, const bc_op *op, const char *dialect,
                          const char *name) {
  bool identity = (!strcmp(dialect, "sdy") && !strcmp(name, "sharding_constraint")) ||
                  (!strcmp(dialect, "builtin") &&
                   !strcmp(name, "unrealized_conversion_cast"));
  if (!identity || op->n_operands != 1 || op->n_results != 1 || op->n_regions)
    return false;
  int from = resolve(w, op->operand_values[0]), to = op->result_values[0];
  const vtype *t = shlo__vhlo_type(&w->v, op->result_types[0]);
  if (from >= to || !w->value_types[from] ||
      strcmp(w->value_types[from]->text, t->text))
    return false;
  w->value_types[to] = t;
  w->alias[to] = from + 1;
  return true;
}

static void write_op(writer *w, const bc_op *op, int indent, bool in_func,
                     int depth) {
  const char *dialect, *name = op_name(w, op, &dialect);
  bc_cursor c = op_cursor(w, op);
  if (drop_identity(w, op, dialect, name)) return;
  bool is_vhlo = !strcmp(dialect, "vhlo");
  if (is_vhlo && !shlo__vhlo_op_find(name)) unknown_op(w, op, name);
  for (int i = 0; i < op->n_results; i++)
    w->value_types[op->result_values[i]] = shlo__vhlo_type(&w->v, op->result_types[i]);
  lowered lo;
  const vattr *generic_attrs = NULL;
  if (is_vhlo) {
    nattr in[VHLO_MAX_OP_ATTRS * 2];
    int n_in = op_attrs(w, op, name, in, VHLO_MAX_OP_ATTRS * 2);
    shlo__vhlo_lower_op(&w->v, &c, name, in_func, in, n_in, &lo);
  } else { /* an unregistered op (check.*, chlo.*): kept as it is */
    if (op->props || op->props_attr >= 0)
      shlo__bc_fail(&c, "op %s.%s has properties; only its attribute dictionary "
                  "is read", dialect, name);
    memset(&lo, 0, sizeof lo);
    snprintf(lo.name, sizeof lo.name, "%s.%s", dialect, name);
    if (op->attr_dict >= 0) generic_attrs = shlo__vhlo_attr(&w->v, op->attr_dict);
    if (generic_attrs && generic_attrs->kind != VA_DICT)
      shlo__bc_fail(&c, "op attributes are not a dictionary");
  }
  shlo__sb_printf(&w->b, "%*s", indent, "");
  for (int i = 0; i < op->n_results; i++) {
    if (i) shlo__sb_printf(&w->b, ", ");
    put_value(w, op->result_values[i]);
  }
  if (op->n_results) shlo__sb_printf(&w->b, " = ");
  shlo__sb_printf(&w->b, "\"%s\"(", lo.name);
  for (int i = 0; i < op->n_operands; i++) {
    if (i) shlo__sb_printf(&w->b, ", ");
    put_value(w, op->operand_values[i]);
  }
  shlo__sb_printf(&w->b, ")");
  if (op->n_regions) {
    if (depth > BC_MAX_DEPTH)
      shlo__bc_fail(&c, "regions nested deeper than %d (the limit)", BC_MAX_DEPTH);
    shlo__sb_printf(&w->b, " (");
    for (int r = 0; r < op->n_regions; r++) {
      shlo__sb_printf(&w->b, "%s{\n", r ? ", " : "");
      write_region_body(w, &op->regions[r], indent + 2, depth + 1);
      shlo__sb_printf(&w->b, "%*s}", indent, "");
    }
    shlo__sb_printf(&w->b, ")");
  }
  if (generic_attrs && generic_attrs->n)
    shlo__vhlo_put_dict(&w->v, &c, &w->b, generic_attrs);
  if (lo.n) {
    shlo__sb_printf(&w->b, " {");
    for (int i = 0; i < lo.n; i++)
      shlo__sb_printf(&w->b, "%s%s = %s", i ? ", " : "", lo.names[i],
                      lo.texts[i]);
    shlo__sb_printf(&w->b, "}");
  }
  shlo__sb_printf(&w->b, " : ");
  put_types(w, op->operand_values, op->n_operands);
  shlo__sb_printf(&w->b, " -> ");
  put_types(w, op->result_values, op->n_results);
  shlo__sb_printf(&w->b, "\n");
}

static void write_block(writer *w, const bc_block *blk, int indent,
                        bool in_func, int depth) {
  for (int i = 0; i < blk->n_ops; i++)
    write_op(w, blk->ops[i], indent, in_func, depth);
}

static const vattr *find_attr(const nattr *a, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (!strcmp(a[i].name, name)) return a[i].a;
  return NULL;
}

/* The dictionary of argument/result i, if any and not empty. */
static const vattr *nth_dict(const vattr *arr, int i) {
  if (!arr || arr->kind != VA_ARRAY || i >= arr->n) return NULL;
  const vattr *d = arr->items[i];
  return d->kind == VA_DICT && d->n ? d : NULL;
}

static void write_func(writer *w, const bc_op *op) {
  const char *dialect, *name = op_name(w, op, &dialect);
  bc_cursor c = op_cursor(w, op);
  /* Shardy's device meshes (JAX declares one for arrays placed on a
   * device): they name devices, which the engine's caller picks. */
  if (!strcmp(dialect, "sdy") && !strcmp(name, "mesh")) return;
  if (strcmp(dialect, "vhlo") || strcmp(name, "func_v1"))
    shlo__bc_fail(&c, "expected vhlo.func_v1 at module level, found %s.%s", dialect,
            name);
  nattr in[VHLO_MAX_OP_ATTRS * 2];
  int n = op_attrs(w, op, name, in, VHLO_MAX_OP_ATTRS * 2);
  const vattr *sym = find_attr(in, n, "sym_name");
  const vattr *ft = find_attr(in, n, "function_type");
  const vattr *vis = find_attr(in, n, "sym_visibility");
  const vattr *aa = find_attr(in, n, "arg_attrs");
  const vattr *ra = find_attr(in, n, "res_attrs");
  if (!sym || sym->kind != VA_STRING || !ft || ft->kind != VA_TYPE ||
      ft->type->kind != VT_FUNCTION || op->n_regions != 1)
    shlo__bc_fail(&c, "malformed vhlo.func_v1");
  const vtype *fty = ft->type;
  shlo__sb_printf(&w->b, "  func.func ");
  if (vis && vis->kind == VA_STRING && vis->slen)
    shlo__sb_printf(&w->b, "%s ", vis->s);
  shlo__sb_printf(&w->b, "@");
  shlo__vhlo_put_string(&w->b, sym->s, sym->slen, true);
  const bc_region *body = &op->regions[0];
  const bc_block *blk = body->n_blocks ? &body->blocks[0] : NULL;
  if (blk && blk->n_args != fty->n_in)
    shlo__bc_fail(&c, "function body has %d arguments, its type %d", blk->n_args,
            fty->n_in);
  shlo__sb_printf(&w->b, "(");
  for (int i = 0; i < fty->n_in; i++) {
    if (i) shlo__sb_printf(&w->b, ", ");
    if (blk) {
      w->value_types[blk->arg_values[i]] = shlo__vhlo_type(&w->v, blk->arg_types[i]);
      put_value(w, blk->arg_values[i]);
      shlo__sb_printf(&w->b, ": ");
    }
    shlo__sb_printf(&w->b, "%s", fty->in[i]->text);
    const vattr *d = nth_dict(aa, i);
    if (d) shlo__vhlo_put_dict(&w->v, &c, &w->b, d);
  }
  shlo__sb_printf(&w->b, ") -> (");
  for (int i = 0; i < fty->n_out; i++) {
    if (i) shlo__sb_printf(&w->b, ", ");
    shlo__sb_printf(&w->b, "%s", fty->out[i]->text);
    const vattr *d = nth_dict(ra, i);
    if (d) shlo__vhlo_put_dict(&w->v, &c, &w->b, d);
  }
  shlo__sb_printf(&w->b, ")");
  shlo__vhlo_put_extra_attrs(&w->v, &c, &w->b, in, n,
                       "sym_name function_type sym_visibility arg_attrs "
                       "res_attrs");
  if (blk) {
    shlo__sb_printf(&w->b, " {\n");
    write_block(w, blk, 4, true, 1);
    shlo__sb_printf(&w->b, "  }");
  }
  shlo__sb_printf(&w->b, "\n");
}

/* builtin.module's properties: sym_name and sym_visibility, each optional
 * (a reference with a presence flag). */
static const vattr *module_name(writer *w, const bc_op *op) {
  if (!op->props) return NULL;
  bc_cursor pc = {op->props, op->props + op->props_n, "properties section", w->f};
  uint64_t v = shlo__bc_varint(&pc);
  if (!(v & 1)) return NULL;
  if ((v >> 1) >= (uint64_t)w->f->n_attrs)
    shlo__bc_fail(&pc, "attribute index out of range");
  return shlo__vhlo_attr(&w->v, (int)(v >> 1));
}

static void write_module(writer *w) {
  bc_cursor c = {w->f->base, w->f->base + w->f->len, "IR section", w->f};
  const bc_block *top = &w->f->top;
  if (top->n_ops != 1) shlo__bc_fail(&c, "expected one top-level module op");
  const bc_op *m = top->ops[0];
  const char *dialect, *name = op_name(w, m, &dialect);
  if (strcmp(dialect, "builtin") || strcmp(name, "module") ||
      m->n_regions != 1 || m->regions[0].n_blocks != 1)
    shlo__bc_fail(&c, "the top-level op is %s.%s, not builtin.module", dialect,
            name);
  shlo__sb_printf(&w->b, "module");
  const vattr *sym = module_name(w, m);
  nattr in[VHLO_MAX_OP_ATTRS];
  int n = 0;
  if (m->attr_dict >= 0) {
    const vattr *d = shlo__vhlo_attr(&w->v, m->attr_dict);
    for (int i = 0; d->kind == VA_DICT && i < d->n && n < VHLO_MAX_OP_ATTRS; i++)
      in[n++] = (nattr){d->keys[i]->s, d->items[i]};
  }
  if (!sym) sym = find_attr(in, n, "sym_name");
  if (sym && sym->kind == VA_STRING) {
    shlo__sb_printf(&w->b, " @");
    shlo__vhlo_put_string(&w->b, sym->s, sym->slen, true);
  }
  shlo__vhlo_put_extra_attrs(&w->v, &c, &w->b, in, n, "sym_name sym_visibility");
  shlo__sb_printf(&w->b, " {\n");
  const bc_block *body = &m->regions[0].blocks[0];
  for (int i = 0; i < body->n_ops; i++) write_func(w, body->ops[i]);
  shlo__sb_printf(&w->b, "}\n");
}

static void fill_info(const bc_file *f, shlo_artifact_info *info) {
  memset(info, 0, sizeof *info);
  snprintf(info->producer, sizeof info->producer, "%s",
           f->producer ? f->producer : "");
  info->bytecode_version = (unsigned)f->version;
  const char *p = strstr(info->producer, "_v");
  if (p) {
    unsigned a, b, c;
    if (sscanf(p + 2, "%u.%u.%u", &a, &b, &c) == 3)
      snprintf(info->version, sizeof info->version, "%u.%u.%u", a, b, c);
  }
}

char *shlo_artifact_to_text(const void *bytes, size_t len,
                            const char *filename, shlo_artifact_info *info,
                            shlo_diag *diag) {
  bc_file f;
  shlo_artifact_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof *info);
  if (shlo__bc_read(&f, bytes, len, filename, diag) != SHLO_OK) {
    fill_info(&f, info);
    shlo__bc_free(&f);
    return NULL;
  }
  fill_info(&f, info);
  writer *w = shlo__calloc(1, sizeof *w);
  char *text = NULL;
  if (!w) {
    shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0, "out of memory");
    shlo__bc_free(&f);
    return NULL;
  }
  w->f = &f;
  w->version = info->version;
  int jumped = setjmp(f.on_error);
  if (!jumped) {
    shlo__vhlo_ctx_init(&w->v, &f);
    w->value_types = shlo__bc_alloc(&f, sizeof *w->value_types *
                                      (size_t)(f.n_values + 1));
    memset(w->value_types, 0, sizeof *w->value_types * (size_t)(f.n_values + 1));
    w->alias = shlo__bc_alloc(&f, sizeof *w->alias * (size_t)(f.n_values + 1));
    memset(w->alias, 0, sizeof *w->alias * (size_t)(f.n_values + 1));
    write_module(w);
    text = shlo__sb_take(&w->b);
    if (!text)
      shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0, "out of memory");
  }
  shlo__vhlo_ctx_free_bufs(&w->v);
  shlo__sb_free(&w->b);
  shlo__free(w);
  shlo__bc_free(&f);
  return text;
}

bool shlo_is_artifact(const void *bytes, size_t len) {
  return shlo__bc_is_bytecode(bytes, len);
}

shlo_status shlo_read_artifact(const void *bytes, size_t len,
                               const char *filename, shlo_module **out,
                               shlo_artifact_info *info, shlo_diag *diag) {
  *out = NULL;
  shlo_artifact_info local;
  if (!info) info = &local;
  if (diag) shlo_diag_clear(diag);
  char *text = shlo_artifact_to_text(bytes, len, filename, info, diag);
  if (!text) return diag && diag->code ? diag->code : SHLO_EPARSE;
  shlo_status st = shlo_parse_module(text, strlen(text), filename, out, diag);
  if (st == SHLO_OK && info) {
    (*out)->producer = shlo__arena_strndup((*out)->arena, info->producer,
                                           strlen(info->producer));
    (*out)->stablehlo_version = shlo__arena_strndup(
        (*out)->arena, info->version, strlen(info->version));
    if (!(*out)->producer || !(*out)->stablehlo_version) {
      shlo_module_free(*out);
      *out = NULL;
      st = shlo_diag_set(diag, SHLO_ENOMEM, filename, 0, 0, "out of memory");
    }
  }
  if (st != SHLO_OK && diag) {
    /* The text is ours, not the user's: say so rather than point at a
     * line they cannot see. */
    char msg[SHLO_DIAG_MAX];
    snprintf(msg, sizeof msg, "artifact lowers to StableHLO that does not "
             "parse (line %d of the lowered text): %.900s", diag->line,
             diag->message);
    shlo_diag_set(diag, st, filename, 0, 0, "%s", msg);
  }
  free(text);
  return st;
}
