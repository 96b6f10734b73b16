/* SPDX-License-Identifier: Apache-2.0 */
/* What libshlo_pjrt.so keeps behind each opaque PJRT handle, and the
 * helpers its files share.  Everything here is internal (hidden): the
 * library exports GetPjrtApi alone. */
#ifndef SHLO_PJRT_INTERNAL_H
#define SHLO_PJRT_INTERNAL_H

#include "pjrt_api.h"

#include "shlo/engine.h"
#include "shlo/ir.h"
#include "shlo/tensor.h"

/* An error: a code and its message, owned by the error. */
struct PJRT_Error {
  PJRT_Error_Code code;
  char *message;
  size_t message_size;
};

/* An event.  The plugin does all its work inside the call that starts it,
 * so every event is created ready, carrying the work's outcome. */
struct PJRT_Event {
  PJRT_Error_Code code; /* 0: success */
  char *message;        /* NULL on success */
};

struct PJRT_DeviceDescription {
  int id;
  const char *kind;      /* "shlo-cpu" */
  char to_string[64];    /* "ShloDevice(id=0)" */
  char debug_string[320];
};

/* The device's one memory: host RAM, kind "device" as JAX's CPU plugin
 * names its default memory. */
struct PJRT_Memory {
  int id;
  PJRT_Device *device;
  char to_string[64];
};

struct PJRT_Device {
  PJRT_DeviceDescription desc;
  PJRT_Client *client;
  PJRT_Memory *memories[1];
};

/* One client: one device running on the engine's whole thread pool
 * (docs/pjrt.md says why one), and its memory.  In the remote mode the
 * device is the server's engine, reached through remote. */
struct PJRT_Client {
  PJRT_Device device;
  PJRT_Memory memory;
  PJRT_Device *devices[1];
  PJRT_Memory *memories[1];
  char platform_version[384];
  struct shlo_client *remote; /* NULL: in-process */
  char server_url[256];
};

/* A device buffer: an immutable engine tensor (NULL once deleted). */
struct PJRT_Buffer {
  PJRT_Client *client;
  shlo_value *value;
  PJRT_Buffer_Type type;
  int rank;
  int64_t dims[SHLO_MAX_RANK];
  int64_t minor_to_major[SHLO_MAX_RANK]; /* GetMemoryLayout's answer */
};

/* What a compiled program is, shared by the loaded executable and each
 * PJRT_Executable view of it (reference counted: a view may outlive the
 * loaded executable). */
typedef struct shlo_pjrt_program {
  int refs;                /* atomic */
  shlo_module *module;
  shlo_executable *exe;    /* in-process; NULL in the remote mode */
  char module_id[80];      /* remote: the server's "sha256:<hex>" */
  char *code, *options;    /* what was compiled, kept for Serialize */
  size_t code_size, options_size;
  char *name;
  char fingerprint[17];    /* 64-bit FNV-1a of program and options, hex */
  int n_outputs;
  PJRT_Buffer_Type *out_types;
  size_t *out_ranks;
  int64_t *out_dims;       /* the outputs' dims, concatenated */
  const char **out_kinds;  /* "device" for each output */
  size_t *out_kind_sizes;
  int64_t num_replicas, num_partitions;
} shlo_pjrt_program;

struct PJRT_Executable {
  shlo_pjrt_program *prog;
};

struct PJRT_LoadedExecutable {
  PJRT_Client *client;
  shlo_pjrt_program *prog; /* NULL once deleted */
};

/* ---- errors and events (plugin.c) ---- */
/* A new error (message formatted printf-style); NULL only when out of
 * memory, which a caller then reports as... nothing better exists, so
 * shlo_pjrt_error falls back to a static out-of-memory error. */
PJRT_Error *shlo_pjrt_error(PJRT_Error_Code code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* An error for an engine failure: the diagnostic's text, the code from
 * the status (parse/verify errors are INVALID_ARGUMENT, unsupported ops
 * UNIMPLEMENTED, ...). */
PJRT_Error *shlo_pjrt_error_from_diag(const char *what, const shlo_diag *d);
/* A new ready event carrying err's outcome (NULL: success). */
PJRT_Event *shlo_pjrt_event_new(const PJRT_Error *err);

/* A call's args struct must reach past the last field the plugin uses:
 * older callers' shorter structs are refused by name, never overrun. */
#define SHLO_PJRT_ARGS_CHECK(args, T, last)                                \
  do {                                                                     \
    if ((args) == NULL || (args)->struct_size < SHLO_PJRT_END(T, last))    \
      return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,             \
                             "%s: struct_size %zu < %zu", #T,              \
                             (args) ? (args)->struct_size : (size_t)0,     \
                             (size_t)SHLO_PJRT_END(T, last));              \
  } while (0)

/* ---- element types (buffer.c) ---- */
/* The engine type of a PJRT element type; -1 when shlo has none. */
int shlo_pjrt_elem_from_pjrt(PJRT_Buffer_Type t);
/* The PJRT type of an engine element type; INVALID when PJRT has none. */
PJRT_Buffer_Type shlo_pjrt_elem_to_pjrt(shlo_elem_type t);
/* A buffer owning value (the caller's reference moves in); NULL on OOM
 * (value is then released). */
PJRT_Buffer *shlo_pjrt_buffer_wrap(PJRT_Client *c, shlo_value *value);

/* ---- compiling (executable.c) ---- */
/* Compile code with serialized compile options into a new loaded
 * executable (*out, the caller's). */
PJRT_Error *shlo_pjrt_compile_loaded(PJRT_Client *client, const char *code,
                                     size_t len, const char *opts,
                                     size_t opts_len,
                                     PJRT_LoadedExecutable **out);

/* ---- the remote mode (remote.c; remote_off.c without libshlo-client) */
/* Connect when the create options or $SHLO_PJRT_SERVER name a server;
 * NULL (and c->remote NULL) when neither does. */
PJRT_Error *shlo_pjrt_remote_connect(PJRT_Client *c,
                                     const PJRT_Client_Create_Args *a);
void shlo_pjrt_remote_close(PJRT_Client *c);
/* Parse code here (its signature) and compile it on the server. */
PJRT_Error *shlo_pjrt_remote_compile(PJRT_Client *c, shlo_pjrt_program *p,
                                     const char *code, size_t len);
/* Run p on the server: *out as shlo_execute gives it. */
PJRT_Error *shlo_pjrt_remote_execute(PJRT_Client *c,
                                     const shlo_pjrt_program *p,
                                     shlo_value *const *in, int n_in,
                                     shlo_value ***out, int *n_out);

/* ---- the entries, one per implemented slot ---- */
#define SHLO_PJRT_DECLARE(idx, name) \
  PJRT_Error *shlo_pjrt_##name(PJRT_##name##_Args *args);
#define SHLO_PJRT_DECLARE_VOID(idx, name) \
  void shlo_pjrt_##name(PJRT_##name##_Args *args);
SHLO_PJRT_SLOTS(SHLO_PJRT_DECLARE, SHLO_PJRT_DECLARE_VOID)
#undef SHLO_PJRT_DECLARE
#undef SHLO_PJRT_DECLARE_VOID

#endif
