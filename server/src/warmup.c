/* SPDX-License-Identifier: Apache-2.0 */
/* Warm-up runs of a repository model's version (see warmup.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "server.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"
#include "store.h"
#include "warmup.h"


bool srv_warmup_check(const cJSON *j, char *why, size_t cap) {
  if (!j) return true;
  int n = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : -1;
  bool ok = n >= 0 && n <= SRV_WARMUP_MAX_SAMPLES;
  for (const cJSON *e = ok ? j->child : NULL; e && ok; e = e->next)
    ok = cJSON_IsObject(e);
  if (!ok)
    srv_say(why, cap, "config.json: model_warmup is a list of at most %d "
        "objects ({\"name\", \"batch_size\", \"count\", \"inputs\"})",
        SRV_WARMUP_MAX_SAMPLES);
  return ok;
}

/* Triton's data types this server takes. */
static const struct {
  const char *triton;
  shlo_elem_type elem;
} types[] = {
    {"TYPE_BOOL", SHLO_I1},     {"TYPE_UINT8", SHLO_UI8},
    {"TYPE_UINT16", SHLO_UI16}, {"TYPE_UINT32", SHLO_UI32},
    {"TYPE_UINT64", SHLO_UI64}, {"TYPE_INT8", SHLO_SI8},
    {"TYPE_INT16", SHLO_SI16},  {"TYPE_INT32", SHLO_SI32},
    {"TYPE_INT64", SHLO_SI64},  {"TYPE_FP16", SHLO_F16},
    {"TYPE_FP32", SHLO_F32},    {"TYPE_FP64", SHLO_F64},
    {"TYPE_BF16", SHLO_BF16},
};

static bool elem_of(const cJSON *t, shlo_elem_type *out) {
  for (size_t i = 0; cJSON_IsString(t) && i < sizeof types / sizeof *types;
       i++)
    if (!strcmp(t->valuestring, types[i].triton)) {
      *out = types[i].elem;
      return true;
    }
  return false;
}

/* The index of the entry's input called name: the config's names, or
 * input<i>; -1 when none is. */
static int input_index(const char *name,
                       const char (*names)[SRV_WARMUP_NAME_LEN], int n_names,
                       int n_args) {
  for (int i = 0; i < n_names; i++)
    if (!strcmp(names[i], name)) return i;
  char *end;
  if (strncmp(name, "input", 5) || !name[5] || name[5] == '-') return -1;
  long i = strtol(name + 5, &end, 10);
  return *end || i < 0 || i >= n_args ? -1 : (int)i;
}

/* A fixed sequence for random_data (the same warm-up every load). */
static uint32_t next_rand(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return *state >> 8;
}

/* random_data: floats in [0, 1), integers 0..15, booleans. */
static void fill_random(shlo_value *v) {
  uint32_t st = 12345;
  unsigned char *p = shlo_tensor_data(v);
  int64_t n = shlo_tensor_numel(v);
  shlo_elem_type t = shlo_tensor_elem(v);
  for (int64_t i = 0; i < n; i++) {
    uint32_t r = next_rand(&st);
    float f = (float)(r & 0xffff) / 65536.0f;
    if (t == SHLO_F32) {
      memcpy(p + 4 * i, &f, 4);
    } else if (t == SHLO_F64) {
      double d = f;
      memcpy(p + 8 * i, &d, 8);
    } else if (t == SHLO_BF16) {
      uint32_t bits;
      memcpy(&bits, &f, 4);
      uint16_t h = (uint16_t)(bits >> 16);
      memcpy(p + 2 * i, &h, 2);
    } else if (t == SHLO_F16) { /* exponent below 15: under 1.0 */
      uint16_t h = (uint16_t)(((r % 15) << 10) | (r >> 12 & 0x3ff));
      memcpy(p + 2 * i, &h, 2);
    } else { /* integers, little-endian: the low byte holds the value */
      size_t w = shlo_elem_size(t);
      memset(p + w * (size_t)i, 0, w);
      p[w * (size_t)i] = (unsigned char)(t == SHLO_I1 ? r & 1 : r & 15);
    }
  }
}

/* input_data_file: dir/warmup/FILE's bytes into v, exactly its size. */
static bool fill_file(shlo_value *v, const char *dir, const cJSON *file,
                      char *why, size_t cap) {
  char path[PATH_MAX];
  if (!cJSON_IsString(file) || !store_name_ok(file->valuestring) ||
      snprintf(path, sizeof path, "%s/warmup/%s", dir, file->valuestring) >=
          (int)sizeof path) {
    srv_say(why, cap, "input_data_file is a file name of the model's warmup/ "
        "folder (letters, digits, '_', '-', '.')");
    return false;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  size_t want = shlo_tensor_nbytes(v), got = 0;
  if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
      (uint64_t)st.st_size != want) {
    srv_say(why, cap, "warmup/%s: %s", file->valuestring,
        fd < 0 ? strerror(errno) : "not a regular file of the tensor's size");
    if (fd >= 0) close(fd);
    return false;
  }
  unsigned char *p = shlo_tensor_data(v);
  while (got < want) {
    ssize_t k = read(fd, p + got, want - got);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    got += (size_t)k;
  }
  close(fd);
  if (got != want) srv_say(why, cap, "warmup/%s: short read", file->valuestring);
  return got == want;
}

/* The shape of one sample's input: [batch_size,] dims. */
static bool input_shape(const cJSON *in, int batch, int64_t *dims, int *rank,
                        char *why, size_t cap) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(in, "dims");
  int n = cJSON_IsArray(d) ? cJSON_GetArraySize(d) : -1;
  *rank = 0;
  if (batch > 0) dims[(*rank)++] = batch;
  if (n < 0 || n + *rank > SHLO_MAX_RANK) {
    srv_say(why, cap, "\"dims\" is a list of at most %d sizes", SHLO_MAX_RANK);
    return false;
  }
  for (const cJSON *e = d->child; e; e = e->next) {
    if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble > 1e9 ||
        e->valuedouble != (double)(int64_t)e->valuedouble) {
      srv_say(why, cap, "\"dims\" are sizes from 0 to 1e9");
      return false;
    }
    dims[(*rank)++] = (int64_t)e->valuedouble;
  }
  return true;
}

/* One input of a sample into a new tensor; NULL with why set. */
static shlo_value *sample_input(srv_server *s, const cJSON *in,
                                const shlo_type *want, int batch,
                                const char *dir, char *why, size_t cap) {
  shlo_elem_type elem;
  int64_t dims[SHLO_MAX_RANK];
  int rank;
  if (!cJSON_IsObject(in) ||
      !elem_of(cJSON_GetObjectItemCaseSensitive(in, "data_type"), &elem)) {
    srv_say(why, cap, "\"data_type\" is one of TYPE_BOOL, TYPE_(U)INT8..64, "
        "TYPE_FP16, TYPE_FP32, TYPE_FP64, TYPE_BF16");
    return NULL;
  }
  if (!input_shape(in, batch, dims, &rank, why, cap)) return NULL;
  if (want->kind != SHLO_TYPE_TENSOR || want->elem != elem) {
    srv_say(why, cap, "the sample gives %s, the function takes %s",
        shlo_elem_name(elem), want->kind == SHLO_TYPE_TENSOR
                                  ? shlo_elem_name(want->elem)
                                  : "no tensor");
    return NULL;
  }
  double bytes = (double)shlo_elem_size(elem);
  for (int i = 0; i < rank; i++) bytes *= (double)dims[i];
  shlo_value *v = bytes <= (double)s->cfg.max_body_bytes
                      ? shlo_tensor_new(elem, rank, dims)
                      : NULL;
  if (!v) {
    srv_say(why, cap, "the tensor is over max-body-bytes, or out of memory");
    return NULL;
  }
  const cJSON *file = cJSON_GetObjectItemCaseSensitive(in, "input_data_file");
  bool ok = true;
  if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "random_data")))
    fill_random(v);
  else if (file)
    ok = fill_file(v, dir, file, why, cap);
  else if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(in, "zero_data"))) {
    srv_say(why, cap, "give zero_data, random_data or input_data_file");
    ok = false;
  }
  if (ok) return v;
  shlo_value_release(v);
  return NULL;
}

/* The arguments of one sample (every input named once), into args. */
static bool sample_args(srv_server *s, const cJSON *sample,
                        const shlo_func *f, const char *dir,
                        const char (*names)[SRV_WARMUP_NAME_LEN], int n_names,
                        int batch, shlo_value **args, char *why, size_t cap) {
  const cJSON *ins = cJSON_GetObjectItemCaseSensitive(sample, "inputs");
  char inner[400];
  if (!cJSON_IsObject(ins)) {
    srv_say(why, cap, "\"inputs\" is an object {name: {...}}");
    return false;
  }
  for (const cJSON *in = ins->child; in; in = in->next) {
    int i = input_index(in->string, names, n_names, f->n_args);
    if (i < 0 || args[i]) {
      srv_say(why, cap, "input \"%.64s\" is %s", in->string,
          i < 0 ? "no input of the model" : "given twice");
      return false;
    }
    if (!(args[i] = sample_input(s, in, f->arg_types[i], batch, dir, inner,
                                 sizeof inner))) {
      srv_say(why, cap, "input \"%.64s\": %s", in->string, inner);
      return false;
    }
  }
  for (int i = 0; i < f->n_args; i++)
    if (!args[i]) {
      srv_say(why, cap, "no input %d (%s)", i, n_names ? names[i] : "input<i>");
      return false;
    }
  return true;
}

/* A sample's integer field (absent: dflt) within lo..hi. */
static bool sample_int(const cJSON *sample, const char *key, int dflt, int lo,
                       int hi, int *out, char *why, size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(sample, key);
  *out = dflt;
  if (!v) return true;
  if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
      v->valuedouble != (double)(int)v->valuedouble) {
    srv_say(why, cap, "\"%s\" is an integer from %d to %d", key, lo, hi);
    return false;
  }
  *out = (int)v->valuedouble;
  return true;
}

/* Run one sample count times. */
static bool run_sample(srv_server *s, const cJSON *sample,
                       const shlo_executable *x, const char *dir,
                       const char (*names)[SRV_WARMUP_NAME_LEN], int n_names,
                       long max_batch_size, int *runs, char *why,
                       size_t cap) {
  const shlo_func *f = shlo_executable_entry(x);
  int batch = 0, count;
  if (!sample_int(sample, "count", 1, 1, SRV_WARMUP_MAX_COUNT, &count, why,
                  cap) ||
      (max_batch_size > 0 &&
       !sample_int(sample, "batch_size", 1, 1, (int)max_batch_size, &batch,
                   why, cap)))
    return false;
  shlo_value **args = calloc((size_t)f->n_args + 1, sizeof *args);
  bool ok = args && sample_args(s, sample, f, dir, names, n_names, batch,
                                args, why, cap);
  if (!args) srv_say(why, cap, "out of memory");
  shlo_exec_opts opts = {.timeout_s = (double)s->cfg.max_timeout_ms / 1000.0,
                         .print_stream = s->devnull,
                         .max_bytes = s->cfg.max_exec_memory};
  for (int k = 0; ok && k < count; k++) {
    shlo_value **res = NULL;
    int n_res = 0;
    shlo_diag d;
    shlo_diag_clear(&d);
    shlo_status st = shlo_execute(x, &opts, args, f->n_args, &res, &n_res,
                                  &d);
    for (int i = 0; !st && i < n_res; i++) shlo_value_release(res[i]);
    free(res);
    if (st) srv_say(why, cap, "%s", d.message[0] ? d.message : "failed");
    else (*runs)++;
    ok = !st;
  }
  for (int i = 0; args && i < f->n_args; i++) shlo_value_release(args[i]);
  free(args);
  return ok;
}

bool srv_warmup_run(srv_server *s, const cJSON *warmup,
                    const shlo_executable *x, const char *model_dir,
                    const char (*names)[SRV_WARMUP_NAME_LEN], int n_names,
                    long max_batch_size, int *runs, char *why, size_t cap) {
  int k = 0;
  char inner[480];
  *runs = 0;
  for (const cJSON *e = warmup ? warmup->child : NULL; e; e = e->next, k++) {
    if (run_sample(s, e, x, model_dir, names, n_names, max_batch_size, runs,
                   inner, sizeof inner))
      continue;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(e, "name");
    srv_say(why, cap, "model_warmup %d%s%.64s%s: %s", k,
        cJSON_IsString(name) ? " (" : "",
        cJSON_IsString(name) ? name->valuestring : "",
        cJSON_IsString(name) ? ")" : "", inner);
    return false;
  }
  return true;
}
