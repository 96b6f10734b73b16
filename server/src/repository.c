/* SPDX-License-Identifier: Apache-2.0 */
/* The model repository (see repository.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "batch.h"
#include "json_write.h"
#include "pbtxt.h"
#include "repository.h"
#include "server.h"
#include "shlo/grid.h"
#include "store.h"
#include "warmup.h"

enum { MODE_NONE, MODE_POLL, MODE_EXPLICIT };

#define REPO_REASON_LEN 512
#define REPO_IO_NAME_LEN 128
#define REPO_CONFIG_MAX (1 << 20) /* bytes of a config.json */
#define REPO_MAX_VERSIONS 256     /* per model */
#define REPO_MAX_TENSORS 1024     /* names in a config.json */
_Static_assert(REPO_IO_NAME_LEN == SRV_WARMUP_NAME_LEN,
               "warmup.h reads the config's input names");

/* What tells a model file apart from the one loaded before it. */
typedef struct file_id {
  dev_t dev;
  ino_t ino;
  off_t size;
  struct timespec mtime;
} file_id;

typedef struct repo_version {
  int version;
  bool ready;
  char id[SRV_ID_LEN];
  cache_entry *e;   /* held while ready */
  bool adopted;     /* the repository made the team an owner of e */
  file_id file;
  char reason[REPO_REASON_LEN]; /* when not ready */
  char batch_fn[SRV_BATCH_FN_LEN]; /* the entry that batches (ready) */
} repo_version;

typedef struct repo_model {
  char name[SRV_NAME_LEN];
  char team[SRV_NAME_LEN];
  bool wanted;      /* loaded (explicit mode: by a load) */
  bool present;     /* its folder was there at the last scan */
  char reason[REPO_REASON_LEN]; /* the model's own failure (config), or "" */
  repo_version *v;
  int n_v;
  /* from config.json */
  char (*inputs)[REPO_IO_NAME_LEN], (*outputs)[REPO_IO_NAME_LEN];
  int n_inputs, n_outputs;
  long max_batch_size;
  srv_batch_cfg batch; /* dynamic_batching (max_batch_size 0: none) */
  uint64_t config_hash; /* of the config.json its versions loaded with */
} repo_model;

typedef struct srv_repository {
  srv_server *s;
  int mode;
  pthread_mutex_t lock;  /* the table */
  pthread_mutex_t work;  /* one load or scan at a time */
  pthread_cond_t wake;
  bool stop, rescan, thread_on;
  pthread_t thread;
  repo_model *m;
  int n_m, cap_m;
} srv_repository;

/* ---- log ---- */

void srv_say(char *out, size_t cap, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out, cap, fmt, ap);
  va_end(ap);
}

/* A path of PATH_MAX bytes at most: false (out "") when it would not fit. */
static bool path_of(char *out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static bool path_of(char *out, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(out, PATH_MAX, fmt, ap);
  va_end(ap);
  if (n >= 0 && n < PATH_MAX) return true;
  out[0] = 0;
  return false;
}

static void repo_log(srv_server *s, const char *event, const char *model,
                     int version, const char *why) {
  char when[48], v[24] = "";
  srv_log_time(when);
  if (version > 0) snprintf(v, sizeof v, " version=%d", version);
  FILE *to[2] = {stderr, s->log && s->log != stderr ? s->log : NULL};
  for (int i = 0; i < 2; i++)
    if (to[i])
      fprintf(to[i], "time=%s event=repository_%s model=%s%s reason=\"%s\"\n",
              when, event, model, v, why);
}

/* ---- the model's config.json ---- */

/* The whole small file at path (NUL-terminated) into *out; 1 when there
 * is none, -1 (why set) when unreadable or over max bytes. */
static int read_small(const char *path, size_t max, char **out, size_t *len,
                      char *why, size_t cap) {
  *out = NULL;
  /* (O_NONBLOCK: a FIFO put in a file's place must not hang the load) */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENOENT) return 1;
    srv_say(why, cap, "%s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > max) {
    srv_say(why, cap, "%s: not a regular file of at most %zu bytes", path,
             max);
    close(fd);
    return -1;
  }
  char *b = malloc((size_t)st.st_size + 1);
  size_t got = 0;
  while (b && got < (size_t)st.st_size) {
    ssize_t n = read(fd, b + got, (size_t)st.st_size - got);
    if (n <= 0) break;
    got += (size_t)n;
  }
  close(fd);
  if (!b || got != (size_t)st.st_size) {
    free(b);
    srv_say(why, cap, "%s: %s", path, b ? "short read" : "out of memory");
    return -1;
  }
  b[got] = 0;
  *out = b;
  *len = got;
  return 0;
}

/* The version policy: all, the latest n, or a list. */
typedef struct policy {
  int latest;          /* 0: not "latest" */
  bool all;
  int specific[REPO_MAX_VERSIONS], n_specific;
} policy;

typedef struct config {
  char team[SRV_NAME_LEN];
  char entry[256];     /* "" = the module's own */
  char (*inputs)[REPO_IO_NAME_LEN], (*outputs)[REPO_IO_NAME_LEN];
  int n_inputs, n_outputs;
  long max_batch_size;
  srv_batch_cfg batch; /* dynamic_batching (max_batch_size 0: none) */
  cJSON *warmup;       /* model_warmup (warmup.h), or NULL */
  uint64_t hash;       /* of the file's bytes (0: no file) */
  policy pol;
} config;

static void config_free(config *c) {
  free(c->inputs);
  free(c->outputs);
  cJSON_Delete(c->warmup);
  c->inputs = c->outputs = NULL;
  c->warmup = NULL;
}

/* The names of a list of tensors ("input": [{"name": "x", ...}, ...]). */
static bool tensor_names(const cJSON *list, const char *key,
                         char (**out)[REPO_IO_NAME_LEN], int *n, char *why,
                         size_t cap) {
  if (!list) return true;
  int k = cJSON_GetArraySize(list);
  if (!cJSON_IsArray(list) || k > REPO_MAX_TENSORS) {
    srv_say(why, cap, "config.json: \"%s\" must be a list of at most %d "
                       "tensors", key, REPO_MAX_TENSORS);
    return false;
  }
  *out = calloc((size_t)k + 1, sizeof **out);
  if (!*out) {
    srv_say(why, cap, "out of memory");
    return false;
  }
  int i = 0;
  for (const cJSON *t = list->child; t; t = t->next, i++) {
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(t, "name");
    if (!cJSON_IsString(nm) || !nm->valuestring[0] ||
        strlen(nm->valuestring) >= REPO_IO_NAME_LEN) {
      srv_say(why, cap, "config.json: %s %d has no \"name\" of 1 to %d "
                         "bytes", key, i, REPO_IO_NAME_LEN - 1);
      return false;
    }
    snprintf((*out)[i], REPO_IO_NAME_LEN, "%s", nm->valuestring);
  }
  *n = k;
  return true;
}

static bool read_policy(const cJSON *p, policy *pol, char *why, size_t cap) {
  memset(pol, 0, sizeof *pol);
  pol->latest = 1; /* Triton's default: the latest version only */
  if (!p) return true;
  const cJSON *latest = cJSON_GetObjectItemCaseSensitive(p, "latest");
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(p, "specific");
  if (cJSON_GetObjectItemCaseSensitive(p, "all")) {
    pol->all = true;
    pol->latest = 0;
    return true;
  }
  if (latest) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(latest, "num_versions");
    if (!cJSON_IsNumber(n) || n->valuedouble < 1 ||
        n->valuedouble > REPO_MAX_VERSIONS) {
      srv_say(why, cap, "config.json: version_policy.latest.num_versions "
                         "must be 1 to %d", REPO_MAX_VERSIONS);
      return false;
    }
    pol->latest = (int)n->valuedouble;
    return true;
  }
  const cJSON *vs = spec ? cJSON_GetObjectItemCaseSensitive(spec, "versions")
                         : NULL;
  if (!cJSON_IsArray(vs) || cJSON_GetArraySize(vs) > REPO_MAX_VERSIONS) {
    srv_say(why, cap, "config.json: version_policy is {\"all\": {}}, "
                       "{\"latest\": {\"num_versions\": N}} or "
                       "{\"specific\": {\"versions\": [...]}}");
    return false;
  }
  pol->latest = 0;
  for (const cJSON *v = vs->child; v; v = v->next) {
    if (!cJSON_IsNumber(v) || v->valuedouble < 1 || v->valuedouble > INT_MAX) {
      srv_say(why, cap, "config.json: a specific version is a number >= 1");
      return false;
    }
    pol->specific[pol->n_specific++] = (int)v->valuedouble;
  }
  return true;
}

/* One string field of the config (absent: ""); false when not a string
 * of fewer than cap bytes. */
static bool string_field(const cJSON *root, const char *key, char *out,
                         size_t out_cap, char *why, size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
  out[0] = 0;
  if (!v) return true;
  if (!cJSON_IsString(v) || strlen(v->valuestring) >= out_cap) {
    srv_say(why, cap, "config.json: \"%s\" must be a string of at most "
                       "%zu bytes", key, out_cap - 1);
    return false;
  }
  snprintf(out, out_cap, "%s", v->valuestring);
  return true;
}

/* A copy of a dynamic_batching field for the batcher's reader: a number,
 * or a string of digits (protobuf's JSON writes a uint64 so, as Triton's
 * max_queue_delay_microseconds). */
static cJSON *batch_number(const cJSON *v) {
  if (!cJSON_IsString(v)) return cJSON_Duplicate(v, true);
  const char *p = v->valuestring;
  if (!*p || strlen(p) > 15 || strspn(p, "0123456789") != strlen(p))
    return cJSON_Duplicate(v, true); /* the reader says what is wrong */
  return cJSON_CreateNumber(strtod(p, NULL));
}

/* The batcher's key for one of Triton's dynamic_batching keys (val is
 * the value to read, a field of it for default_queue_policy); NULL with
 * why set for a key this server does not take. */
static const char *batch_key(const cJSON *f, const cJSON **val, char *why,
                             size_t cap) {
  *val = f;
  if (!strcmp(f->string, "max_queue_delay_microseconds"))
    return "max_queue_delay_us";
  if (!strcmp(f->string, "preferred_batch_size"))
    return "preferred_batch_sizes";
  if (!strcmp(f->string, "max_queue_size")) return "max_queue_size";
  if (!strcmp(f->string, "default_queue_policy") && cJSON_IsObject(f) &&
      cJSON_GetArraySize(f) == 1 &&
      (*val = cJSON_GetObjectItemCaseSensitive(f, "max_queue_size")))
    return "max_queue_size";
  srv_say(why, cap, "config.json: dynamic_batching: \"%.64s\" is not taken "
      "(known: max_queue_delay_microseconds, preferred_batch_size, "
      "max_queue_size, default_queue_policy.max_queue_size, "
      "preserve_ordering)", f->string);
  return NULL;
}

/* Triton's "dynamic_batching" into c->batch, with max_batch_size rows:
 * its keys renamed to the "batching" object's (batch.h) and read by the
 * same reader, so the bounds are a registration's. */
static bool read_dynamic_batching(const cJSON *root, config *c, char *why,
                                  size_t cap) {
  const cJSON *db = cJSON_GetObjectItemCaseSensitive(root, "dynamic_batching");
  if (!db) return true;
  if (!cJSON_IsObject(db) || c->max_batch_size < 1) {
    srv_say(why, cap, "config.json: dynamic_batching is an object, with "
        "max_batch_size 1 or more");
    return false;
  }
  cJSON *o = cJSON_CreateObject();
  bool ok = o && cJSON_AddNumberToObject(o, "max_batch_size",
                                         (double)c->max_batch_size);
  char inner[400] = "";
  for (const cJSON *f = db->child; ok && f; f = f->next) {
    const cJSON *val;
    if (!strcmp(f->string, "preserve_ordering")) continue; /* always so */
    const char *key = batch_key(f, &val, why, cap);
    cJSON *copy = key ? batch_number(val) : NULL;
    if (!key) return cJSON_Delete(o), false;
    ok = copy && cJSON_AddItemToObject(o, key, copy);
    if (!ok) cJSON_Delete(copy);
  }
  if (!ok) srv_say(inner, sizeof inner, "out of memory");
  else ok = srv_batch_cfg_parse(o, &c->batch, inner, sizeof inner);
  cJSON_Delete(o);
  if (!ok)
    srv_say(why, cap, "config.json: dynamic_batching (as %s): %s",
        "max_queue_delay_us, preferred_batch_sizes, max_queue_size", inner);
  return ok;
}

/* model_warmup, kept to run on each version as it loads (warmup.h). */
static bool read_warmup(const cJSON *root, config *c, char *why, size_t cap) {
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(root, "model_warmup");
  if (!w || !srv_warmup_check(w, why, cap)) return !w;
  if ((c->warmup = cJSON_Duplicate(w, true))) return true;
  srv_say(why, cap, "out of memory");
  return false;
}

/* The team as a Triton parameter ("parameters": {"team":
 * {"string_value": "alpha"}}, config.pbtxt's way to say it). */
static bool parameter_team(const cJSON *root, config *c, char *why,
                           size_t cap) {
  const cJSON *p = cJSON_GetObjectItemCaseSensitive(root, "parameters");
  const cJSON *t = cJSON_GetObjectItemCaseSensitive(p, "team");
  return !t || string_field(t, "string_value", c->team, sizeof c->team, why,
                            cap);
}

/* DIR/NAME/config.json (else config.pbtxt, pbtxt.h) into c (defaults
 * without either); false with why. */
static bool read_config(const char *dir, config *c, char *why, size_t cap) {
  memset(c, 0, sizeof *c);
  c->pol.latest = 1;
  char path[PATH_MAX], *text;
  size_t len;
  path_of(path, "%s/config.json", dir);
  int rc = read_small(path, REPO_CONFIG_MAX, &text, &len, why, cap);
  bool pbtxt = rc == 1; /* none: Triton's text format, if there */
  if (pbtxt && path_of(path, "%s/config.pbtxt", dir))
    rc = read_small(path, REPO_CONFIG_MAX, &text, &len, why, cap);
  if (rc) return rc > 0;
  c->hash = 1469598103934665603u; /* FNV-1a: tells a changed file apart */
  for (size_t i = 0; i < len; i++)
    c->hash = (c->hash ^ (unsigned char)text[i]) * 1099511628211u;
  cJSON *root = pbtxt ? srv_pbtxt_parse(text, len, why, cap)
                      : shlo_proto_json_parse(text, len, NULL);
  free(text);
  bool ok = cJSON_IsObject(root);
  if (!ok && !pbtxt) srv_say(why, cap, "config.json is not one JSON object");
  const cJSON *mbs = ok ? cJSON_GetObjectItemCaseSensitive(root,
                                                           "max_batch_size")
                        : NULL;
  if (mbs && (!cJSON_IsNumber(mbs) || mbs->valuedouble < 0 ||
              mbs->valuedouble > INT_MAX)) {
    srv_say(why, cap, "config.json: max_batch_size must be a number >= 0");
    ok = false;
  }
  if (ok && mbs) c->max_batch_size = (long)mbs->valuedouble;
  const cJSON *in = NULL, *out = NULL;
  if (ok) {
    in = cJSON_GetObjectItemCaseSensitive(root, "input");
    if (!in) in = cJSON_GetObjectItemCaseSensitive(root, "inputs");
    out = cJSON_GetObjectItemCaseSensitive(root, "output");
    if (!out) out = cJSON_GetObjectItemCaseSensitive(root, "outputs");
  }
  ok = ok && string_field(root, "team", c->team, sizeof c->team, why, cap) &&
       (c->team[0] || parameter_team(root, c, why, cap)) &&
       string_field(root, "entry_function", c->entry, sizeof c->entry, why,
                    cap) &&
       (c->entry[0] ||
        string_field(root, "entry", c->entry, sizeof c->entry, why, cap)) &&
       tensor_names(in, "input", &c->inputs, &c->n_inputs, why, cap) &&
       tensor_names(out, "output", &c->outputs, &c->n_outputs, why, cap) &&
       read_policy(cJSON_GetObjectItemCaseSensitive(root, "version_policy"),
                   &c->pol, why, cap) &&
       read_dynamic_batching(root, c, why, cap) &&
       read_warmup(root, c, why, cap);
  cJSON_Delete(root);
  if (!ok) config_free(c);
  return ok;
}

/* ---- versions on disk ---- */

static int ascending(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return x < y ? -1 : x > y;
}

/* A folder name that is a version: digits, no leading zero, >= 1. */
static int version_of(const char *s) {
  if (s[0] < '1' || s[0] > '9' || strlen(s) > 9) return 0;
  for (const char *p = s; *p; p++)
    if (*p < '0' || *p > '9') return 0;
  return atoi(s);
}

/* The version folders of a model, ascending, that the policy keeps. */
static int chosen_versions(const char *dir, const policy *pol, int *out) {
  int all[REPO_MAX_VERSIONS], n = 0;
  DIR *d = opendir(dir);
  if (!d) return 0;
  for (struct dirent *de; (de = readdir(d));) {
    int v = version_of(de->d_name);
    struct stat st;
    char path[PATH_MAX];
    if (v <= 0 || !path_of(path, "%s/%s", dir, de->d_name) ||
        stat(path, &st) || !S_ISDIR(st.st_mode))
      continue;
    if (n < REPO_MAX_VERSIONS) {
      all[n++] = v;
      continue;
    }
    int low = 0; /* full: the highest versions are the ones kept */
    for (int i = 1; i < n; i++)
      if (all[i] < all[low]) low = i;
    if (v > all[low]) all[low] = v;
  }
  closedir(d);
  qsort(all, (size_t)n, sizeof *all, ascending);
  int k = 0;
  for (int i = 0; i < n; i++) {
    bool keep = pol->all || (pol->latest && i >= n - pol->latest);
    for (int j = 0; j < pol->n_specific && !keep; j++)
      keep = pol->specific[j] == all[i];
    if (keep) out[k++] = all[i];
  }
  return k;
}

/* The model file of a version folder (text first, then artifact). */
static bool model_file(const char *vdir, char path[PATH_MAX], file_id *id) {
  static const char *const files[] = {"model.mlir", "model.mlir.bc"};
  for (int i = 0; i < 2; i++) {
    struct stat st;
    path_of(path, "%s/%s", vdir, files[i]);
    if (!stat(path, &st) && S_ISREG(st.st_mode)) {
      *id = (file_id){st.st_dev, st.st_ino, st.st_size, st.st_mtim};
      return true;
    }
  }
  return false;
}

static bool same_file(const file_id *a, const file_id *b) {
  return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
         a->mtime.tv_sec == b->mtime.tv_sec &&
         a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* ---- loading one version ---- */

/* The existing team of that name (teams come from the tokens file, or
 * "anonymous" without one); NULL when there is none. */
static srv_team *team_named(srv_server *s, const char *name) {
  for (srv_team *t = s->teams.list; t; t = t->next)
    if (!strcmp(t->name, name)) return t;
  return NULL;
}

/* The arity of the entry function against the config's names. */
static bool names_fit(const config *c, const shlo_func *f, char *why,
                      size_t cap) {
  if (c->n_inputs && c->n_inputs != f->n_args) {
    srv_say(why, cap, "config.json names %d input(s), @%s takes %d",
             c->n_inputs, f->name, f->n_args);
    return false;
  }
  if (c->n_outputs && c->n_outputs != f->n_results) {
    srv_say(why, cap, "config.json names %d output(s), @%s returns %d",
             c->n_outputs, f->name, f->n_results);
    return false;
  }
  return true;
}

/* A config's max_batch_size says the leading dimension is the batch (as
 * Triton's): the entry function must batch (batch.h), on no grid; false
 * with v's reason set.  The batching function's name goes into v. */
static bool batch_fits(const config *c, const cache_entry *e,
                       const shlo_func *f, repo_version *v) {
  int mr, mp;
  char why[REPO_REASON_LEN - 64];
  if (c->max_batch_size < 1) return true;
  shlo_module_grid(e->m, &mr, &mp);
  if (mr * mp > 1 || e->replicas > 1 || e->partitions > 1) {
    srv_say(v->reason, sizeof v->reason, "config.json gives max_batch_size %ld: "
        "cannot batch: the module runs on a grid", c->max_batch_size);
    return false;
  }
  if (!srv_batch_shape_ok(f, why, sizeof why)) {
    srv_say(v->reason, sizeof v->reason, "config.json gives max_batch_size %ld: "
        "%s", c->max_batch_size, why);
    return false;
  }
  snprintf(v->batch_fn, sizeof v->batch_fn, "%s", f->name);
  return true;
}

/* The config's warm-up samples on x (none: true); false with v's reason
 * set.  Logged with the runs it made. */
static bool warmed_up(srv_server *s, const config *c, const char *dir,
                      const char *model, const shlo_executable *x,
                      repo_version *v) {
  char why[REPO_REASON_LEN - 16], runs_s[48];
  int runs = 0;
  if (!c->warmup) return true;
  if (!srv_warmup_run(s, c->warmup, x, dir,
                      (const char(*)[SRV_WARMUP_NAME_LEN])c->inputs,
                      c->n_inputs, c->max_batch_size, &runs, why,
                      sizeof why)) {
    srv_say(v->reason, sizeof v->reason, "warm-up: %s", why);
    return false;
  }
  snprintf(runs_s, sizeof runs_s, "%d run(s)", runs);
  repo_log(s, "warmed_up", model, v->version, runs_s);
  return true;
}

/* Read, parse, verify, compile and warm up one version of model (its
 * folder dir) into v (ready, or its reason). */
static void load_version(srv_server *s, const config *c, srv_team *team,
                         const char *dir, const char *model,
                         const char *path, repo_version *v) {
  char *text = NULL, why[REPO_REASON_LEN];
  size_t len = 0;
  v->ready = false;
  if (read_small(path, (size_t)s->cfg.max_body_bytes, &text, &len, why,
                 sizeof why)) {
    srv_say(v->reason, sizeof v->reason, "%s (max-body-bytes %lld)", why,
             (long long)s->cfg.max_body_bytes);
    return;
  }
  bool cached;
  double ms = 0;
  shlo_proto_error err;
  cache_entry *e = srv_module_get(s, text, len, 0, 0, NULL, &cached, &ms,
                                  &err);
  free(text);
  if (!e) {
    srv_say(v->reason, sizeof v->reason, "%s: %s",
             shlo_proto_err_name(err.kind), err.message);
    return;
  }
  if (!cached && c->entry[0] && cache_entry_set_entry(e, c->entry)) {
    cache_release(&s->cache, e);
    srv_say(v->reason, sizeof v->reason, "out of memory");
    return;
  }
  if (cached && c->entry[0] && (!e->entry || strcmp(e->entry, c->entry))) {
    srv_say(v->reason, sizeof v->reason, "this program is registered "
             "already with the entry function %s, not %s",
             e->entry ? e->entry : "(its own)", c->entry);
    cache_release(&s->cache, e);
    return;
  }
  if (!cached) {
    bool too_big;
    e = cache_insert(&s->cache, e, &too_big); /* too big: held unlinked */
  }
  const shlo_executable *x;
  bool compiled;
  shlo_diag d;
  shlo_diag_clear(&d);
  shlo_status st = cache_entry_exe(&s->cache, e, NULL, NULL, &x, &compiled,
                                   &d);
  if (st) {
    srv_say(v->reason, sizeof v->reason, "compile: %s", d.message);
    cache_release(&s->cache, e);
    return;
  }
  if (!names_fit(c, shlo_executable_entry(x), v->reason, sizeof v->reason) ||
      !batch_fits(c, e, shlo_executable_entry(x), v) ||
      !warmed_up(s, c, dir, model, x, v)) {
    cache_release(&s->cache, e);
    return;
  }
  v->adopted = cache_adopt(&s->cache, e, team, true) == CACHE_ADOPTED;
  v->e = e;
  memcpy(v->id, e->id, SRV_ID_LEN);
  v->ready = true;
  v->reason[0] = 0;
}

/* ---- the table (lock held where it says so) ---- */

static repo_model *model_find(srv_repository *R, const char *name) {
  for (int i = 0; i < R->n_m; i++)
    if (!strcmp(R->m[i].name, name)) return &R->m[i];
  return NULL;
}

/* The model's row, made when missing; NULL when out of memory. */
static repo_model *model_row(srv_repository *R, const char *name) {
  repo_model *m = model_find(R, name);
  if (m) return m;
  if (R->n_m == R->cap_m) {
    int c = R->cap_m ? 2 * R->cap_m : 16;
    repo_model *g = realloc(R->m, (size_t)c * sizeof *g);
    if (!g) return NULL;
    R->m = g;
    R->cap_m = c;
  }
  m = &R->m[R->n_m++];
  memset(m, 0, sizeof *m);
  snprintf(m->name, sizeof m->name, "%s", name);
  return m;
}

/* Let go of a version that leaves the table: its name, then the
 * repository's reference (an execution still running holds its own).
 * The team's claim on the module goes with the last version that made
 * it; others (a registration, another version) keep theirs. */
static void version_release(srv_repository *R, const repo_model *m,
                            repo_version *v, repo_version *keep,
                            int n_keep) {
  srv_server *s = R->s;
  if (!v->ready) return;
  srv_names_drop_version(&s->names, m->team, m->name, v->version);
  /* out of the table first: a lookup (srv_repository_entry) takes its
   * reference under the lock, never from a version let go */
  pthread_mutex_lock(&R->lock);
  cache_entry *e = v->e;
  v->e = NULL;
  v->ready = false;
  pthread_mutex_unlock(&R->lock);
  bool other = false;
  for (int i = 0; i < n_keep && !other; i++)
    if ((other = keep[i].ready && !strcmp(keep[i].id, v->id)))
      keep[i].adopted |= v->adopted; /* the claim is that version's now */
  for (int i = 0; i < R->n_m && !other; i++)
    for (int j = 0; j < R->m[i].n_v && !other; j++) {
      const repo_version *w = &R->m[i].v[j];
      other = w != v && w->ready && !strcmp(R->m[i].team, m->team) &&
              !strcmp(w->id, v->id) && w->e == e;
    }
  if (m->batch.max_batch_size && !other) { /* its batching goes with it */
    srv_batch_cfg off = {0};
    srv_batch_configure(s->batcher, m->team, v->id, "", &off);
  }
  uint8_t key[32];
  if (v->adopted && !other && cache_id_to_key(v->id, key)) {
    srv_team *team = team_named(s, m->team);
    if (team) cache_disown(&s->cache, key, team);
  }
  cache_release(&s->cache, e);
}

static void model_io_free(repo_model *m) {
  free(m->inputs);
  free(m->outputs);
  m->inputs = m->outputs = NULL;
  m->n_inputs = m->n_outputs = 0;
}

/* Unload every version of m (the row stays, "unloaded"). */
static void model_unload(srv_repository *R, repo_model *m) {
  for (int i = 0; i < m->n_v; i++)
    version_release(R, m, &m->v[i], NULL, 0);
  pthread_mutex_lock(&R->lock);
  free(m->v);
  m->v = NULL;
  m->n_v = 0;
  model_io_free(m);
  m->wanted = false;
  pthread_mutex_unlock(&R->lock);
}

/* The versions a load of m leads to: those unchanged on disk are kept as
 * they are, the others read again.  Returns how many, into out. */
static int load_versions(srv_repository *R, repo_model *m, const config *c,
                         srv_team *team, const char *dir, repo_version *out) {
  int want[REPO_MAX_VERSIONS];
  int n = chosen_versions(dir, &c->pol, want);
  for (int i = 0; i < n; i++) {
    repo_version *v = &out[i];
    memset(v, 0, sizeof *v);
    v->version = want[i];
    char vdir[PATH_MAX], path[PATH_MAX];
    path_of(vdir, "%s/%d", dir, want[i]);
    if (!model_file(vdir, path, &v->file)) {
      srv_say(v->reason, sizeof v->reason, "%d/ holds no model.mlir or "
               "model.mlir.bc", want[i]);
      continue;
    }
    repo_version *old = NULL;
    /* a changed config.json loads every version again: its batching,
     * names and warm-up are checked on each (the cache makes it cheap) */
    for (int j = 0; j < m->n_v && !old && m->config_hash == c->hash; j++)
      if (m->v[j].version == want[i] && m->v[j].ready &&
          same_file(&m->v[j].file, &v->file))
        old = &m->v[j];
    if (old) { /* unchanged: the same module, its reference moves */
      *v = *old;
      cache_retain(&R->s->cache, v->e);
      continue;
    }
    load_version(R->s, c, team, dir, m->name, path, v);
  }
  return n;
}

/* Whether m's table has v's version failed already, from the same file
 * and for the same reason. */
static bool failed_before(const repo_model *m, const repo_version *v) {
  for (int i = 0; i < m->n_v; i++)
    if (m->v[i].version == v->version && !m->v[i].ready &&
        same_file(&m->v[i].file, &v->file) &&
        !strcmp(m->v[i].reason, v->reason))
      return true;
  return false;
}

/* The team c names (default: the one team of a server without tokens),
 * or NULL with reason set. */
static srv_team *config_team(srv_server *s, config *c, char *reason,
                             size_t cap) {
  if (!c->team[0] && !s->n_tokens)
    snprintf(c->team, sizeof c->team, "anonymous");
  if (!c->team[0]) {
    srv_say(reason, cap, "config.json names no \"team\" (a server with tokens "
                     "needs one)");
    return NULL;
  }
  srv_team *team = team_named(s, c->team);
  if (!team)
    srv_say(reason, cap, "no team %s (teams come from the tokens file)",
        c->team);
  return team;
}

/* A model that cannot load as a whole (its config): logged and listed
 * with its reason; the versions it had stay as they were. */
static int model_failed(srv_repository *R, repo_model *m, const char *reason,
                        char *why, size_t cap) {
  repo_log(R->s, "unavailable", m->name, 0, reason);
  pthread_mutex_lock(&R->lock);
  srv_say(m->reason, sizeof m->reason, "%s", reason);
  m->wanted = true;
  pthread_mutex_unlock(&R->lock);
  srv_say(why, cap, "model %s: %s", m->name, reason);
  return 400;
}

/* Make next (n versions, taken over) m's versions: the old ones that do
 * not stay let go, the ready ones named, the failures logged (once), the
 * config's tensor names (taken over) kept.  Returns how many are ready. */
static int install_versions(srv_repository *R, repo_model *m, config *c,
                            repo_version *next, int n) {
  srv_server *s = R->s;
  for (int i = 0; i < m->n_v; i++) {
    bool stays = false;
    for (int j = 0; j < n && !stays; j++)
      if ((stays = next[j].ready && next[j].e == m->v[i].e &&
                   next[j].version == m->v[i].version))
        next[j].adopted |= m->v[i].adopted; /* loaded again: the claim */
    if (stays) cache_release(&s->cache, m->v[i].e); /* next holds one */
    else version_release(R, m, &m->v[i], next, n);
  }
  int ready = 0;
  int64_t now = (int64_t)time(NULL) * 1000000000;
  for (int i = 0; i < n; i++) {
    if (next[i].ready) {
      ready++;
      srv_names_put(&s->names, c->team, m->name, next[i].version, next[i].id,
                    now);
      /* the config's batching (or none, when it had some before) */
      if ((c->batch.max_batch_size || m->batch.max_batch_size) &&
          srv_batch_configure(s->batcher, c->team, next[i].id,
                              next[i].batch_fn, &c->batch))
        repo_log(s, "unbatched", m->name, next[i].version, "out of memory");
    } else if (!failed_before(m, &next[i])) { /* a poll logs it once */
      repo_log(s, "unavailable", m->name, next[i].version, next[i].reason);
    }
  }
  pthread_mutex_lock(&R->lock);
  free(m->v);
  model_io_free(m);
  m->v = n ? next : NULL;
  m->n_v = n;
  m->inputs = c->inputs;
  m->outputs = c->outputs;
  m->n_inputs = c->n_inputs;
  m->n_outputs = c->n_outputs;
  c->inputs = c->outputs = NULL;
  m->max_batch_size = c->max_batch_size;
  m->batch = c->batch;
  m->config_hash = c->hash;
  m->wanted = true;
  m->reason[0] = 0;
  if (!n)
    srv_say(m->reason, sizeof m->reason, "no version folder (1/, 2/, ...) "
        "that the version policy keeps");
  pthread_mutex_unlock(&R->lock);
  if (!n) {
    free(next);
    repo_log(s, "unavailable", m->name, 0, m->reason);
  }
  return ready;
}

/* (Re)load model NAME from DIR/NAME: 200, or an HTTP status with why. */
static int model_load(srv_repository *R, const char *name, char *why,
                      size_t cap) {
  srv_server *s = R->s;
  char dir[PATH_MAX];
  struct stat st;
  if (!store_name_ok(name) ||
      !path_of(dir, "%s/%s", s->cfg.model_repository, name) ||
      stat(dir, &st) || !S_ISDIR(st.st_mode)) {
    srv_say(why, cap, "no model %s in the repository", name);
    return 404;
  }
  pthread_mutex_lock(&R->lock);
  repo_model *m = model_row(R, name);
  pthread_mutex_unlock(&R->lock);
  if (!m) {
    srv_say(why, cap, "out of memory");
    return 500;
  }
  config c;
  char reason[REPO_REASON_LEN] = "";
  srv_team *team = read_config(dir, &c, reason, sizeof reason)
                       ? config_team(s, &c, reason, sizeof reason)
                       : NULL;
  repo_version *next = team ? calloc(REPO_MAX_VERSIONS, sizeof *next) : NULL;
  if (!next) {
    config_free(&c);
    if (team) srv_say(reason, sizeof reason, "out of memory");
    return model_failed(R, m, reason, why, cap);
  }
  if (m->n_v && strcmp(m->team, c.team))
    model_unload(R, m); /* the model moves to another team */
  pthread_mutex_lock(&R->lock);
  snprintf(m->team, sizeof m->team, "%s", c.team);
  pthread_mutex_unlock(&R->lock);
  int n = load_versions(R, m, &c, team, dir, next);
  int ready = install_versions(R, m, &c, next, n);
  config_free(&c);
  if (ready) return 200;
  srv_say(why, cap, "model %s: no version loaded: %s", name,
      n ? m->v[n - 1].reason : m->reason);
  return 400;
}

/* ---- scans ---- */

/* Load the models of the repository (explicit mode: only those loaded),
 * and forget those whose folder is gone. */
static void scan(srv_repository *R) {
  srv_server *s = R->s;
  DIR *d = opendir(s->cfg.model_repository);
  if (!d) {
    repo_log(s, "unreadable", "-", 0, strerror(errno));
    return;
  }
  for (int i = 0; i < R->n_m; i++) R->m[i].present = false;
  for (struct dirent *de; (de = readdir(d));) {
    char path[PATH_MAX], why[REPO_REASON_LEN];
    struct stat st;
    path_of(path, "%s/%s", s->cfg.model_repository, de->d_name);
    if (de->d_name[0] == '.' || stat(path, &st) || !S_ISDIR(st.st_mode))
      continue;
    if (!store_name_ok(de->d_name)) {
      repo_log(s, "skipped", de->d_name, 0, "not a model name (letters, "
               "digits, '_', '-', '.')");
      continue;
    }
    pthread_mutex_lock(&R->lock);
    repo_model *m = model_row(R, de->d_name);
    if (m) m->present = true;
    bool load = m && (R->mode != MODE_EXPLICIT || m->wanted);
    pthread_mutex_unlock(&R->lock);
    if (load) model_load(R, de->d_name, why, sizeof why);
  }
  closedir(d);
  for (int i = 0; i < R->n_m; i++) {
    if (R->m[i].present) continue;
    model_unload(R, &R->m[i]);
    pthread_mutex_lock(&R->lock);
    R->m[i--] = R->m[--R->n_m];
    pthread_mutex_unlock(&R->lock);
  }
}

static void *rescan_thread(void *arg) {
  srv_repository *R = arg;
  pthread_mutex_lock(&R->lock);
  while (!R->stop) {
    if (R->mode == MODE_POLL && !R->rescan) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_sec += R->s->cfg.repository_poll_secs;
      if (pthread_cond_timedwait(&R->wake, &R->lock, &until) == ETIMEDOUT)
        R->rescan = true;
    } else if (!R->rescan) {
      pthread_cond_wait(&R->wake, &R->lock);
    }
    if (R->stop || !R->rescan) continue;
    R->rescan = false;
    pthread_mutex_unlock(&R->lock);
    pthread_mutex_lock(&R->work);
    scan(R);
    pthread_mutex_unlock(&R->work);
    pthread_mutex_lock(&R->lock);
  }
  pthread_mutex_unlock(&R->lock);
  return NULL;
}

/* ---- the server's side ---- */

static int mode_of(const char *s) {
  if (!strcmp(s, "none")) return MODE_NONE;
  if (!strcmp(s, "poll")) return MODE_POLL;
  if (!strcmp(s, "explicit")) return MODE_EXPLICIT;
  return -1;
}

int srv_repository_start(srv_server *s) {
  if (!s->cfg.model_repository[0]) return 0;
  int mode = mode_of(s->cfg.model_control_mode);
  struct stat st;
  if (mode < 0) {
    fprintf(stderr, "shlo-server: --model-control-mode is none, poll or "
                    "explicit, not %s\n", s->cfg.model_control_mode);
    return -1;
  }
  if (stat(s->cfg.model_repository, &st) || !S_ISDIR(st.st_mode)) {
    fprintf(stderr, "shlo-server: --model-repository %s: not a directory\n",
            s->cfg.model_repository);
    return -1;
  }
  srv_repository *R = calloc(1, sizeof *R);
  if (!R) return -1;
  R->s = s;
  R->mode = mode;
  pthread_mutex_init(&R->lock, NULL);
  pthread_mutex_init(&R->work, NULL);
  pthread_cond_init(&R->wake, NULL);
  s->repo = R;
  pthread_mutex_lock(&R->work);
  scan(R); /* explicit: lists the models, loads none */
  pthread_mutex_unlock(&R->work);
  int ready = 0, failed = 0;
  for (int i = 0; i < R->n_m; i++) {
    failed += R->m[i].reason[0] != 0; /* the model as a whole */
    for (int j = 0; j < R->m[i].n_v; j++)
      R->m[i].v[j].ready ? ready++ : failed++;
  }
  fprintf(stderr, "shlo-server: model repository %s (%s): %d model(s), %d "
                  "version(s) ready, %d unavailable\n",
          s->cfg.model_repository, s->cfg.model_control_mode, R->n_m, ready,
          failed);
  R->thread_on = !pthread_create(&R->thread, NULL, rescan_thread, R);
  if (!R->thread_on)
    fprintf(stderr, "shlo-server: model repository: no thread for rescans "
                    "(SIGHUP and poll do nothing)\n");
  return 0;
}

void srv_repository_stop(srv_server *s) {
  srv_repository *R = s->repo;
  if (!R) return;
  pthread_mutex_lock(&R->lock);
  R->stop = true;
  pthread_cond_signal(&R->wake);
  pthread_mutex_unlock(&R->lock);
  if (R->thread_on) pthread_join(R->thread, NULL);
  for (int i = 0; i < R->n_m; i++) {
    for (int j = 0; j < R->m[i].n_v; j++)
      if (R->m[i].v[j].ready) cache_release(&s->cache, R->m[i].v[j].e);
    free(R->m[i].v);
    model_io_free(&R->m[i]);
  }
  free(R->m);
  pthread_cond_destroy(&R->wake);
  pthread_mutex_destroy(&R->work);
  pthread_mutex_destroy(&R->lock);
  free(R);
  s->repo = NULL;
}

void srv_repository_reload(srv_server *s) {
  srv_repository *R = s->repo;
  if (!R) return;
  pthread_mutex_lock(&R->lock);
  R->rescan = true;
  pthread_cond_signal(&R->wake);
  pthread_mutex_unlock(&R->lock);
}

/* Load and unload are explicit mode's (as Triton's). */
static bool control_allowed(srv_server *s, char *why, size_t cap) {
  if (!s->repo) {
    srv_say(why, cap, "this server has no --model-repository");
    return false;
  }
  if (s->repo->mode != MODE_EXPLICIT) {
    srv_say(why, cap, "loading and unloading models needs "
                       "--model-control-mode explicit (this server's is %s)",
             s->cfg.model_control_mode);
    return false;
  }
  return true;
}

int srv_repository_load(srv_server *s, const char *name, char *why,
                        size_t cap) {
  if (!control_allowed(s, why, cap)) return 400;
  pthread_mutex_lock(&s->repo->work);
  int st = model_load(s->repo, name, why, cap);
  pthread_mutex_unlock(&s->repo->work);
  return st;
}

int srv_repository_unload(srv_server *s, const char *name, char *why,
                          size_t cap) {
  if (!control_allowed(s, why, cap)) return 400;
  srv_repository *R = s->repo;
  pthread_mutex_lock(&R->work);
  repo_model *m = model_find(R, name); /* rows change only under work */
  if (m) model_unload(R, m);
  else srv_say(why, cap, "no model %s in the repository", name);
  pthread_mutex_unlock(&R->work);
  return m ? 200 : 404;
}

static void index_row(strbuf *b, bool *first, const repo_model *m,
                      bool with_team, int version, const char *state,
                      const char *reason) {
  shlo__sb_puts(b, *first ? "{" : ",{");
  *first = false;
  shlo__json_key(b, "name", true);
  shlo__json_str(b, m->name);
  if (with_team && m->team[0]) {
    shlo__json_key(b, "team", false);
    shlo__json_str(b, m->team);
  }
  if (version > 0) shlo__sb_printf(b, ",\"version\":\"%d\"", version);
  shlo__json_key(b, "state", false);
  shlo__json_str(b, state);
  shlo__json_key(b, "reason", false);
  shlo__json_str(b, reason);
  shlo__sb_putc(b, '}');
}

char *srv_repository_index(srv_server *s, const char *team, bool ready_only) {
  srv_repository *R = s->repo;
  strbuf b = {0};
  shlo__sb_putc(&b, '[');
  bool first = true;
  if (R) pthread_mutex_lock(&R->lock);
  for (int i = 0; R && i < R->n_m; i++) {
    const repo_model *m = &R->m[i];
    /* a model never loaded has no team yet: only an admin sees it */
    if (team && strcmp(m->team, team)) continue;
    if (m->reason[0] && !ready_only)
      index_row(&b, &first, m, !team, 0, "UNAVAILABLE", m->reason);
    else if (!m->wanted && !ready_only)
      index_row(&b, &first, m, !team, 0, "UNAVAILABLE", "unloaded");
    for (int j = 0; m->wanted && j < m->n_v; j++) {
      const repo_version *v = &m->v[j];
      if (v->ready || !ready_only)
        index_row(&b, &first, m, !team, v->version,
                  v->ready ? "READY" : "UNAVAILABLE", v->reason);
    }
  }
  if (R) pthread_mutex_unlock(&R->lock);
  shlo__sb_putc(&b, ']');
  return shlo__sb_take(&b);
}

cache_entry *srv_repository_entry(srv_server *s, const char *id) {
  srv_repository *R = s->repo;
  cache_entry *e = NULL;
  if (!R) return NULL;
  pthread_mutex_lock(&R->lock);
  for (int i = 0; i < R->n_m && !e; i++)
    for (int j = 0; j < R->m[i].n_v && !e; j++)
      if (R->m[i].v[j].ready && !strcmp(R->m[i].v[j].id, id))
        e = R->m[i].v[j].e;
  if (e) cache_retain(&s->cache, e);
  pthread_mutex_unlock(&R->lock);
  return e;
}

bool srv_repository_io_name(srv_server *s, const char *team,
                            const char *model, const char *id, bool output,
                            int i, char *out, size_t cap) {
  srv_repository *R = s->repo;
  bool got = false;
  if (!R) return false;
  const char *slash = model ? strrchr(model, '/') : NULL;
  if (slash) model = slash + 1; /* an admin's TEAM/NAME */
  pthread_mutex_lock(&R->lock);
  for (int k = 0; k < R->n_m && !got; k++) {
    const repo_model *m = &R->m[k];
    int n = output ? m->n_outputs : m->n_inputs;
    /* two models may run one program: the one asked for names it */
    if (team && (strcmp(m->team, team) || strcmp(m->name, model))) continue;
    for (int j = 0; j < m->n_v && !got && i < n; j++)
      if (m->v[j].ready && !strcmp(m->v[j].id, id)) {
        snprintf(out, cap, "%s", output ? m->outputs[i] : m->inputs[i]);
        got = true;
      }
  }
  pthread_mutex_unlock(&R->lock);
  return got;
}

long srv_repository_max_batch_size(srv_server *s, const char *id) {
  srv_repository *R = s->repo;
  long n = 0;
  if (!R) return 0;
  pthread_mutex_lock(&R->lock);
  for (int k = 0; k < R->n_m && !n; k++)
    for (int j = 0; j < R->m[k].n_v && !n; j++)
      if (R->m[k].v[j].ready && !strcmp(R->m[k].v[j].id, id))
        n = R->m[k].max_batch_size;
  pthread_mutex_unlock(&R->lock);
  return n;
}
