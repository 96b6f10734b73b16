/* SPDX-License-Identifier: Apache-2.0 */
/* The PJRT plugin driven as a framework drives it: dlopen the library,
 * GetPjrtApi, check the version and the table, create a client, compile
 * sin(x) @ x^T from StableHLO text, move a 4x4 input in, execute, read
 * the result back and compare it with the same math done here in plain
 * C; then the error paths.  No Python, no JAX: this is the test that runs
 * everywhere.  sdy_sin.mlirbc is what JAX 0.10 sent for
 * jit(lambda a: sin(a) * 2) on an array placed on the shlo device (a
 * portable artifact carrying a Shardy mesh and sharding, which the
 * engine's artifact reader drops).
 * Usage: test_pjrt_harness path/to/libshlo_pjrt.so path/to/sdy_sin.mlirbc
 * (sdy_constraint.mlirbc is read from the same folder)
 *        [--expect-refused]: only check that creating a client fails with
 *        UNAUTHENTICATED (the remote mode with a token the server refuses). */
#include "pjrt_api.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const PJRT_Api *api;
static int failures;

#define CHECK(cond)                                                       \
  do {                                                                    \
    if (!(cond)) {                                                        \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__,    \
              #cond);                                                     \
      failures++;                                                         \
    }                                                                     \
  } while (0)

/* Args structs are zeroed and sized as the caller would. */
#define ARGS(T, name) T name; memset(&name, 0, sizeof name); \
  name.struct_size = sizeof name

/* An error's message (copied into buf) and code; the error is destroyed. */
static PJRT_Error_Code take_error(PJRT_Error *e, char *buf, size_t cap) {
  ARGS(PJRT_Error_Message_Args, m);
  m.error = e;
  api->PJRT_Error_Message(&m);
  snprintf(buf, cap, "%.*s", (int)m.message_size, m.message);
  ARGS(PJRT_Error_GetCode_Args, g);
  g.error = e;
  PJRT_Error *ge = api->PJRT_Error_GetCode(&g);
  CHECK(ge == NULL);
  ARGS(PJRT_Error_Destroy_Args, d);
  d.error = e;
  api->PJRT_Error_Destroy(&d);
  return g.code;
}

/* A call that must succeed: report its error otherwise. */
static void ok(PJRT_Error *e, const char *what) {
  if (e == NULL) return;
  char msg[2048];
  take_error(e, msg, sizeof msg);
  fprintf(stderr, "%s failed: %s\n", what, msg);
  failures++;
}

static void event_done(PJRT_Event *ev) {
  if (ev == NULL) return;
  ARGS(PJRT_Event_Await_Args, aw);
  aw.event = ev;
  ok(api->PJRT_Event_Await(&aw), "Event_Await");
  ARGS(PJRT_Event_Destroy_Args, d);
  d.event = ev;
  ok(api->PJRT_Event_Destroy(&d), "Event_Destroy");
}

static void check_table(void) {
  CHECK(api->pjrt_api_version.major_version == 0);
  CHECK(api->pjrt_api_version.minor_version >= 57);
  CHECK(api->struct_size == sizeof(PJRT_Api));
  /* Every slot holds a function, implemented or a stub. */
  void (*const *slot)(void) = (void (*const *)(void))&api->PJRT_Error_Destroy;
  for (int i = 0; i < SHLO_PJRT_NUM_SLOTS; i++) CHECK(slot[i] != NULL);
  /* A stub names itself. */
  char msg[256];
  PJRT_Error *e = api->PJRT_Compile(NULL);
  CHECK(e != NULL);
  if (e) {
    CHECK(take_error(e, msg, sizeof msg) == PJRT_Error_Code_UNIMPLEMENTED);
    CHECK(strcmp(msg, "not implemented by shlo: PJRT_Compile") == 0);
  }
  ARGS(PJRT_Plugin_Initialize_Args, init);
  ok(api->PJRT_Plugin_Initialize(&init), "Plugin_Initialize");
  ARGS(PJRT_Plugin_Attributes_Args, at);
  ok(api->PJRT_Plugin_Attributes(&at), "Plugin_Attributes");
  bool has_version = false;
  for (size_t i = 0; i < at.num_attributes; i++)
    if (strcmp(at.attributes[i].name, "stablehlo_current_version") == 0)
      has_version = at.attributes[i].value_size == 3 &&
                    at.attributes[i].int64_array_value[0] == 1;
  CHECK(has_version);
  /* A struct too short for the fields the entry fills is refused. */
  PJRT_Client_Create_Args shortc;
  memset(&shortc, 0, sizeof shortc);
  shortc.struct_size = offsetof(PJRT_Client_Create_Args, client);
  e = api->PJRT_Client_Create(&shortc);
  CHECK(e != NULL);
  if (e) CHECK(take_error(e, msg, sizeof msg) == PJRT_Error_Code_INVALID_ARGUMENT);
}

static PJRT_Device *check_client(PJRT_Client *client) {
  ARGS(PJRT_Client_PlatformName_Args, pn);
  pn.client = client;
  ok(api->PJRT_Client_PlatformName(&pn), "PlatformName");
  CHECK(pn.platform_name_size == 4 && memcmp(pn.platform_name, "shlo", 4) == 0);
  ARGS(PJRT_Client_AddressableDevices_Args, ad);
  ad.client = client;
  ok(api->PJRT_Client_AddressableDevices(&ad), "AddressableDevices");
  CHECK(ad.num_addressable_devices == 1);
  PJRT_Device *dev = ad.addressable_devices[0];
  ARGS(PJRT_Device_GetDescription_Args, gd);
  gd.device = dev;
  ok(api->PJRT_Device_GetDescription(&gd), "GetDescription");
  ARGS(PJRT_DeviceDescription_Id_Args, id);
  id.device_description = gd.device_description;
  ok(api->PJRT_DeviceDescription_Id(&id), "DeviceDescription_Id");
  CHECK(id.id == 0);
  ARGS(PJRT_Device_DefaultMemory_Args, dm);
  dm.device = dev;
  ok(api->PJRT_Device_DefaultMemory(&dm), "DefaultMemory");
  ARGS(PJRT_Client_AddressableMemories_Args, am);
  am.client = client;
  ok(api->PJRT_Client_AddressableMemories(&am), "AddressableMemories");
  CHECK(am.num_addressable_memories == 1 &&
        am.addressable_memories[0] == dm.memory);
  ARGS(PJRT_Memory_Kind_Args, mk);
  mk.memory = dm.memory;
  ok(api->PJRT_Memory_Kind(&mk), "Memory_Kind");
  CHECK(mk.kind_size > 0);
  return dev;
}

static PJRT_Error *compile_bytes(PJRT_Client *client, const char *text,
                                 size_t len, PJRT_LoadedExecutable **out) {
  ARGS(PJRT_Program, prog);
  prog.code = (char *)text;
  prog.code_size = len;
  prog.format = "mlir";
  prog.format_size = 4;
  ARGS(PJRT_Client_Compile_Args, c);
  c.client = client;
  c.program = &prog;
  PJRT_Error *e = api->PJRT_Client_Compile(&c);
  *out = c.executable;
  return e;
}

static PJRT_Error *compile(PJRT_Client *client, const char *text,
                           PJRT_LoadedExecutable **out) {
  return compile_bytes(client, text, strlen(text), out);
}

static const char sin_matmul[] =
    "func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
    "  %s = stablehlo.sine %x : tensor<4x4xf32>\n"
    "  %r = stablehlo.dot_general %s, %x, contracting_dims = [1] x [1]"
    " : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>\n"
    "  return %r : tensor<4x4xf32>\n"
    "}\n";

static void check_executable(PJRT_LoadedExecutable *le) {
  ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
  ge.loaded_executable = le;
  ok(api->PJRT_LoadedExecutable_GetExecutable(&ge), "GetExecutable");
  PJRT_Executable *exe = ge.executable;
  ARGS(PJRT_Executable_NumOutputs_Args, no);
  no.executable = exe;
  ok(api->PJRT_Executable_NumOutputs(&no), "NumOutputs");
  CHECK(no.num_outputs == 1);
  ARGS(PJRT_Executable_OutputElementTypes_Args, ot);
  ot.executable = exe;
  ok(api->PJRT_Executable_OutputElementTypes(&ot), "OutputElementTypes");
  CHECK(ot.num_output_types == 1 && ot.output_types[0] == PJRT_Buffer_Type_F32);
  ARGS(PJRT_Executable_OutputDimensions_Args, od);
  od.executable = exe;
  ok(api->PJRT_Executable_OutputDimensions(&od), "OutputDimensions");
  CHECK(od.num_outputs == 1 && od.dim_sizes[0] == 2 && od.dims[0] == 4 &&
        od.dims[1] == 4);
  ARGS(PJRT_Executable_Name_Args, nm);
  nm.executable = exe;
  ok(api->PJRT_Executable_Name(&nm), "Executable_Name");
  CHECK(nm.executable_name_size > 0);
  ARGS(PJRT_LoadedExecutable_Fingerprint_Args, fp);
  fp.executable = le;
  ok(api->PJRT_LoadedExecutable_Fingerprint(&fp), "Fingerprint");
  CHECK(fp.executable_fingerprint_size == 16);
  ARGS(PJRT_Executable_Destroy_Args, d);
  d.executable = exe;
  ok(api->PJRT_Executable_Destroy(&d), "Executable_Destroy");
}

static PJRT_Buffer *to_device(PJRT_Client *client, PJRT_Device *dev,
                              const float *data, const int64_t *strides) {
  int64_t dims[2] = {4, 4};
  ARGS(PJRT_Client_BufferFromHostBuffer_Args, b);
  b.client = client;
  b.data = data;
  b.type = PJRT_Buffer_Type_F32;
  b.dims = dims;
  b.num_dims = 2;
  b.byte_strides = strides;
  b.num_byte_strides = strides ? 2 : 0;
  b.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
  b.device = dev;
  ok(api->PJRT_Client_BufferFromHostBuffer(&b), "BufferFromHostBuffer");
  event_done(b.done_with_host_buffer);
  return b.buffer;
}

static void to_host(PJRT_Buffer *buf, float *out) {
  ARGS(PJRT_Buffer_ToHostBuffer_Args, q);
  q.src = buf;
  ok(api->PJRT_Buffer_ToHostBuffer(&q), "ToHostBuffer size query");
  CHECK(q.dst_size == 16 * sizeof(float));
  ARGS(PJRT_Buffer_ToHostBuffer_Args, t);
  t.src = buf;
  t.dst = out;
  t.dst_size = 16 * sizeof(float);
  ok(api->PJRT_Buffer_ToHostBuffer(&t), "ToHostBuffer");
  event_done(t.event);
}

static void destroy_buffer(PJRT_Buffer *b) {
  ARGS(PJRT_Buffer_Destroy_Args, d);
  d.buffer = b;
  ok(api->PJRT_Buffer_Destroy(&d), "Buffer_Destroy");
}

static PJRT_Error *execute(PJRT_LoadedExecutable *le, PJRT_Buffer **args,
                           size_t n, PJRT_Buffer **out) {
  PJRT_Buffer *const *lists[1] = {args};
  PJRT_Buffer **outs[1] = {out};
  PJRT_Event *done[1] = {NULL};
  ARGS(PJRT_ExecuteOptions, opts);
  ARGS(PJRT_LoadedExecutable_Execute_Args, x);
  x.executable = le;
  x.options = &opts;
  x.argument_lists = lists;
  x.num_devices = 1;
  x.num_args = n;
  x.output_lists = outs;
  x.device_complete_events = done;
  PJRT_Error *e = api->PJRT_LoadedExecutable_Execute(&x);
  if (e == NULL) event_done(done[0]);
  return e;
}

/* Serialize, load the bytes back as a new executable, and run both: the
 * same results.  A byte flipped in the header is refused. */
static void check_serialize(PJRT_Client *client, PJRT_LoadedExecutable *le,
                            PJRT_Buffer *in) {
  ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
  ge.loaded_executable = le;
  ok(api->PJRT_LoadedExecutable_GetExecutable(&ge), "GetExecutable");
  ARGS(PJRT_Executable_Serialize_Args, s);
  s.executable = ge.executable;
  ok(api->PJRT_Executable_Serialize(&s), "Executable_Serialize");
  ARGS(PJRT_Executable_Destroy_Args, ed);
  ed.executable = ge.executable;
  ok(api->PJRT_Executable_Destroy(&ed), "Executable_Destroy");
  if (s.serialized_executable == NULL) return;
  ARGS(PJRT_Executable_DeserializeAndLoad_Args, d);
  d.client = client;
  d.serialized_executable = s.serialized_bytes;
  d.serialized_executable_size = s.serialized_bytes_size;
  ok(api->PJRT_Executable_DeserializeAndLoad(&d), "DeserializeAndLoad");
  PJRT_Buffer *a = NULL, *b = NULL;
  float x[16], y[16];
  ok(execute(le, &in, 1, &a), "Execute (original)");
  if (d.loaded_executable) ok(execute(d.loaded_executable, &in, 1, &b),
                              "Execute (deserialized)");
  if (a && b) {
    to_host(a, x);
    to_host(b, y);
    CHECK(memcmp(x, y, sizeof x) == 0);
  }
  if (a) destroy_buffer(a);
  if (b) destroy_buffer(b);
  ARGS(PJRT_LoadedExecutable_Destroy_Args, ld);
  ld.executable = d.loaded_executable;
  ok(api->PJRT_LoadedExecutable_Destroy(&ld), "LoadedExecutable_Destroy");
  char *bad = malloc(s.serialized_bytes_size);
  if (bad) {
    memcpy(bad, s.serialized_bytes, s.serialized_bytes_size);
    bad[17] ^= 0x40; /* the options' length */
    d.serialized_executable = bad;
    d.loaded_executable = NULL;
    PJRT_Error *e = api->PJRT_Executable_DeserializeAndLoad(&d);
    char msg[256];
    CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                           PJRT_Error_Code_INVALID_ARGUMENT);
    CHECK(d.loaded_executable == NULL);
    free(bad);
  }
  s.serialized_executable_deleter(s.serialized_executable);
}

/* sin(x) @ x^T on a 4x4 input, against plain C. */
static void check_sin_matmul(PJRT_Client *client, PJRT_Device *dev) {
  PJRT_LoadedExecutable *le = NULL;
  ok(compile(client, sin_matmul, &le), "Compile");
  if (le == NULL) return;
  check_executable(le);
  float x[16], want[16], got[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i * 0.25f - 1.5f;
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      double s = 0;
      for (int k = 0; k < 4; k++) s += sin((double)x[i * 4 + k]) * x[j * 4 + k];
      want[i * 4 + j] = (float)s;
    }
  PJRT_Buffer *in = to_device(client, dev, x, NULL);
  PJRT_Buffer *out = NULL;
  ok(execute(le, &in, 1, &out), "Execute");
  if (out) {
    to_host(out, got);
    for (int i = 0; i < 16; i++)
      CHECK(fabsf(got[i] - want[i]) <= 1e-5f * (1 + fabsf(want[i])));
    ARGS(PJRT_Buffer_Dimensions_Args, bd);
    bd.buffer = out;
    ok(api->PJRT_Buffer_Dimensions(&bd), "Buffer_Dimensions");
    CHECK(bd.num_dims == 2 && bd.dims[0] == 4 && bd.dims[1] == 4);
    ARGS(PJRT_Buffer_ElementType_Args, et);
    et.buffer = out;
    ok(api->PJRT_Buffer_ElementType(&et), "Buffer_ElementType");
    CHECK(et.type == PJRT_Buffer_Type_F32);
    ARGS(PJRT_Buffer_OnDeviceSizeInBytes_Args, sz);
    sz.buffer = out;
    ok(api->PJRT_Buffer_OnDeviceSizeInBytes(&sz), "OnDeviceSizeInBytes");
    CHECK(sz.on_device_size_in_bytes == 64);
    destroy_buffer(out);
  }
  check_serialize(client, le, in);
  /* Two arguments to a one-argument program: refused, nothing made. */
  PJRT_Buffer *two[2] = {in, in}, *none[1] = {NULL};
  PJRT_Error *e = execute(le, two, 2, none);
  char msg[512];
  CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                         PJRT_Error_Code_INVALID_ARGUMENT);
  CHECK(none[0] == NULL);
  destroy_buffer(in);
  ARGS(PJRT_LoadedExecutable_Destroy_Args, d);
  d.executable = le;
  ok(api->PJRT_LoadedExecutable_Destroy(&d), "LoadedExecutable_Destroy");
}

/* A host array given by byte strides (here a transposed view) arrives
 * dense; a deleted buffer says so and refuses to be read. */
static void check_buffers(PJRT_Client *client, PJRT_Device *dev) {
  float x[16], got[16];
  for (int i = 0; i < 16; i++) x[i] = (float)i;
  int64_t transposed[2] = {sizeof(float), 4 * sizeof(float)};
  PJRT_Buffer *b = to_device(client, dev, x, transposed);
  if (b == NULL) return;
  to_host(b, got);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) CHECK(got[i * 4 + j] == x[j * 4 + i]);
  ARGS(PJRT_Buffer_Delete_Args, del);
  del.buffer = b;
  ok(api->PJRT_Buffer_Delete(&del), "Buffer_Delete");
  ARGS(PJRT_Buffer_IsDeleted_Args, isd);
  isd.buffer = b;
  ok(api->PJRT_Buffer_IsDeleted(&isd), "Buffer_IsDeleted");
  CHECK(isd.is_deleted);
  ARGS(PJRT_Buffer_ToHostBuffer_Args, t);
  t.src = b;
  t.dst = got;
  t.dst_size = sizeof got;
  PJRT_Error *e = api->PJRT_Buffer_ToHostBuffer(&t);
  char msg[256];
  CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                         PJRT_Error_Code_FAILED_PRECONDITION);
  destroy_buffer(b);
}

/* A program the engine rejects: the PJRT error carries its diagnostic. */
static void check_bad_program(PJRT_Client *client) {
  static const char bad[] =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %y = stablehlo.add %x, %x : tensor<3xf32>\n"
      "  return %y : tensor<4xf32>\n"
      "}\n";
  PJRT_LoadedExecutable *le = NULL;
  PJRT_Error *e = compile(client, bad, &le);
  CHECK(e != NULL);
  if (e == NULL) return;
  char msg[2048];
  PJRT_Error_Code code = take_error(e, msg, sizeof msg);
  CHECK(code == PJRT_Error_Code_INVALID_ARGUMENT);
  /* file:line:col of the bad op, as the engine reports it */
  CHECK(strstr(msg, "pjrt_program:2:") != NULL);
  fprintf(stderr, "bad program (expected): %s\n", msg);
  e = compile(client, "this is not MLIR", &le);
  CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                         PJRT_Error_Code_INVALID_ARGUMENT);
}

/* What the plugin refuses, each with its code: a buffer type shlo lacks,
 * a negative dimension, a tiled device layout, a program format other
 * than mlir, compile options asking for two replicas. */
static PJRT_Error_Code host_buffer_code(PJRT_Client *client,
                                        PJRT_Buffer_Type type,
                                        int64_t dim0,
                                        PJRT_Buffer_MemoryLayout *layout) {
  float data[4] = {0};
  int64_t dims[1] = {dim0};
  ARGS(PJRT_Client_BufferFromHostBuffer_Args, b);
  b.client = client;
  b.data = data;
  b.type = type;
  b.dims = dims;
  b.num_dims = 1;
  b.device_layout = layout;
  PJRT_Error *e = api->PJRT_Client_BufferFromHostBuffer(&b);
  char msg[256];
  CHECK(b.buffer == NULL);
  return e ? take_error(e, msg, sizeof msg) : (PJRT_Error_Code)0;
}

static void check_refusals(PJRT_Client *client) {
  CHECK(host_buffer_code(client, PJRT_Buffer_Type_INVALID, 4, NULL) ==
        PJRT_Error_Code_UNIMPLEMENTED);
  CHECK(host_buffer_code(client, PJRT_Buffer_Type_F32, -1, NULL) ==
        PJRT_Error_Code_INVALID_ARGUMENT);
  ARGS(PJRT_Buffer_MemoryLayout, tiled);
  tiled.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  tiled.tiled.minor_to_major_size = 1; /* and no array: refused, not read */
  CHECK(host_buffer_code(client, PJRT_Buffer_Type_F32, 4, &tiled) ==
        PJRT_Error_Code_UNIMPLEMENTED);
  char msg[512];
  ARGS(PJRT_Program, prog);
  prog.code = (char *)sin_matmul;
  prog.code_size = strlen(sin_matmul);
  prog.format = "hlo";
  prog.format_size = 3;
  ARGS(PJRT_Client_Compile_Args, c);
  c.client = client;
  c.program = &prog;
  PJRT_Error *e = api->PJRT_Client_Compile(&c);
  CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                         PJRT_Error_Code_UNIMPLEMENTED);
  /* CompileOptionsProto{executable_build_options{num_replicas: 2}} */
  static const char two_replicas[] = {0x1a, 0x02, 0x20, 0x02};
  prog.format = "mlir";
  prog.format_size = 4;
  c.compile_options = two_replicas;
  c.compile_options_size = sizeof two_replicas;
  e = api->PJRT_Client_Compile(&c);
  CHECK(e != NULL && take_error(e, msg, sizeof msg) ==
                         PJRT_Error_Code_UNIMPLEMENTED);
  CHECK(e == NULL || strstr(msg, "2 replicas") != NULL);
  /* Options that are not a protobuf message: read as none given. */
  static const char junk[] = {(char)0xff, (char)0xff, (char)0xff};
  c.compile_options = junk;
  c.compile_options_size = sizeof junk;
  c.executable = NULL;
  ok(api->PJRT_Client_Compile(&c), "Compile with unreadable options");
  ARGS(PJRT_LoadedExecutable_Destroy_Args, d);
  d.executable = c.executable;
  ok(api->PJRT_LoadedExecutable_Destroy(&d), "LoadedExecutable_Destroy");
}

/* JAX's artifacts: sdy_sin.mlirbc, sin(a) * 2 on a 2x3 array placed on
 * the device (a Shardy mesh and argument sharding); sdy_constraint.mlirbc,
 * sin(a) * 2 + 1 on 4 elements with a with_sharding_constraint between
 * (sdy.sharding_constraint wrapped in unrealized_conversion_casts): both
 * are identities to the engine.  plus is what the program adds. */
static void check_jax_artifact(PJRT_Client *client, PJRT_Device *dev,
                               const char *path, int n_dims,
                               const int64_t *dims, float plus) {
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f == NULL) return;
  char bytes[4096];
  size_t n = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  CHECK(n > 4 && n < sizeof bytes && memcmp(bytes, "ML\xefR", 4) == 0);
  PJRT_LoadedExecutable *le = NULL;
  ok(compile_bytes(client, bytes, n, &le), "Compile (JAX artifact with sdy)");
  if (le == NULL) return;
  float x[16], got[16];
  int count = 1;
  for (int i = 0; i < n_dims; i++) count *= (int)dims[i];
  for (int i = 0; i < count; i++) x[i] = (float)i - 2.5f;
  ARGS(PJRT_Client_BufferFromHostBuffer_Args, b);
  b.client = client;
  b.data = x;
  b.type = PJRT_Buffer_Type_F32;
  b.dims = dims;
  b.num_dims = (size_t)n_dims;
  b.device = dev;
  ok(api->PJRT_Client_BufferFromHostBuffer(&b), "BufferFromHostBuffer");
  event_done(b.done_with_host_buffer);
  PJRT_Buffer *out = NULL;
  ok(execute(le, &b.buffer, 1, &out), "Execute (JAX artifact)");
  if (out) {
    ARGS(PJRT_Buffer_ToHostBuffer_Args, t);
    t.src = out;
    t.dst = got;
    t.dst_size = (size_t)count * sizeof(float);
    ok(api->PJRT_Buffer_ToHostBuffer(&t), "ToHostBuffer");
    event_done(t.event);
    for (int i = 0; i < count; i++)
      CHECK(fabsf(got[i] - (2 * sinf(x[i]) + plus)) <= 1e-6f);
    destroy_buffer(out);
  }
  destroy_buffer(b.buffer);
  ARGS(PJRT_LoadedExecutable_Destroy_Args, d);
  d.executable = le;
  ok(api->PJRT_LoadedExecutable_Destroy(&d), "LoadedExecutable_Destroy");
}

static int expect_refused(void) {
  ARGS(PJRT_Client_Create_Args, cc);
  PJRT_Error *e = api->PJRT_Client_Create(&cc);
  CHECK(e != NULL && cc.client == NULL);
  if (e) {
    char msg[1024];
    CHECK(take_error(e, msg, sizeof msg) == PJRT_Error_Code_UNAUTHENTICATED);
    fprintf(stderr, "refused (expected): %s\n", msg);
  }
  return failures ? 1 : 0;
}

int main(int argc, char **argv) {
  bool refused = argc == 4 && strcmp(argv[3], "--expect-refused") == 0;
  if (argc != 3 && !refused) {
    fprintf(stderr, "usage: %s libshlo_pjrt.so sdy_sin.mlirbc "
            "[--expect-refused]\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  const PJRT_Api *(*get)(void) =
      (const PJRT_Api *(*)(void))dlsym(lib, "GetPjrtApi");
  if (get == NULL || (api = get()) == NULL) {
    fprintf(stderr, "no GetPjrtApi in %s\n", argv[1]);
    return 1;
  }
  if (refused) return expect_refused();
  check_table();
  ARGS(PJRT_Client_Create_Args, cc);
  ok(api->PJRT_Client_Create(&cc), "Client_Create");
  if (cc.client) {
    PJRT_Device *dev = check_client(cc.client);
    check_sin_matmul(cc.client, dev);
    check_buffers(cc.client, dev);
    check_bad_program(cc.client);
    check_refusals(cc.client);
    int64_t dims23[2] = {2, 3}, dims4[1] = {4};
    check_jax_artifact(cc.client, dev, argv[2], 2, dims23, 0);
    char other[4096];
    snprintf(other, sizeof other, "%s", argv[2]);
    char *slash = strrchr(other, '/');
    snprintf(slash ? slash + 1 : other,
             sizeof other - (size_t)(slash ? slash + 1 - other : 0),
             "sdy_constraint.mlirbc");
    check_jax_artifact(cc.client, dev, other, 1, dims4, 1);
    ARGS(PJRT_Client_Destroy_Args, cd);
    cd.client = cc.client;
    ok(api->PJRT_Client_Destroy(&cd), "Client_Destroy");
  }
  dlclose(lib);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  else printf("pjrt harness: all checks passed\n");
  return failures ? 1 : 0;
}
