/* The op table generated from SHLO_OP_LIST. */
#include <string.h>

#include "compile/ops.h"

static const char *const op_names[SHLO_OP_COUNT] = {
    [SHLO_OP_UNKNOWN] = "<unknown>",
#define SHLO_OP_NAME(e, name, fn) [SHLO_OP_##e] = name,
    SHLO_OP_LIST(SHLO_OP_NAME)
#undef SHLO_OP_NAME
};

static const shlo_compile_fn op_compile[SHLO_OP_COUNT] = {
    [SHLO_OP_UNKNOWN] = shlo__compile_unimplemented,
#define SHLO_OP_FN(e, name, fn) [SHLO_OP_##e] = fn,
    SHLO_OP_LIST(SHLO_OP_FN)
#undef SHLO_OP_FN
};

shlo_opcode shlo__op_lookup(const char *name, size_t len) {
  for (int i = 1; i < SHLO_OP_COUNT; i++)
    if (strlen(op_names[i]) == len && !memcmp(op_names[i], name, len))
      return (shlo_opcode)i;
  return SHLO_OP_UNKNOWN;
}

const char *shlo__op_name(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_names[code] : "<unknown>";
}

shlo_compile_fn shlo__op_compile_fn(shlo_opcode code) {
  return (unsigned)code < SHLO_OP_COUNT ? op_compile[code]
                                        : shlo__compile_unimplemented;
}
