/* SPDX-License-Identifier: Apache-2.0 */
/* The Open Inference Protocol routes (see oip.h). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "batch.h"
#include "core/value.h"
#include "json_write.h"
#include "oip.h"
#include "shlo/protocol.h"
#include "shlo/grid.h"
#include "shlo/version.h"
#include "repository.h"
#include "store.h"

/* ---- datatypes: the protocol's table against the engine's types ---- */

static const struct {
  shlo_elem_type et;
  const char *name;
} datatypes[] = {
    {SHLO_I1, "BOOL"},     {SHLO_UI8, "UINT8"},   {SHLO_UI16, "UINT16"},
    {SHLO_UI32, "UINT32"}, {SHLO_UI64, "UINT64"}, {SHLO_SI8, "INT8"},
    {SHLO_SI16, "INT16"},  {SHLO_SI32, "INT32"},  {SHLO_SI64, "INT64"},
    {SHLO_F16, "FP16"},    {SHLO_F32, "FP32"},    {SHLO_F64, "FP64"},
    {SHLO_BF16, "BF16"},
};

/* The protocol's datatype of a tensor type; NULL when it has none (a
 * quantized tensor, i4, f8 kinds, complex numbers, tuples, tokens). */
static const char *datatype_of(const shlo_type *t) {
  if (t->kind != SHLO_TYPE_TENSOR || t->quant) return NULL;
  for (size_t i = 0; i < sizeof datatypes / sizeof *datatypes; i++)
    if (datatypes[i].et == t->elem) return datatypes[i].name;
  return NULL;
}

/* ---- tensor names ---- */

/* The names of a model's inputs (or outputs), in order: a model
 * repository's config.json names them; else a JAX export's jax.arg_info /
 * jax.result_info attributes, when each is a usable name and no two are
 * the same; else input0, input1, ... (output0, ...). */
#define OIP_IO_NAME_LEN 128

typedef struct io_names {
  int n;
  char (*name)[OIP_IO_NAME_LEN];
} io_names;

/* The string attribute key of dictionary d, or NULL. */
static const char *dict_string(const shlo_attr *d, const char *key) {
  if (!d || d->kind != SHLO_ATTR_STRUCT || d->struct_name) return NULL;
  for (int i = 0; i < d->n; i++)
    if (!strcmp(d->fields[i].name, key) && d->fields[i].value &&
        d->fields[i].value->kind == SHLO_ATTR_STRING)
      return d->fields[i].value->str;
  return NULL;
}

/* A name a client can send back: 1..127 printable ASCII bytes. */
static bool usable_name(const char *s) {
  size_t n = s ? strlen(s) : 0;
  if (!n || n >= OIP_IO_NAME_LEN) return false;
  for (size_t i = 0; i < n; i++)
    if (s[i] < 0x20 || s[i] > 0x7e) return false;
  return true;
}

static bool names_distinct(const io_names *io) {
  for (int i = 0; i < io->n; i++)
    for (int j = 0; j < i; j++)
      if (!strcmp(io->name[i], io->name[j])) return false;
  return true;
}

/* The program's own names (JAX's attributes), into io; false when one
 * is missing, unusable, or two are the same. */
static bool program_names(const shlo_func *f, bool output, io_names *io) {
  const shlo_attr **attrs = output ? f->result_attrs : f->arg_attrs;
  const char *key = output ? "jax.result_info" : "jax.arg_info";
  for (int i = 0; i < io->n; i++) {
    const char *nm = attrs ? dict_string(attrs[i], key) : NULL;
    if (!usable_name(nm)) return false;
    snprintf(io->name[i], OIP_IO_NAME_LEN, "%s", nm);
  }
  return names_distinct(io);
}

static void io_names_free(io_names *io) {
  free(io->name);
  io->name = NULL;
  io->n = 0;
}

/* The names of module id's function f, as team's model `model` names
 * them (NULL: an id was asked for): false when out of memory. */
static bool io_names_make(srv_server *s, const char *team, const char *model,
                          const char *id, const shlo_func *f, bool output,
                          io_names *io) {
  io->n = output ? f->n_results : f->n_args;
  io->name = calloc((size_t)io->n + 1, sizeof *io->name);
  if (!io->name) return false;
  bool named = true;
  for (int i = 0; i < io->n && named; i++)
    named = srv_repository_io_name(s, team, model, id, output, i,
                                   io->name[i], OIP_IO_NAME_LEN) &&
            usable_name(io->name[i]);
  if (named && names_distinct(io)) return true;
  if (program_names(f, output, io)) return true;
  for (int i = 0; i < io->n; i++)
    snprintf(io->name[i], OIP_IO_NAME_LEN, "%s%d",
             output ? "output" : "input", i);
  return true;
}

/* The index of a tensor name in io, or -1.  The positional name (inputN,
 * outputN) is also taken where no tensor is named so. */
static int io_index(const io_names *io, const char *s, const char *kind) {
  if (!s) return -1;
  for (int i = 0; i < io->n; i++)
    if (!strcmp(io->name[i], s)) return i;
  size_t k = strlen(kind);
  if (strncmp(s, kind, k) || s[k] < '0' || s[k] > '9' ||
      (s[k] == '0' && s[k + 1]))
    return -1;
  char *end;
  long i = strtol(s + k, &end, 10);
  return *end || i < 0 || i >= io->n ? -1 : (int)i;
}

/* "a, b, c" of io's names (at most cap bytes, "..." when cut). */
static void io_list(const io_names *io, char *out, size_t cap) {
  size_t at = 0;
  out[0] = 0;
  for (int i = 0; i < io->n && at < cap; i++) {
    int w = snprintf(out + at, cap - at, "%s%s", i ? ", " : "", io->name[i]);
    if (w < 0 || (size_t)w >= cap - at) {
      snprintf(out + (cap > 4 ? cap - 4 : 0), cap > 4 ? 4 : cap, "...");
      return;
    }
    at += (size_t)w;
  }
}

/* ---- answers ---- */

static void reply(srv_request *r, int status, char *json) {
  free(r->resp);
  r->resp = json;
  r->resp_len = json ? strlen(json) : 0;
  r->status = json ? status : 500;
  r->resp_text = false;
}

static void oip_error(srv_request *r, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void oip_error(srv_request *r, int status, const char *fmt, ...) {
  char msg[1400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  strbuf b = {0};
  shlo__sb_putc(&b, '{');
  shlo__json_key(&b, "error", true);
  shlo__json_str(&b, msg);
  shlo__sb_putc(&b, '}');
  reply(r, status, shlo__sb_take(&b));
}

void srv_oip_error_shape(srv_request *r) {
  shlo_proto_error e;
  if (!r->resp || !shlo_proto_error_parse(r->resp, r->resp_len, &e)) return;
  oip_error(r, r->status, "%s: %s", shlo_proto_err_name(e.kind), e.message);
}

/* ---- routes ---- */

srv_route srv_oip_match(const char *url) {
  if (!strcmp(url, "/v2/health/live") || !strcmp(url, "/v2/health/ready"))
    return R_OIP_HEALTH;
  if (!strcmp(url, "/v2") || !strcmp(url, "/v2/")) return R_OIP;
  if (!strcmp(url, "/v2/models") || !strcmp(url, "/v2/models/"))
    return R_OIP_MODELS;
  if (!strcmp(url, "/v2/repository/index") ||
      !strncmp(url, "/v2/repository/models/", 22))
    return R_OIP_REPO;
  if (strncmp(url, "/v2/models/", 11) || !url[11]) return R_OTHER;
  size_t n = strlen(url);
  if (n > 6 && !strcmp(url + n - 6, "/infer")) return R_OIP_INFER;
  return R_OIP;
}

/* GET /v2/models: the caller's team's models, each with its versions
 * (an admin's: every team's, as TEAM/NAME). */
static void models_listing(srv_request *r) {
  const srv_team *owner = srv_listing_team(r);
  srv_name_row *rows;
  int n = srv_names_snapshot(&r->srv->names, owner ? owner->name : NULL,
                             &rows);
  if (n < 0) {
    oip_error(r, 500, "out of memory");
    return;
  }
  strbuf b = {0};
  shlo__sb_puts(&b, "{\"models\":[");
  for (int i = 0; i < n; i++) {
    bool first = !i || strcmp(rows[i].team, rows[i - 1].team) ||
                 strcmp(rows[i].name, rows[i - 1].name);
    bool last = i == n - 1 || strcmp(rows[i].team, rows[i + 1].team) ||
                strcmp(rows[i].name, rows[i + 1].name);
    if (first) {
      char full[2 * SRV_NAME_LEN + 1];
      snprintf(full, sizeof full, "%s%s%s", owner ? "" : rows[i].team,
               owner ? "" : "/", rows[i].name);
      shlo__sb_puts(&b, i ? ",{" : "{");
      shlo__json_key(&b, "name", true);
      shlo__json_str(&b, full);
      shlo__sb_puts(&b, ",\"platform\":\"shlo_stablehlo\",\"versions\":[");
    }
    shlo__sb_printf(&b, "%s\"%d\"", first ? "" : ",", rows[i].version);
    if (last) shlo__sb_puts(&b, "]}");
  }
  shlo__sb_puts(&b, "]}");
  free(rows);
  reply(r, 200, shlo__sb_take(&b));
}

/* /v2/repository/index (GET, or POST with {"ready": true} for the ready
 * versions only). */
static void repository_index(srv_request *r) {
  bool ready_only = false;
  if (r->body && r->len) {
    cJSON *q = shlo_proto_json_parse(r->body, r->len, NULL);
    if (q && !cJSON_IsObject(q)) {
      cJSON_Delete(q);
      q = NULL;
    }
    if (!q) {
      oip_error(r, 400, "the index request is not one JSON object");
      return;
    }
    ready_only = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(q, "ready"));
    cJSON_Delete(q);
  }
  /* without tokens every caller is an admin: the models never loaded
   * (which have no team yet) are listed too */
  const srv_team *owner = srv_visible_owner(r);
  char *json = srv_repository_index(r->srv, owner ? owner->name : NULL,
                                    ready_only);
  if (!json) oip_error(r, 500, "out of memory");
  else reply(r, 200, json);
}

bool srv_oip_answer_inline(srv_request *r) {
  const char *u = r->path;
  if (!strcmp(u, "/v2/models") || !strcmp(u, "/v2/models/")) {
    models_listing(r);
  } else if (!strcmp(u, "/v2/repository/index")) {
    repository_index(r);
  } else if (!strncmp(u, "/v2/repository/", 15)) {
    return false; /* load, unload: a worker's (they compile) */
  } else if (!strcmp(u, "/v2/health/live")) {
    reply(r, 200, strdup("{\"live\":true}"));
  } else if (!strcmp(u, "/v2/health/ready")) {
    bool ready = !r->srv->draining;
    reply(r, ready ? 200 : 503,
          strdup(ready ? "{\"ready\":true}" : "{\"ready\":false}"));
  } else if (!strcmp(u, "/v2") || !strcmp(u, "/v2/")) {
    reply(r, 200, strdup("{\"name\":\"shlo\",\"version\":\"" SHLO_VERSION_STRING
                         "\",\"extensions\":[\"binary_tensor_data\"]}"));
  } else {
    return false;
  }
  return true;
}

/* Model names in URLs: a name, an id, or an admin's TEAM/NAME. */
#define OIP_NAME_LEN (2 * STORE_NAME_LEN + SRV_ID_LEN)

/* The length of the model name at p: up to the next '/', or for an
 * admin's TEAM/NAME the one after (a '/' followed by anything but
 * "versions/", "ready" or "infer"). */
static size_t name_length(const char *p) {
  const char *slash = strchr(p, '/');
  if (!slash) return strlen(p);
  const char *after = slash + 1;
  if (!strncmp(after, "versions/", 9) || !strcmp(after, "ready") ||
      !strcmp(after, "infer"))
    return (size_t)(slash - p);
  const char *second = strchr(after, '/');
  return second ? (size_t)(second - p) : strlen(p);
}

/* The model's name, its version (0: none given) and what follows them in
 * the URL ("", "/ready", "/infer"); false (error set) when the URL names
 * no model we serve. */
static bool split_path(srv_request *r, char name[OIP_NAME_LEN],
                       int *version, const char **rest) {
  const char *p = r->path + 11;
  size_t n = name_length(p);
  *rest = p + n;
  *version = 0;
  if (n == 0 || n >= OIP_NAME_LEN) {
    oip_error(r, 400, "malformed model name in %s", r->path);
    return false;
  }
  memcpy(name, p, n);
  name[n] = 0;
  if (!strncmp(*rest, "/versions/", 10)) {
    char *end;
    long v = strtol(*rest + 10, &end, 10);
    if (end == *rest + 10 || v < 1 || v > INT32_MAX ||
        (*end && *end != '/')) {
      oip_error(r, 400, "malformed model version in %s", r->path);
      return false;
    }
    *version = (int)v;
    *rest = end;
  }
  if (**rest && strcmp(*rest, "/ready") && strcmp(*rest, "/infer")) {
    oip_error(r, 404, "no route %s", r->path);
    return false;
  }
  return true;
}

/* The module's entry function (the model), or NULL with the error set. */
static const shlo_func *model_func(srv_request *r, cache_entry *e) {
  const shlo_func *f = e->entry ? shlo_module_find_func(e->m, e->entry)
                                : shlo_module_entry(e->m);
  if (!f)
    oip_error(r, 400, "module %s has no entry function (register it with "
                      "\"entry\")", e->id);
  return f;
}

/* {"name","datatype","shape"} of argument or result i; false (error set)
 * when the type has no datatype in the protocol. */
static bool tensor_meta(srv_request *r, strbuf *b, const char *kind, int i,
                        const char *name, const shlo_type *t) {
  const char *dt = datatype_of(t);
  char ty[256];
  if (!dt) {
    shlo_type_format(t, ty, sizeof ty);
    oip_error(r, 400, "%s%d is %s, which the Open Inference Protocol has no "
                      "datatype for", kind, i, ty);
    return false;
  }
  shlo__sb_puts(b, i ? ",{" : "{");
  shlo__json_key(b, "name", true);
  shlo__json_str(b, name);
  shlo__sb_printf(b, ",\"datatype\":\"%s\",\"shape\":[", dt);
  for (int d = 0; d < t->rank; d++)
    shlo__sb_printf(b, "%s%lld", d ? "," : "",
                    t->dims[d] < 0 ? -1LL : (long long)t->dims[d]);
  shlo__sb_puts(b, "]}");
  return true;
}

/* The versions of team's model name, as OIP lists them (strings). */
static void put_versions(strbuf *b, srv_request *r, const char *team,
                         const char *name) {
  int v[64];
  int n = srv_names_versions(&r->srv->names, team, name, v, 64);
  shlo__json_key(b, "versions", false);
  shlo__sb_putc(b, '[');
  for (int i = 0; i < n && i < 64; i++)
    shlo__sb_printf(b, "%s\"%d\"", i ? "," : "", v[i]);
  shlo__sb_putc(b, ']');
}

/* team: the team whose name it is (NULL when addressed by id). */
static void model_metadata(srv_request *r, cache_entry *e, const char *name,
                           const char *team) {
  const shlo_func *f = model_func(r, e);
  if (!f) return;
  io_names ins = {0}, outs = {0};
  if (!io_names_make(r->srv, team, name, e->id, f, false, &ins) ||
      !io_names_make(r->srv, team, name, e->id, f, true, &outs)) {
    io_names_free(&ins);
    io_names_free(&outs);
    oip_error(r, 500, "out of memory");
    return;
  }
  strbuf b = {0};
  shlo__sb_putc(&b, '{');
  shlo__json_key(&b, "name", true);
  shlo__json_str(&b, name);
  if (team) {
    const char *slash = strchr(name, '/');
    put_versions(&b, r, team, slash ? slash + 1 : name);
  }
  shlo__json_key(&b, "platform", false);
  shlo__json_str(&b, "shlo_stablehlo");
  shlo__json_key(&b, "inputs", false);
  shlo__sb_putc(&b, '[');
  for (int i = 0; i < f->n_args; i++)
    if (!tensor_meta(r, &b, "input", i, ins.name[i], f->arg_types[i]))
      goto fail;
  shlo__sb_putc(&b, ']');
  shlo__json_key(&b, "outputs", false);
  shlo__sb_putc(&b, '[');
  for (int i = 0; i < f->n_results; i++)
    if (!tensor_meta(r, &b, "output", i, outs.name[i], f->result_types[i]))
      goto fail;
  shlo__sb_puts(&b, "]}");
  reply(r, 200, shlo__sb_take(&b));
  goto out;
fail:
  shlo__sb_free(&b);
out:
  io_names_free(&ins);
  io_names_free(&outs);
}

/* ---- inference ---- */

typedef struct infer {
  srv_request *r;
  const char *name;
  const char *team;   /* whose model name is; NULL when addressed by id */
  int version;        /* of a named model; 0 when addressed by id */
  cache_entry *e;
  const shlo_executable *x;
  const shlo_func *f;
  cJSON *root;
  const char *bin;    /* the binary part of the body */
  size_t bin_len, bin_used;
  shlo_value **args, **res;
  int n_res;
  io_names ins, outs; /* the model's tensor names */
} infer;

/* The input's "parameters"."binary_data_size", -1 when absent. */
static int64_t binary_size(const cJSON *t) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(t, "parameters");
  const cJSON *s = p ? cJSON_GetObjectItemCaseSensitive(p, "binary_data_size")
                     : NULL;
  if (!s) return -1;
  /* (a double past int64_t would not convert: refused as malformed) */
  return cJSON_IsNumber(s) && s->valuedouble >= 0 && s->valuedouble < 9e18
             ? (int64_t)s->valuedouble
             : -2;
}

/* Check the datatype and shape a request gives for input i. */
static bool check_head(infer *in, const cJSON *t, int i, const shlo_type *ty) {
  const cJSON *dt = cJSON_GetObjectItemCaseSensitive(t, "datatype");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(t, "shape");
  const char *want = datatype_of(ty);
  char tys[256];
  shlo_type_format(ty, tys, sizeof tys);
  if (!want) {
    oip_error(in->r, 400, "%s is %s, which the Open Inference Protocol "
                          "has no datatype for", in->ins.name[i], tys);
    return false;
  }
  if (!cJSON_IsString(dt) || strcmp(dt->valuestring, want)) {
    oip_error(in->r, 400, "%s: datatype %s, the model takes %s (%s)",
              in->ins.name[i],
              cJSON_IsString(dt) ? dt->valuestring : "missing", want, tys);
    return false;
  }
  bool ok = cJSON_IsArray(sh) && cJSON_GetArraySize(sh) == ty->rank;
  int d = 0;
  for (const cJSON *c = ok ? sh->child : NULL; c && ok; c = c->next, d++)
    ok = cJSON_IsNumber(c) && c->valuedouble >= 0 &&
         (ty->dims[d] < 0 || c->valuedouble == (double)ty->dims[d]);
  if (!ok) oip_error(in->r, 400, "%s: the shape is not that of %s",
                    in->ins.name[i], tys);
  return ok;
}

/* The next binary_data_size bytes of the body as input i. */
static bool binary_input(infer *in, const cJSON *t, int i,
                         const shlo_type *ty, int64_t size) {
  int64_t dims[SHLO_MAX_RANK];
  const cJSON *c = cJSON_GetObjectItemCaseSensitive(t, "shape")->child;
  for (int d = 0; d < ty->rank; d++, c = c->next)
    dims[d] = (int64_t)c->valuedouble; /* check_head: as the type says */
  int64_t numel = 1;
  for (int d = 0; d < ty->rank; d++)
    numel = dims[d] && numel > INT64_MAX / dims[d] ? -1 : numel * dims[d];
  const srv_config *cfg = &in->r->srv->cfg;
  if (numel < 0 || numel > cfg->max_tensor_elements ||
      size > cfg->max_tensor_bytes) {
    oip_error(in->r, 413, "%s: over max-tensor-elements (%lld) or "
                          "max-tensor-bytes (%lld)", in->ins.name[i],
              (long long)cfg->max_tensor_elements,
              (long long)cfg->max_tensor_bytes);
    return false;
  }
  shlo_value *v = shlo_tensor_new(ty->elem, ty->rank, dims);
  if (!v) {
    oip_error(in->r, 413, "%s: out of memory", in->ins.name[i]);
    return false;
  }
  in->args[i] = v;
  if ((uint64_t)size != v->nbytes) {
    oip_error(in->r, 400, "%s: binary_data_size is %lld, the shape "
                          "needs %zu bytes", in->ins.name[i], (long long)size, v->nbytes);
    return false;
  }
  if (in->bin_len - in->bin_used < v->nbytes) {
    oip_error(in->r, 400, "%s: the body ends %zu bytes into its binary "
                          "data", in->ins.name[i], in->bin_len - in->bin_used);
    return false;
  }
  memcpy(v->data, in->bin + in->bin_used, v->nbytes);
  in->bin_used += v->nbytes;
  if (v->elem == SHLO_I1)
    for (size_t k = 0; k < v->nbytes; k++)
      if (((const uint8_t *)v->data)[k] > 1) {
        oip_error(in->r, 400, "%s: BOOL byte %zu is %u, not 0 or 1",
                  in->ins.name[i],
                  k, ((const uint8_t *)v->data)[k]);
        return false;
      }
  return true;
}

/* Input i from its "data" (nested or flat lists), through the server's
 * own tensor decoder and its limits. */
static bool json_input(infer *in, const cJSON *t, int i, const shlo_type *ty) {
  const srv_config *cfg = &in->r->srv->cfg;
  shlo_proto_limits lim = {cfg->max_tensor_elements, cfg->max_tensor_bytes,
                           (int)cfg->max_inputs};
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(t, "data");
  if (!data) {
    oip_error(in->r, 400, "%s: no \"data\" and no binary_data_size",
              in->ins.name[i]);
    return false;
  }
  cJSON *obj = cJSON_CreateObject(), *shape = cJSON_CreateArray();
  bool ok = obj && shape;
  for (int d = 0; ok && d < ty->rank; d++) {
    const cJSON *given = cJSON_GetArrayItem(
        cJSON_GetObjectItemCaseSensitive(t, "shape"), d);
    ok = cJSON_AddItemToArray(shape, cJSON_CreateNumber(given->valuedouble));
  }
  ok = ok && cJSON_AddItemToObject(obj, "shape", shape);
  if (!ok) cJSON_Delete(shape);
  ok = ok && cJSON_AddStringToObject(obj, "dtype", shlo_elem_name(ty->elem)) &&
       cJSON_AddItemReferenceToObject(obj, "data", (cJSON *)data);
  if (!ok) {
    cJSON_Delete(obj);
    oip_error(in->r, 500, "out of memory");
    return false;
  }
  char path[OIP_IO_NAME_LEN];
  snprintf(path, sizeof path, "%s", in->ins.name[i]);
  shlo_proto_error pe;
  int rc = shlo_proto_tensor_decode(obj, ty, &lim, path, &in->args[i], &pe);
  cJSON_Delete(obj);
  if (rc) oip_error(in->r, pe.http, "%s", pe.message);
  return rc == 0;
}

static bool decode_inputs(infer *in) {
  const cJSON *inputs = cJSON_GetObjectItemCaseSensitive(in->root, "inputs");
  const shlo_func *f = in->f;
  char names[512];
  io_list(&in->ins, names, sizeof names);
  if (!cJSON_IsArray(inputs)) {
    oip_error(in->r, 400, "\"inputs\" must list the model's %d input%s (%s)",
              f->n_args, f->n_args == 1 ? "" : "s", names);
    return false;
  }
  in->args = calloc((size_t)f->n_args + 1, sizeof *in->args);
  if (!in->args) {
    oip_error(in->r, 500, "out of memory");
    return false;
  }
  for (const cJSON *t = inputs->child; t; t = t->next) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
    int i = io_index(&in->ins, cJSON_IsString(nm) ? nm->valuestring : NULL,
                     "input");
    if (i < 0 || in->args[i]) {
      oip_error(in->r, 400, "input %s: %s%s", cJSON_IsString(nm) ?
                nm->valuestring : "without a name", i < 0 ?
                "the model has no such input; its inputs are " :
                "given twice", i < 0 ? names : "");
      return false;
    }
    const shlo_type *ty = f->arg_types[i];
    if (!check_head(in, t, i, ty)) return false;
    int64_t size = binary_size(t);
    if (size == -2) {
      oip_error(in->r, 400, "%s: binary_data_size must be a number of "
                            "bytes", in->ins.name[i]);
      return false;
    }
    if (!(size >= 0 ? binary_input(in, t, i, ty, size) : json_input(in, t, i, ty)))
      return false;
  }
  for (int i = 0; i < f->n_args; i++)
    if (!in->args[i]) {
      oip_error(in->r, 400, "input %s is missing; the model's inputs are %s",
                in->ins.name[i], names);
      return false;
    }
  if (in->bin_used != in->bin_len) {
    oip_error(in->r, 400, "%zu bytes of binary data follow the JSON, the "
                          "inputs use %zu", in->bin_len, in->bin_used);
    return false;
  }
  return true;
}

/* Which results to answer, in which order, each as binary or JSON: the
 * request's "outputs" (by name), else every result. */
typedef struct wanted {
  int n, idx[64];
  bool binary[64];
} wanted;

static bool param_true(const cJSON *obj, const char *key) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(obj, "parameters");
  return cJSON_IsTrue(p ? cJSON_GetObjectItemCaseSensitive(p, key) : NULL);
}

static bool choose_outputs(infer *in, wanted *w) {
  const cJSON *outs = cJSON_GetObjectItemCaseSensitive(in->root, "outputs");
  bool all_binary = param_true(in->root, "binary_data_output");
  int n = in->f->n_results;
  w->n = 0;
  if (!outs || cJSON_IsNull(outs)) {
    if (n > 64) {
      oip_error(in->r, 400, "the model has %d outputs; name at most 64", n);
      return false;
    }
    for (int i = 0; i < n; i++, w->n++) {
      w->idx[i] = i;
      w->binary[i] = all_binary;
    }
    return true;
  }
  if (!cJSON_IsArray(outs) || cJSON_GetArraySize(outs) > 64) {
    oip_error(in->r, 400, "\"outputs\" must be a list of at most 64 outputs");
    return false;
  }
  for (const cJSON *o = outs->child; o; o = o->next, w->n++) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
    int i = io_index(&in->outs, cJSON_IsString(nm) ? nm->valuestring : NULL,
                     "output");
    if (i < 0) {
      char names[512];
      io_list(&in->outs, names, sizeof names);
      oip_error(in->r, 400, "no output %s: the model's outputs are %s",
                cJSON_IsString(nm) ? nm->valuestring : "(no name)", names);
      return false;
    }
    w->idx[w->n] = i;
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(o, "parameters");
    const cJSON *bd = p ? cJSON_GetObjectItemCaseSensitive(p, "binary_data")
                        : NULL;
    w->binary[w->n] = bd ? cJSON_IsTrue(bd) : all_binary;
  }
  return true;
}

/* One output's JSON, its data either inline or (binary) appended to bin. */
static bool put_output(infer *in, strbuf *b, strbuf *bin, int k, int i,
                       bool binary) {
  const shlo_value *v = in->res[i];
  const char *dt = v->kind == SHLO_TYPE_TENSOR && !v->quant
                       ? datatype_of(in->f->result_types[i])
                       : NULL;
  if (!dt) {
    oip_error(in->r, 400, "%s has no datatype in the Open Inference "
                          "Protocol", in->outs.name[i]);
    return false;
  }
  shlo__sb_puts(b, k ? ",{" : "{");
  shlo__json_key(b, "name", true);
  shlo__json_str(b, in->outs.name[i]);
  shlo__sb_printf(b, ",\"datatype\":\"%s\",\"shape\":[", dt);
  for (int d = 0; d < v->rank; d++)
    shlo__sb_printf(b, "%s%lld", d ? "," : "", (long long)v->dims[d]);
  shlo__sb_puts(b, "],");
  if (binary) {
    shlo__sb_printf(b, "\"parameters\":{\"binary_data_size\":%zu}}",
                    v->nbytes);
    shlo__sb_add(bin, v->data, v->nbytes);
    return true;
  }
  /* the server's own writer: {"dtype","shape","data":[...]}, flat */
  char *t = shlo_proto_tensor_encode(v, false);
  const char *data = t ? strstr(t, "\"data\":") : NULL;
  if (!data) {
    free(t);
    oip_error(in->r, 500, "out of memory");
    return false;
  }
  shlo__sb_add(b, data, strlen(data)); /* ends with the tensor's '}' */
  free(t);
  return true;
}

/* The outputs asked for as JSON could pass max-json-answer-bytes: 413,
 * before any of their text is written. */
static bool json_too_large(infer *in, const wanted *w) {
  uint64_t cap = (uint64_t)in->r->srv->cfg.max_json_answer_bytes, n = 0;
  for (int k = 0; k < w->n; k++)
    if (!w->binary[k])
      n += shlo_proto_value_json_max(in->res[w->idx[k]], false);
  if (!cap || n <= cap) return false;
  in->r->srv->metrics.refused_json_answers++;
  oip_error(in->r, 413, "limit max-json-answer-bytes (%llu): the outputs as "
            "JSON text could take %llu bytes; ask for them as binary_data "
            "or use the binary port", (unsigned long long)cap,
            (unsigned long long)n);
  return true;
}

static void answer_infer(infer *in) {
  wanted w;
  if (!choose_outputs(in, &w) || json_too_large(in, &w)) return;
  strbuf b = {0}, bin = {0};
  shlo__sb_putc(&b, '{');
  shlo__json_key(&b, "model_name", true);
  shlo__json_str(&b, in->name);
  if (in->version) shlo__sb_printf(&b, ",\"model_version\":\"%d\"",
                                   in->version);
  const cJSON *id = cJSON_GetObjectItemCaseSensitive(in->root, "id");
  if (cJSON_IsString(id)) {
    shlo__json_key(&b, "id", false);
    shlo__json_str(&b, id->valuestring);
  }
  shlo__json_key(&b, "outputs", false);
  shlo__sb_putc(&b, '[');
  for (int k = 0; k < w.n; k++)
    if (!put_output(in, &b, &bin, k, w.idx[k], w.binary[k])) {
      shlo__sb_free(&b);
      shlo__sb_free(&bin);
      return;
    }
  shlo__sb_puts(&b, "]}");
  size_t json_len = b.len;
  bool any_binary = false;
  for (int k = 0; k < w.n; k++) any_binary |= w.binary[k];
  if (any_binary) shlo__sb_add(&b, bin.data ? bin.data : "", bin.len);
  shlo__sb_free(&bin);
  size_t total = b.len;
  reply(in->r, 200, shlo__sb_take(&b));
  if (in->r->resp) { /* binary data may hold NUL bytes: not strlen */
    in->r->resp_len = total;
    in->r->oip_json_len = any_binary ? json_len : 0;
  }
}

/* The JSON part of the body, and the binary part after it when the
 * request has Inference-Header-Content-Length. */
static bool read_request(infer *in) {
  srv_request *r = in->r;
  size_t json_len = r->len;
  if (r->oip_header_len >= 0) {
    if ((uint64_t)r->oip_header_len > r->len) {
      oip_error(r, 400, "Inference-Header-Content-Length is %lld, the body "
                        "has %zu bytes", (long long)r->oip_header_len, r->len);
      return false;
    }
    json_len = (size_t)r->oip_header_len;
  }
  in->bin = r->body + json_len;
  in->bin_len = r->len - json_len;
  size_t stop = 0;
  in->root = shlo_proto_json_parse(r->body, json_len, &stop);
  bool trailing = false;
  for (size_t i = stop; in->root && i < json_len; i++)
    trailing |= r->body[i] != ' ' && r->body[i] != '\t' &&
                r->body[i] != '\r' && r->body[i] != '\n';
  if (!cJSON_IsObject(in->root) || trailing) {
    oip_error(r, 400, "the inference request is not one JSON object%s",
              r->oip_header_len < 0 && r->len != strlen(r->body)
                  ? " (binary data needs Inference-Header-Content-Length)"
                  : "");
    return false;
  }
  return true;
}

static void run_infer(infer *in) {
  srv_request *r = in->r;
  srv_server *s = r->srv;
  shlo_diag d;
  shlo_diag_clear(&d);
  bool compiled;
  shlo_status st = cache_entry_exe(&s->cache, in->e, NULL, &r->cancel, &in->x,
                                   &compiled, &d);
  int mr, mp;
  shlo_module_grid(in->e->m, &mr, &mp);
  if (!st && (mr * mp > 1 || in->e->replicas > 1 || in->e->partitions > 1)) {
    oip_error(r, 400, "module %s runs on a grid; the Open Inference Protocol "
                      "serves single-process modules only", in->e->id);
    return;
  }
  if (st) {
    oip_error(r, st == SHLO_ELIMIT ? 413 : 400, "compile: %s", d.message);
    return;
  }
  in->f = shlo_executable_entry(in->x);
  if (!io_names_make(s, in->team, in->name, in->e->id, in->f, false,
                     &in->ins) ||
      !io_names_make(s, in->team, in->name, in->e->id, in->f, true,
                     &in->outs)) {
    oip_error(r, 500, "out of memory");
    return;
  }
  if (!read_request(in) || !decode_inputs(in)) return;
  shlo_exec_opts opts = {.timeout_s = (double)s->cfg.default_timeout_ms / 1e3,
                         .print_stream = s->devnull,
                         .cancel = &r->cancel,
                         .max_bytes = s->cfg.max_exec_memory};
  uint64_t t0 = srv_now_ns();
  /* stacked with concurrent infers of a batching model (batch.h) */
  srv_batch_how how;
  st = srv_batch_execute(s->batcher, r->team->name, in->e->id, in->x, &opts,
                         in->args, in->f->n_args, &in->res, &in->n_res, &d,
                         &how);
  r->exec_s = (double)(srv_now_ns() - t0) / 1e9 - how.queued_s;
  r->executed = true;
  if (st == SHLO_OK || st == SHLO_ETIMEOUT) cache_entry_ran(in->e, r->exec_s);
  if (how.kind == SRV_BATCH_FULL) {
    oip_error(r, 429, "%s", d.message);
    r->retry_after = true;
  } else if (st == SHLO_ETIMEOUT || st == SHLO_ECANCELED ||
      shlo_cancel_reason(&r->cancel))
    oip_error(r, st == SHLO_ETIMEOUT ? 504 : 503, "execution %s: %s",
              st == SHLO_ETIMEOUT ? "timed out" : "canceled", d.message);
  else if (st)
    oip_error(r, st == SHLO_ELIMIT ? 413 : st == SHLO_EINPUT ? 400 : 500,
              "execution failed: %s", d.message);
  else
    answer_infer(in);
}

/* POST /v2/repository/models/NAME/load|unload: an admin's (or anyone's
 * on a server without tokens), in --model-control-mode explicit. */
static void repository_control(srv_request *r) {
  const char *p = r->path + 22, *slash = strchr(p, '/');
  bool load = slash && !strcmp(slash, "/load");
  if (!slash || (!load && strcmp(slash, "/unload")) || slash == p) {
    oip_error(r, 404, "no route %s", r->path);
    return;
  }
  if (strcmp(r->method, "POST")) {
    oip_error(r, 405, "%s takes POST", r->path);
    return;
  }
  if (r->srv->n_tokens && !(r->scopes & SRV_SCOPE_ADMIN)) {
    oip_error(r, 403, "loading and unloading models needs an admin token");
    return;
  }
  char name[SRV_NAME_LEN], why[1024];
  size_t n = (size_t)(slash - p);
  if (n >= sizeof name) {
    oip_error(r, 400, "malformed model name in %s", r->path);
    return;
  }
  memcpy(name, p, n);
  name[n] = 0;
  int st = load ? srv_repository_load(r->srv, name, why, sizeof why)
                : srv_repository_unload(r->srv, name, why, sizeof why);
  if (st == 200) reply(r, 200, strdup("{}"));
  else oip_error(r, st, "%s", why);
}

void srv_job_oip(srv_job *j) {
  srv_request *r = (srv_request *)j;
  char name[OIP_NAME_LEN], why[512] = "";
  const char *rest;
  int version, found;
  if (!strncmp(r->path, "/v2/repository/models/", 22)) {
    repository_control(r);
    return;
  }
  if (!split_path(r, name, &version, &rest)) return;
  const void *owner = srv_visible_owner(r);
  char whose[SRV_NAME_LEN];
  cache_entry *e = srv_module_by_name(r->srv, r->team, owner == NULL, name,
                                      version, &found, whose, why,
                                      sizeof why);
  /* a name resolves within the caller's team already; an id must be a
   * module the team owns */
  if (e && owner && !found && !cache_owns(&r->srv->cache, e, owner)) {
    cache_release(&r->srv->cache, e); /* another team's: unknown here */
    e = NULL;
    snprintf(why, sizeof why, "no model %s", name);
  }
  if (!e && !why[0]) /* an id: srv_module_by_id says nothing */
    snprintf(why, sizeof why, "no model %s", name);
  if (!e) {
    oip_error(r, 404, "%s (register a module with \"name\", or use its id)",
              why);
    return;
  }
  if (version && !found) { /* an id has no versions */
    cache_release(&r->srv->cache, e);
    oip_error(r, 404, "model %s has no versions: use /v2/models/%s%s", name,
              name, rest);
    return;
  }
  memcpy(r->module, e->id, SRV_ID_LEN);
  infer in = {.r = r, .name = name, .team = found ? whose : NULL,
              .version = found, .e = e};
  if (!strcmp(rest, "/ready")) {
    strbuf b = {0};
    shlo__sb_putc(&b, '{');
    shlo__json_key(&b, "name", true);
    shlo__json_str(&b, name);
    shlo__sb_puts(&b, ",\"ready\":true}");
    reply(r, 200, shlo__sb_take(&b));
  } else if (!*rest) {
    model_metadata(r, e, name, found ? whose : NULL);
  } else {
    run_infer(&in);
  }
  for (int k = 0; in.res && k < in.n_res; k++) shlo_value_unref(in.res[k]);
  free(in.res);
  for (int k = 0; in.args && k < in.f->n_args; k++)
    if (in.args[k]) shlo_value_unref(in.args[k]);
  free(in.args);
  cJSON_Delete(in.root);
  io_names_free(&in.ins);
  io_names_free(&in.outs);
  cache_release(&r->srv->cache, e);
}
