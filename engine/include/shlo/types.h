/* SPDX-License-Identifier: Apache-2.0 */
/* Element types and value types of StableHLO.
 *
 * Storage: every element occupies a whole number of bytes.  Sub-byte integers
 * (i2, i4, ui2, ui4) live sign- or zero-extended in one byte, i1 as 0/1 in one
 * byte, narrow floats (f4, f6, f8) as their bit pattern in the low bits of one
 * byte, bf16/f16 as a uint16_t bit pattern, complex as two floats (re, im).
 * Multi-byte elements are in host (little-endian) order. */
#ifndef SHLO_TYPES_H
#define SHLO_TYPES_H

#include "shlo/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHLO_MAX_RANK 16

typedef enum {
  SHLO_CLASS_BOOL,
  SHLO_CLASS_SINT,
  SHLO_CLASS_UINT,
  SHLO_CLASS_FLOAT,
  SHLO_CLASS_COMPLEX,
} shlo_elem_class;

/* X(ENUM, spelling, bit width, storage bytes, class) */
#define SHLO_ELEM_TYPES(X)                                       \
  X(I1, "i1", 1, 1, BOOL)                                        \
  X(SI2, "i2", 2, 1, SINT)                                       \
  X(SI4, "i4", 4, 1, SINT)                                       \
  X(SI8, "i8", 8, 1, SINT)                                       \
  X(SI16, "i16", 16, 2, SINT)                                    \
  X(SI32, "i32", 32, 4, SINT)                                    \
  X(SI64, "i64", 64, 8, SINT)                                    \
  X(UI2, "ui2", 2, 1, UINT)                                      \
  X(UI4, "ui4", 4, 1, UINT)                                      \
  X(UI8, "ui8", 8, 1, UINT)                                      \
  X(UI16, "ui16", 16, 2, UINT)                                   \
  X(UI32, "ui32", 32, 4, UINT)                                   \
  X(UI64, "ui64", 64, 8, UINT)                                   \
  X(F4E2M1FN, "f4E2M1FN", 4, 1, FLOAT)                           \
  X(F6E2M3FN, "f6E2M3FN", 6, 1, FLOAT)                           \
  X(F6E3M2FN, "f6E3M2FN", 6, 1, FLOAT)                           \
  X(F8E3M4, "f8E3M4", 8, 1, FLOAT)                               \
  X(F8E4M3, "f8E4M3", 8, 1, FLOAT)                               \
  X(F8E4M3FN, "f8E4M3FN", 8, 1, FLOAT)                           \
  X(F8E4M3FNUZ, "f8E4M3FNUZ", 8, 1, FLOAT)                       \
  X(F8E4M3B11FNUZ, "f8E4M3B11FNUZ", 8, 1, FLOAT)                 \
  X(F8E5M2, "f8E5M2", 8, 1, FLOAT)                               \
  X(F8E5M2FNUZ, "f8E5M2FNUZ", 8, 1, FLOAT)                       \
  X(F8E8M0FNU, "f8E8M0FNU", 8, 1, FLOAT)                         \
  X(BF16, "bf16", 16, 2, FLOAT)                                  \
  X(F16, "f16", 16, 2, FLOAT)                                    \
  X(F32, "f32", 32, 4, FLOAT)                                    \
  X(F64, "f64", 64, 8, FLOAT)                                    \
  X(C64, "complex<f32>", 64, 8, COMPLEX)                         \
  X(C128, "complex<f64>", 128, 16, COMPLEX)                      \
  X(INDEX, "index", 64, 8, SINT)

typedef enum {
#define SHLO_ET_ENUM(e, s, b, n, c) SHLO_##e,
  SHLO_ELEM_TYPES(SHLO_ET_ENUM)
#undef SHLO_ET_ENUM
  SHLO_ELEM_COUNT
} shlo_elem_type;

SHLO_API const char *shlo_elem_name(shlo_elem_type t);   /* "f32", "complex<f32>" */
SHLO_API int shlo_elem_bits(shlo_elem_type t);           /* 1 for i1, 64 for C64 */
SHLO_API size_t shlo_elem_size(shlo_elem_type t);        /* storage bytes */
SHLO_API shlo_elem_class shlo_elem_class_of(shlo_elem_type t);
SHLO_API bool shlo_elem_is_int(shlo_elem_type t);        /* SINT or UINT (not i1) */
SHLO_API bool shlo_elem_is_float(shlo_elem_type t);
SHLO_API bool shlo_elem_is_complex(shlo_elem_type t);
/* Parse a spelling ("si8" and "i8" both mean SI8); -1 if unknown. */
SHLO_API int shlo_elem_from_name(const char *s, size_t len);
/* Element type of a complex type's parts, and the complex type of a float. */
SHLO_API shlo_elem_type shlo_elem_complex_part(shlo_elem_type t);

/* How an element is stored, the one mapping from element type to C type:
 * X(STORAGE, C type of one element (of one part, for complex)).  Sub-byte
 * integers and i1 share their byte type; narrow floats are NARROW (a bit
 * pattern in a byte), f16/bf16 a uint16_t pattern. */
#define SHLO_STORAGE_INTS(X)                                     \
  X(S8, int8_t) X(S16, int16_t) X(S32, int32_t) X(S64, int64_t)  \
  X(U8, uint8_t) X(U16, uint16_t) X(U32, uint32_t) X(U64, uint64_t)
#define SHLO_STORAGE_TYPES(X)                                    \
  SHLO_STORAGE_INTS(X)                                           \
  X(NARROW, uint8_t) X(F16, uint16_t) X(BF16, uint16_t)          \
  X(F32, float) X(F64, double) X(C64, float) X(C128, double)

typedef enum {
#define SHLO_ST_ENUM(s, c) SHLO_ST_##s,
  SHLO_STORAGE_TYPES(SHLO_ST_ENUM)
#undef SHLO_ST_ENUM
  SHLO_ST_COUNT
} shlo_storage;

SHLO_API shlo_storage shlo_elem_storage(shlo_elem_type t);

/* Uniform quantization parameters (!quant.uniform<...>). */
typedef struct shlo_quant {
  shlo_elem_type storage;    /* integer storage type */
  shlo_elem_type expressed;  /* float expressed type */
  int64_t storage_min, storage_max;
  int axis;                  /* quantized dimension (per-axis types) */
  bool per_axis;             /* `{s:z, ...}` form; else one (s, z) pair */
  int n;                     /* number of (scale, zero point) pairs */
  double *scales;
  int64_t *zero_points;
  bool signed_storage;       /* storage spelled si<N>: MLIR's signed (not
                                signless) integer, which ops reject */
} shlo_quant;

typedef enum {
  SHLO_TYPE_TENSOR,
  SHLO_TYPE_TOKEN,
  SHLO_TYPE_TUPLE,
  SHLO_TYPE_ELEMENT, /* a bare element type (`i64` in `1 : i64`) */
  SHLO_TYPE_OPAQUE,  /* a type the engine only carries (!stablehlo.future<..>),
                        its text in `encoding` */
} shlo_type_kind;

#define SHLO_DYN (-1)  /* a dynamic dimension, `?` */

/* A value's type.  Types live in a module's arena and are never mutated
 * once built; the pointers inside point into the same arena. */
typedef struct shlo_type {
  shlo_type_kind kind;
  shlo_elem_type elem;        /* TENSOR: element (storage type if quant) */
  int rank;                   /* -1 for an unranked tensor<*xT> */
  int64_t dims[SHLO_MAX_RANK];
  const shlo_quant *quant;    /* TENSOR: NULL unless quantized */
  const char *encoding;       /* TENSOR: raw text of an encoding such as
                                 #stablehlo.bounds<...>, or NULL */
  int n_elems;                /* TUPLE */
  const struct shlo_type **elems;
} shlo_type;

/* Number of elements of a static tensor type (1 for rank 0); -1 if any
 * dimension is dynamic or the product overflows int64. */
SHLO_API int64_t shlo_type_numel(const shlo_type *t);
SHLO_API bool shlo_type_is_static(const shlo_type *t);
/* Structural equality (shapes, element types, quant params, tuples). */
SHLO_API bool shlo_type_equal(const shlo_type *a, const shlo_type *b);
/* Write the MLIR spelling ("tensor<2x3xf32>") into buf; returns the length
 * it needed (like snprintf). */
SHLO_API int shlo_type_format(const shlo_type *t, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
