/* SPDX-License-Identifier: Apache-2.0 */
/* Serialized executables, for JAX's persistent compilation cache and
 * jax.experimental.serialize_executable.
 *
 * shlo's plans are not an artifact of their own: a serialized executable
 * is the program and its compile options as they were given, and
 * deserializing compiles them again (the engine compiles in
 * milliseconds; in the remote mode the server's module cache answers).
 * Layout (little-endian), checked field by field on the way back in:
 *   0  "SHLOPJRT"   8 bytes
 *   8  u32 format   1
 *   12 u32 reserved 0
 *   16 u64 options length
 *   24 u64 program length
 *   32 the options' bytes, then the program's */
#include "pjrt_internal.h"

#include <stdlib.h>
#include <string.h>

#define SER_MAGIC "SHLOPJRT"
#define SER_FORMAT 1u
#define SER_HEADER 32u

struct PJRT_SerializedExecutable {
  size_t size;
  char bytes[];
};

static void serialized_free(PJRT_SerializedExecutable *s) { free(s); }

static void put_u32(char *at, uint32_t v) {
  for (int i = 0; i < 4; i++) at[i] = (char)(v >> (8 * i));
}

static void put_u64(char *at, uint64_t v) {
  for (int i = 0; i < 8; i++) at[i] = (char)(v >> (8 * i));
}

static uint64_t get_u64(const char *at, int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)(unsigned char)at[i] << (8 * i);
  return v;
}

PJRT_Error *shlo_pjrt_Executable_Serialize(
    PJRT_Executable_Serialize_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Executable_Serialize_Args,
                       serialized_executable_deleter);
  if (args->executable == NULL || args->executable->prog == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "Serialize: null executable");
  const shlo_pjrt_program *p = args->executable->prog;
  size_t n = SER_HEADER + p->options_size + p->code_size;
  PJRT_SerializedExecutable *s = malloc(sizeof *s + n);
  if (s == NULL)
    return shlo_pjrt_error(PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of memory");
  s->size = n;
  memcpy(s->bytes, SER_MAGIC, 8);
  put_u32(s->bytes + 8, SER_FORMAT);
  put_u32(s->bytes + 12, 0);
  put_u64(s->bytes + 16, p->options_size);
  put_u64(s->bytes + 24, p->code_size);
  memcpy(s->bytes + SER_HEADER, p->options, p->options_size);
  memcpy(s->bytes + SER_HEADER + p->options_size, p->code, p->code_size);
  args->serialized_bytes = s->bytes;
  args->serialized_bytes_size = n;
  args->serialized_executable = s;
  args->serialized_executable_deleter = serialized_free;
  return NULL;
}

PJRT_Error *shlo_pjrt_Executable_DeserializeAndLoad(
    PJRT_Executable_DeserializeAndLoad_Args *args) {
  SHLO_PJRT_ARGS_CHECK(args, PJRT_Executable_DeserializeAndLoad_Args,
                       loaded_executable);
  const char *b = args->serialized_executable;
  size_t n = args->serialized_executable_size;
  if (args->client == NULL || (b == NULL && n > 0))
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "DeserializeAndLoad: null client or bytes");
  if (n < SER_HEADER || memcmp(b, SER_MAGIC, 8) != 0 ||
      get_u64(b + 8, 4) != SER_FORMAT || get_u64(b + 12, 4) != 0)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "not an executable serialized by shlo's plugin "
                           "(format %u)", SER_FORMAT);
  uint64_t opts_len = get_u64(b + 16, 8), code_len = get_u64(b + 24, 8);
  if (opts_len > n - SER_HEADER || code_len != n - SER_HEADER - opts_len)
    return shlo_pjrt_error(PJRT_Error_Code_INVALID_ARGUMENT,
                           "serialized executable: lengths %llu + %llu do not "
                           "fit its %zu bytes", (unsigned long long)opts_len,
                           (unsigned long long)code_len, n);
  return shlo_pjrt_compile_loaded(args->client, b + SER_HEADER + opts_len,
                                  code_len, b + SER_HEADER, opts_len,
                                  &args->loaded_executable);
}
