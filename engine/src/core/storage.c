/* Element type -> storage (types.h): the one table every typed access
 * (shlo_tensor_get/set) goes through. */
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
