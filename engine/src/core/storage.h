/* SPDX-License-Identifier: Apache-2.0 */
/* The integer half of the element-type -> storage mapping (shlo/types.h,
 * core/storage.c), for kernels that keep one loop per integer storage.
 * SHLO_STORAGE_INTS comes first in shlo_storage, so an integer storage is
 * also the index of its loop in such a kernel's table: a kernel names its
 * loops with SHLO__ST_INT_NAMES and asks shlo__int_storage which to use,
 * instead of switching over element types itself. */
#ifndef SHLO_CORE_STORAGE_H
#define SHLO_CORE_STORAGE_H

#include <stdint.h>

#include "shlo/types.h"

/* Number of integer storages: the size of a per-storage loop table. */
enum { SHLO__ST_INTS = SHLO_ST_U64 + 1 };
_Static_assert(SHLO_ST_S8 == 0 && SHLO__ST_INTS == 8,
               "SHLO_STORAGE_INTS must open shlo_storage");

/* Enumerator names P##s8 ... P##u64 for a kernel's integer loops, each
 * equal to its storage. */
#define SHLO__ST_INT_NAMES(P)                                        \
  P##s8 = SHLO_ST_S8, P##s16 = SHLO_ST_S16, P##s32 = SHLO_ST_S32,    \
  P##s64 = SHLO_ST_S64, P##u8 = SHLO_ST_U8, P##u16 = SHLO_ST_U16,    \
  P##u32 = SHLO_ST_U32, P##u64 = SHLO_ST_U64

/* The same for kernels with one loop per storage but one loop for every
 * float narrower than f32 (loaded through double): P##nar stands for
 * NARROW, F16 and BF16. */
#define SHLO__ST_LOOP_NAMES(P)                                       \
  SHLO__ST_INT_NAMES(P), P##nar = SHLO_ST_NARROW, P##f32 = SHLO_ST_F32, \
  P##f64 = SHLO_ST_F64, P##c64 = SHLO_ST_C64, P##c128 = SHLO_ST_C128

/* The loop of t among SHLO__ST_LOOP_NAMES: its storage, NARROW for f16
 * and bf16. */
int shlo__storage_loop(shlo_elem_type t);

/* The integer storage of t (i1 and sub-byte integers share their byte's),
 * or -1 when t is not stored as an integer. */
int shlo__int_storage(shlo_elem_type t);

/* Reads element i of integer data p as int64; ui64 values past INT64_MAX
 * saturate (for indices that is out of bounds, and clamps as such). */
typedef int64_t (*shlo__int_load_fn)(const void *p, int64_t i);

/* The reader for integer type t, or NULL when t is not an integer. */
shlo__int_load_fn shlo__int_loader(shlo_elem_type t);

#endif
