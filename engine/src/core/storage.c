/* SPDX-License-Identifier: Apache-2.0 */
/* Element type -> storage (types.h): the one table every typed access
 * (shlo_tensor_get/set) goes through. */
#include "core/storage.h"
#include "shlo/types.h"

static const unsigned char storage_of[SHLO_ELEM_COUNT] = {
    [SHLO_I1] = SHLO_ST_U8,
    [SHLO_SI2] = SHLO_ST_S8,        [SHLO_SI4] = SHLO_ST_S8,
    [SHLO_SI8] = SHLO_ST_S8,        [SHLO_SI16] = SHLO_ST_S16,
    [SHLO_SI32] = SHLO_ST_S32,      [SHLO_SI64] = SHLO_ST_S64,
    [SHLO_UI2] = SHLO_ST_U8,        [SHLO_UI4] = SHLO_ST_U8,
    [SHLO_UI8] = SHLO_ST_U8,        [SHLO_UI16] = SHLO_ST_U16,
    [SHLO_UI32] = SHLO_ST_U32,      [SHLO_UI64] = SHLO_ST_U64,
    [SHLO_F4E2M1FN] = SHLO_ST_NARROW, [SHLO_F6E2M3FN] = SHLO_ST_NARROW,
    [SHLO_F6E3M2FN] = SHLO_ST_NARROW, [SHLO_F8E3M4] = SHLO_ST_NARROW,
    [SHLO_F8E4M3] = SHLO_ST_NARROW, [SHLO_F8E4M3FN] = SHLO_ST_NARROW,
    [SHLO_F8E4M3FNUZ] = SHLO_ST_NARROW,
    [SHLO_F8E4M3B11FNUZ] = SHLO_ST_NARROW,
    [SHLO_F8E5M2] = SHLO_ST_NARROW, [SHLO_F8E5M2FNUZ] = SHLO_ST_NARROW,
    [SHLO_F8E8M0FNU] = SHLO_ST_NARROW,
    [SHLO_BF16] = SHLO_ST_BF16,     [SHLO_F16] = SHLO_ST_F16,
    [SHLO_F32] = SHLO_ST_F32,       [SHLO_F64] = SHLO_ST_F64,
    [SHLO_C64] = SHLO_ST_C64,       [SHLO_C128] = SHLO_ST_C128,
    [SHLO_INDEX] = SHLO_ST_S64,
};

_Static_assert(SHLO_ELEM_COUNT == 31,
               "a new element type needs its storage in storage_of");

shlo_storage shlo_elem_storage(shlo_elem_type t) {
  return (shlo_storage)storage_of[t];
}

int shlo__int_storage(shlo_elem_type t) {
  shlo_storage s = shlo_elem_storage(t);
  return (int)s < SHLO__ST_INTS ? (int)s : -1;
}

static inline int64_t saturate_u64(uint64_t v) {
  return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* (ct)-1 > 0 is a constant: unsigned storages go through saturate_u64
 * (only ui64 can pass INT64_MAX), signed ones convert as they are. */
int shlo__storage_loop(shlo_elem_type t) {
  shlo_storage s = shlo_elem_storage(t);
  return s == SHLO_ST_F16 || s == SHLO_ST_BF16 ? SHLO_ST_NARROW : (int)s;
}

#define INT_LOADER(st, ct)                                        \
  static int64_t ld_##st(const void *p, int64_t i) {              \
    ct v = ((const ct *)p)[i];                                    \
    return (ct)-1 > 0 ? saturate_u64((uint64_t)v) : (int64_t)v;   \
  }
SHLO_STORAGE_INTS(INT_LOADER)
#undef INT_LOADER

shlo__int_load_fn shlo__int_loader(shlo_elem_type t) {
  static const shlo__int_load_fn by_storage[SHLO__ST_INTS] = {
#define INT_LOADER_CELL(st, ct) [SHLO_ST_##st] = ld_##st,
      SHLO_STORAGE_INTS(INT_LOADER_CELL)
#undef INT_LOADER_CELL
  };
  int s = shlo__int_storage(t);
  return s < 0 ? NULL : by_storage[s];
}
