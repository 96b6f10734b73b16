/* SPDX-License-Identifier: Apache-2.0 */
/* Compiling and running programs.
 *
 * PJRT_Client_Compile takes the "mlir" format: StableHLO as MLIR text or
 * as a portable artifact (VHLO bytecode, what JAX sends); the engine's
 * parser tells the two apart.  Of the serialized CompileOptionsProto only
 * the replica and partition counts are read (executable_build_options,
 * fields 4 and 5): shlo has one device, so a program for more is refused.
 * Everything else in the options (layouts, debug options, the argument
 * tupling flag) is ignored: the engine picks its own layouts, dense
 * row-major, and reports them. */
#include "pjrt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ compile options (proto) */

/* A varint at *p (below end); false when truncated or over 64 bits. */
static bool read_varint(const unsigned char **p, const unsigned char *end,
                        uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    unsigned char byte = *(*p)++;
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

/* Skip a field's value of the given wire type; false when malformed. */
static bool skip_field(const unsigned char **p, const unsigned char *end,
                       unsigned wire) {
  uint64_t n;
  switch (wire) {
  case 0: return read_varint(p, end, &n);
  case 1: if (end - *p < 8) return false; *p += 8; return true;
  case 5: if (end - *p < 4) return false; *p += 4; return true;
  case 2:
    if (!read_varint(p, end, &n) || n > (uint64_t)(end - *p)) return false;
    *p += n;
    return true;
  default: return false;
  }
}

/* Find the last occurrence of a field in a message: a varint (*value) or
 * a length-delimited field (*sub, *sub_len).  False when absent or when
 * the bytes are not a message. */
static bool find_field(const unsigned char *p, const unsigned char *end,
                       unsigned field, uint64_t *value,
                       const unsigned char **sub, size_t *sub_len) {
  bool found = false;
  while (p < end) {
    uint64_t key;
    if (!read_varint(&p, end, &key)) return false;
    unsigned wire = key & 7;
    if ((key >> 3) == field && wire == 0) {
      if (!read_varint(&p, end, value)) return false;
      found = true;
    } else if ((key >> 3) == field && wire == 2 && sub) {
      uint64_t n;
      if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p)) return false;
      *sub = p;
      *sub_len = n;
      p += n;
      found = true;
    } else if (!skip_field(&p, end, wire)) {
      return false;
    }
  }
  return found;
}

/* Replicas and partitions from CompileOptionsProto.executable_build_options
 * (field 3; in it num_replicas is 4, num_partitions 5); 1 when unset. */
static void read_device_counts(const char *opts, size_t len,
                               int64_t *replicas, int64_t *partitions) {
  *replicas = *partitions = 1;
  const unsigned char *p = (const unsigned char *)opts, *build = NULL;
  size_t build_len = 0;
  uint64_t unused, v;
  if (opts == NULL ||
      !find_field(p, p + len, 3, &unused, &build, &build_len) || !build)
    return;
  if (find_field(build, build + build_len, 4, &v, NULL, NULL) && v > 0)
    *replicas = (int64_t)v;
  if (find_field(build, build + build_len, 5, &v, NULL, NULL) && v > 0)
    *partitions = (int64_t)v;
}

/* ------------------------------------------------------------- programs */

static void fingerprint(const char *a, size_t alen, const char *b, size_t blen,
                        char out[17]) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a 64 */
  for (size_t i = 0; i < alen; i++) h = (h ^ (unsigned char)a[i]) * 1099511628211ull;
  for (size_t i = 0; i < blen; i++) h = (h ^ (unsigned char)b[i]) * 1099511628211ull;
  snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void program_release(shlo_pjrt_program *p) {
  if (p == NULL || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
    return;
  shlo_executable_free(p->exe);
  shlo_module_free(p->module);
  free(p->code);
  free(p->options);
  free(p->name);
  free(p->out_types);
  free(p->out_ranks);
  free(p->out_dims);
  free(p->out_kinds);
  free(p->out_kind_sizes);
  free(p);
}

/* The function a program runs. */
static const shlo_func *program_entry(const shlo_pjrt_program *p) {
  return p->exe ? shlo_executable_entry(p->exe) : shlo_module_entry(p->module);
}

/* The outputs' element types and shapes, from the entry's result types. */
static PJRT_Error *describe_outputs(shlo_pjrt_program *p) {
  const shlo_func *f = program_entry(p);
  int n = f->n_results;
  size_t total = 0;
  for (int i = 0; i < n; i++) {
    const shlo_type *t = f->result_types[i];
    if (t->kind != SHLO_TYPE_TENSOR || !shlo_type_is_static(t) ||
        shlo_pjrt_elem_to_pjrt(t->elem) == PJRT_Buffer_Type_INVALID ||
        t->quant != NULL) {
      char text[128];
      shlo_type_format(t, text, sizeof text);
      return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                             "shlo pjrt: result %d has type %s; results must "
                             "be static tensors of a PJRT element type", i, text);
    }
    total += (size_t)t->rank;
  }
  p->n_outputs = n;
  p->out_types = calloc((size_t)n + 1, sizeof *p->out_types);
  p->out_ranks = calloc((size_t)n + 1, sizeof *p->out_ranks);
  p->out_dims = calloc(total + 1, sizeof *p->out_dims);
  p->out_kinds = calloc((size_t)n + 1, sizeof *p->out_kinds);
  p->out_kind_sizes = calloc((size_t)n + 1, sizeof *p->out_kind_sizes);
  if (!p->out_types || !p->out_ranks || !p->out_dims || !p->out_kinds ||
      !p->out_kind_sizes)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED,
                           "shlo: out of memory");
  size_t at = 0;
  for (int i = 0; i < n; i++) {
    const shlo_type *t = f->result_types[i];
    p->out_types[i] = shlo_pjrt_elem_to_pjrt(t->elem);
    p->out_ranks[i] = (size_t)t->rank;
    memcpy(p->out_dims + at, t->dims, sizeof(int64_t) * t->rank);
    at += (size_t)t->rank;
    p->out_kinds[i] = "device";
    p->out_kind_sizes[i] = 6;
  }
  return NULL;
}

static PJRT_Error *check_program_format(const PJRT_Program *prog) {
  if (prog == NULL ||
      prog->struct_size < SHLO_PJRT_END(PJRT_Program, format_size))
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "PJRT_Client_Compile: no program");
  if (prog->format == NULL || prog->format_size != 4 ||
      memcmp(prog->format, "mlir", 4) != 0)
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo compiles the \"mlir\" program format only "
                           "(StableHLO text or bytecode), not \"%.*s\"",
                           prog->format ? (int)prog->format_size : 0,
                           prog->format ? prog->format : "");
  if (prog->code == NULL && prog->code_size > 0)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null code");
  return NULL;
}

/* With $SHLO_PJRT_DUMP_DIR set, each program compiled is written there
 * as FINGERPRINT.mlirbc (an artifact) or .mlir (text), to see what a
 * framework sends.  Best effort: a failed write changes nothing. */
static void dump_program(const char *code, size_t len, const char *fp) {
  const char *dir = getenv("SHLO_PJRT_DUMP_DIR");
  if (dir == NULL || *dir == 0) return;
  bool bytecode = len >= 4 && memcmp(code, "ML\xefR", 4) == 0;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s", dir, fp, bytecode ? "mlirbc" : "mlir");
  FILE *f = fopen(path, "wb");
  if (f == NULL) return;
  if (fwrite(code, 1, len, f) != len)
    fprintf(stderr, "shlo pjrt: short write to %s\n", path);
  fclose(f);
}

/* A copy of n bytes (n may be 0: a 1-byte block, never NULL on success). */
static char *copy_bytes(const char *src, size_t n) {
  char *d = malloc(n + 1);
  if (d && n) memcpy(d, src, n);
  return d;
}

/* Parse, verify and compile code (an "mlir" program) with the serialized
 * compile options; on success *out holds one reference.  The program
 * keeps copies of both, for PJRT_Executable_Serialize. */
static PJRT_Error *program_build(PJRT_Client *client, const char *code,
                                 size_t len, const char *opts, size_t opts_len,
                                 shlo_pjrt_program **out) {
  PJRT_Error *err = NULL;
  if (opts == NULL) opts_len = 0;
  shlo_pjrt_program *p = calloc(1, sizeof *p);
  if (p == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  p->refs = 1;
  p->code = copy_bytes(code, len);
  p->options = copy_bytes(opts, opts_len);
  if (p->code == NULL || p->options == NULL) {
    err = shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
    goto fail;
  }
  p->code_size = len;
  p->options_size = opts_len;
  read_device_counts(opts, opts_len, &p->num_replicas, &p->num_partitions);
  if (p->num_replicas * p->num_partitions != 1) {
    err = shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                          "shlo has one device: the program asks for %lld "
                          "replicas x %lld partitions",
                          (long long)p->num_replicas,
                          (long long)p->num_partitions);
    goto fail;
  }
  fingerprint(code, len, opts, opts_len, p->fingerprint);
  dump_program(code, len, p->fingerprint);
  if (client->remote) {
    err = shlo_pjrt_remote_compile(client, p, code, len);
    if (err) goto fail;
  } else {
    shlo_diag diag;
    shlo_diag_clear(&diag);
    if (shlo_load(code, len, "pjrt_program", NULL, &p->module, &p->exe,
                  &diag) != SHLO_OK) {
      err = shlo_pjrt_error_from_diag("compile", &diag);
      goto fail;
    }
  }
  const char *name = shlo_module_name(p->module);
  p->name = strdup(name ? name : "main");
  if (p->name == NULL) {
    err = shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
    goto fail;
  }
  if ((err = describe_outputs(p)) != NULL) goto fail;
  *out = p;
  return NULL;
fail:
  program_release(p);
  return err;
}

PJRT_Error *shlo_pjrt_compile_loaded(PJRT_Client *client, const char *code,
                                     size_t len, const char *opts,
                                     size_t opts_len,
                                     PJRT_LoadedExecutable **out) {
  shlo_pjrt_program *p;
  PJRT_Error *err = program_build(client, code, len, opts, opts_len, &p);
  if (err) return err;
  PJRT_LoadedExecutable *le = calloc(1, sizeof *le);
  if (le == NULL) {
    program_release(p);
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  }
  le->client = client;
  le->prog = p;
  *out = le;
  return NULL;
}

PJRT_Error *shlo_pjrt_Client_Compile(PJRT_Client_Compile_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Client_Compile_Args, executable);
  if (args->client == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT, "null client");
  PJRT_Error *err = check_program_format(args->program);
  if (err) return err;
  const PJRT_Program *prog = args->program;
  return shlo_pjrt_compile_loaded(args->client, prog->code ? prog->code : "",
                                  prog->code_size, args->compile_options,
                                  args->compile_options_size,
                                  &args->executable);
}

/* ------------------------------------------------- executable accessors */

#define EXE_ARGS(T, last)                                                 \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  if (args->executable == NULL || args->executable->prog == NULL)        \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null executable", __func__);              \
  const shlo_pjrt_program *p = args->executable->prog

PJRT_Error *shlo_pjrt_Executable_Destroy(PJRT_Executable_Destroy_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Executable_Destroy_Args, executable);
  if (args->executable) program_release(args->executable->prog);
  free(args->executable);
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_Name(PJRT_Executable_Name_Args *args) {
  EXE_ARGS(PJRT_Executable_Name_Args, executable_name_size);
  args->executable_name = p->name;
  args->executable_name_size = strlen(p->name);
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_NumReplicas(
    PJRT_Executable_NumReplicas_Args *args) {
  EXE_ARGS(PJRT_Executable_NumReplicas_Args, num_replicas);
  args->num_replicas = (size_t)p->num_replicas;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_NumPartitions(
    PJRT_Executable_NumPartitions_Args *args) {
  EXE_ARGS(PJRT_Executable_NumPartitions_Args, num_partitions);
  args->num_partitions = (size_t)p->num_partitions;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_NumOutputs(
    PJRT_Executable_NumOutputs_Args *args) {
  EXE_ARGS(PJRT_Executable_NumOutputs_Args, num_outputs);
  args->num_outputs = (size_t)p->n_outputs;
  return NULL;
}

/* The engine interprets a plan; there is no generated code to size. */
PJRT_Error *shlo_pjrt_Executable_SizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args *args) {
  EXE_ARGS(PJRT_Executable_SizeOfGeneratedCodeInBytes_Args, size_in_bytes);
  (void)p;
  args->size_in_bytes = 0;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_OutputMemoryKinds(
    PJRT_Executable_OutputMemoryKinds_Args *args) {
  EXE_ARGS(PJRT_Executable_OutputMemoryKinds_Args, memory_kind_sizes);
  args->num_outputs = (size_t)p->n_outputs;
  args->memory_kinds = p->out_kinds;
  args->memory_kind_sizes = p->out_kind_sizes;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_OutputElementTypes(
    PJRT_Executable_OutputElementTypes_Args *args) {
  EXE_ARGS(PJRT_Executable_OutputElementTypes_Args, num_output_types);
  args->output_types = p->out_types;
  args->num_output_types = (size_t)p->n_outputs;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_OutputDimensions(
    PJRT_Executable_OutputDimensions_Args *args) {
  EXE_ARGS(PJRT_Executable_OutputDimensions_Args, dim_sizes);
  args->num_outputs = (size_t)p->n_outputs;
  args->dims = p->out_dims;
  args->dim_sizes = p->out_ranks;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_Fingerprint(
    PJRT_Executable_Fingerprint_Args *args) {
  EXE_ARGS(PJRT_Executable_Fingerprint_Args, executable_fingerprint_size);
  args->executable_fingerprint = p->fingerprint;
  args->executable_fingerprint_size = strlen(p->fingerprint);
  return NULL;
}

/* ------------------------------------------------- loaded executables */

#define LOADED_ARGS(T, last)                                              \
  SHLO_PJRT_ARGS_CHECK(args, T, last);                                    \
  PJRT_LoadedExecutable *le = args->executable;                           \
  if (le == NULL)                                                         \
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,              \
                           "%s: null executable", __func__)

PJRT_Error *shlo_pjrt_LoadedExecutable_Destroy(
    PJRT_LoadedExecutable_Destroy_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_LoadedExecutable_Destroy_Args, executable);
  if (args->executable) program_release(args->executable->prog);
  free(args->executable);
  return NULL;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_Delete(
    PJRT_LoadedExecutable_Delete_Args *args) {
  LOADED_ARGS(PJRT_LoadedExecutable_Delete_Args, executable);
  program_release(le->prog);
  le->prog = NULL;
  return NULL;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_IsDeleted(
    PJRT_LoadedExecutable_IsDeleted_Args *args) {
  LOADED_ARGS(PJRT_LoadedExecutable_IsDeleted_Args, is_deleted);
  args->is_deleted = le->prog == NULL;
  return NULL;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_GetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_LoadedExecutable_GetExecutable_Args,
                       executable);
  PJRT_LoadedExecutable *le = args->loaded_executable;
  if (le == NULL || le->prog == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "GetExecutable: null or deleted executable");
  PJRT_Executable *view = malloc(sizeof *view);
  if (view == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  __atomic_add_fetch(&le->prog->refs, 1, __ATOMIC_RELAXED);
  view->prog = le->prog;
  args->executable = view;
  return NULL;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_AddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args *args) {
  LOADED_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args,
              num_addressable_devices);
  args->addressable_devices = le->client->devices;
  args->num_addressable_devices = 1;
  return NULL;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_Fingerprint(
    PJRT_LoadedExecutable_Fingerprint_Args *args) {
  LOADED_ARGS(PJRT_LoadedExecutable_Fingerprint_Args,
              executable_fingerprint_size);
  if (le->prog == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                           "the executable has been deleted");
  args->executable_fingerprint = le->prog->fingerprint;
  args->executable_fingerprint_size = strlen(le->prog->fingerprint);
  return NULL;
}

/* ------------------------------------------------------------- execute */

static PJRT_Error *check_execute(const PJRT_LoadedExecutable_Execute_Args *a,
                                 const shlo_pjrt_program *p) {
  if (a->num_devices != 1 || (a->argument_lists == NULL && a->num_args) ||
      a->output_lists == NULL || a->output_lists[0] == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "shlo executes on its one device: num_devices is "
                           "%zu", a->num_devices);
  if (a->execute_device != NULL &&
      a->execute_device != &a->executable->client->device)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "execute_device is not this client's device");
  const PJRT_ExecuteOptions *o = a->options;
  if (o != NULL && o->struct_size >= SHLO_PJRT_END(PJRT_ExecuteOptions,
                                                   num_recv_ops) &&
      (o->num_send_ops != 0 || o->num_recv_ops != 0))
    return shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                           "shlo does not run host send/recv callbacks");
  const shlo_func *f = program_entry(p);
  if (a->num_args != (size_t)f->n_args)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "%zu arguments given, the program takes %d",
                           a->num_args, f->n_args);
  for (size_t i = 0; i < a->num_args; i++) {
    const PJRT_Buffer *b = a->argument_lists[0] ? a->argument_lists[0][i] : NULL;
    if (b == NULL || b->value == NULL)
      return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                             "argument %zu is null or deleted", i);
  }
  return NULL;
}

/* Wrap the engine's results as buffers in the caller's output list; on
 * failure frees what it made and every result. */
static PJRT_Error *hand_out_results(PJRT_LoadedExecutable_Execute_Args *a,
                                    shlo_value **results, int n) {
  PJRT_Buffer **outs = a->output_lists[0];
  int made = 0;
  PJRT_Error *err = NULL;
  for (; made < n; made++) {
    if (shlo_value_kind(results[made]) != SHLO_TYPE_TENSOR) {
      err = shlo_pjrt_error(PJRT_Error_Code_UNIMPLEMENTED,
                            "result %d is not a tensor", made);
      break;
    }
    outs[made] = shlo_pjrt_buffer_wrap(a->executable->client, results[made]);
    if (outs[made] == NULL) {
      err = shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
      made++; /* wrap released it */
      break;
    }
  }
  if (err == NULL) return NULL;
  for (int i = 0; i < n; i++) {
    if (i < made && outs[i]) {
      shlo_value_release(outs[i]->value);
      free(outs[i]);
      outs[i] = NULL;
    } else if (i >= made) {
      shlo_value_release(results[i]);
    }
  }
  return err;
}

PJRT_Error *shlo_pjrt_LoadedExecutable_Execute(
    PJRT_LoadedExecutable_Execute_Args *args) {
  LOADED_ARGS(PJRT_LoadedExecutable_Execute_Args, execute_device);
  const shlo_pjrt_program *p = le->prog;
  if (p == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_FAILED_PRECONDITION,
                           "the executable has been deleted");
  PJRT_Error *err = check_execute(args, p);
  if (err) return err;
  shlo_value **in = calloc(args->num_args + 1, sizeof *in);
  if (in == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  for (size_t i = 0; i < args->num_args; i++)
    in[i] = args->argument_lists[0][i]->value;
  shlo_value **results = NULL;
  int n_results = 0;
  if (le->client->remote) {
    err = shlo_pjrt_remote_execute(le->client, p, in, (int)args->num_args,
                                   &results, &n_results);
    free(in);
    if (err) return err;
  } else {
    shlo_diag diag;
    shlo_diag_clear(&diag);
    shlo_status st = shlo_execute(p->exe, NULL, in, (int)args->num_args,
                                  &results, &n_results, &diag);
    free(in);
    if (st != SHLO_OK) return shlo_pjrt_error_from_diag("execute", &diag);
  }
  if (n_results != p->n_outputs) {
    for (int i = 0; i < n_results; i++) shlo_value_release(results[i]);
    free(results);
    return shlo_pjrt_error(PJRT_Error_Code_INTERNAL,
                           "%d results, %d declared", n_results, p->n_outputs);
  }
  PJRT_Event *done = NULL;
  if (args->device_complete_events != NULL &&
      (done = shlo_pjrt_event_new(NULL)) == NULL) {
    for (int i = 0; i < n_results; i++) shlo_value_release(results[i]);
    free(results);
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  }
  err = hand_out_results(args, results, n_results);
  free(results);
  if (err) {
    free(done);
    return err;
  }
  if (args->device_complete_events != NULL)
    args->device_complete_events[0] = done;
  return NULL;
}
