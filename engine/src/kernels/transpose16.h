/* SPDX-License-Identifier: Apache-2.0 */
/* A 16 x 16 tile of floats transposed in registers: sixteen 64-byte
 * vectors, row i in t[i], become column i in t[i].  Four butterfly
 * stages of two-vector shuffles; with AVX-512 each vector is one
 * register.  The GEMM panels pack with it (gemm_panels.c); its vector
 * types serve the sums of sum_tree.h.
 * GCC only (its vector extensions and __builtin_shuffle). */
#ifndef SHLO_TRANSPOSE16_H
#define SHLO_TRANSPOSE16_H

#include <stdint.h>

typedef float shlo_v16f __attribute__((vector_size(64)));
typedef int32_t shlo_v16i __attribute__((vector_size(64)));

/* lane l of the new row i: its own lane l, or row i + b's lane l - b
 * (index 16 + ... picks from the second vector of __builtin_shuffle) */
#define SHLO_T16_LO(B, L) (((L) & (B)) ? 16 + (L) - (B) : (L))
/* lane l of the new row i + b: row i's lane l + b, or its own lane l */
#define SHLO_T16_HI(B, L) (((L) & (B)) ? 16 + (L) : (L) + (B))
#define SHLO_T16_MASK(W, B)                                                 \
  ((shlo_v16i){W(B, 0),  W(B, 1),  W(B, 2),  W(B, 3),  W(B, 4),  W(B, 5),   \
               W(B, 6),  W(B, 7),  W(B, 8),  W(B, 9),  W(B, 10), W(B, 11),  \
               W(B, 12), W(B, 13), W(B, 14), W(B, 15)})

/* One stage for blocks of b lanes: rows i and i + b (i with bit b clear)
 * swap their off-diagonal b x b blocks. */
#define SHLO_T16_STAGE(t, B)                                                \
  _Pragma("GCC unroll 16") for (int i_ = 0; i_ < 16; i_++)                  \
    if (!(i_ & (B))) {                                                      \
      shlo_v16f lo_ = __builtin_shuffle(t[i_], t[i_ + (B)],                 \
                                        SHLO_T16_MASK(SHLO_T16_LO, B));     \
      t[i_ + (B)] = __builtin_shuffle(t[i_], t[i_ + (B)],                   \
                                      SHLO_T16_MASK(SHLO_T16_HI, B));       \
      t[i_] = lo_;                                                          \
    }

#define SHLO_TRANSPOSE16(t)                                                 \
  do {                                                                      \
    SHLO_T16_STAGE(t, 8)                                                    \
    SHLO_T16_STAGE(t, 4)                                                    \
    SHLO_T16_STAGE(t, 2)                                                    \
    SHLO_T16_STAGE(t, 1)                                                    \
  } while (0)

#endif
