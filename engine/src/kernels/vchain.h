/* SPDX-License-Identifier: Apache-2.0 */
/* f32 lane programs: a chain of f32 elementwise ops run over arrays a
 * block of elements at a time, each op's value kept in vector registers
 * for the next, where a loop per op would store every value and load it
 * back (on AVX-512 a store costs more than the op).
 *
 * A program is a list of instructions in the order the ops ran unfused.
 * Each reads one or two operands, each the accumulator (the value the
 * instruction before it made, over the same block) or an input: an array
 * that advances with the element, or one element read by every lane.  It
 * leaves its value in the accumulator and may also store it to an output,
 * which later instructions may read back as an input at the same address
 * (a value needed past the next instruction).
 *
 * Every op is the same IEEE operation on every element as the op's own
 * loop (elementwise.c): add, subtract, multiply, divide and square root
 * in f32; maximum and minimum with StableHLO's NaN and signed-zero rules;
 * negate and abs on the sign bit; exp, tanh and logistic as vmath.h
 * computes them.  So a value depends on its operands only, never on the
 * block it falls in or the ISA, and a fused chain gives the bits its ops
 * give one by one (save the payload of a NaN when both operands of a
 * binary op are NaNs, which no loop here fixes).  The ISA is vmath.c's choice. */
#ifndef SHLO_VCHAIN_H
#define SHLO_VCHAIN_H

#include <stddef.h>
#include <stdint.h>

typedef enum shlo_lane_op {
  SHLO_LANE_NONE, /* not a lane op */
  SHLO_LANE_ADD,
  SHLO_LANE_SUB,
  SHLO_LANE_MUL,
  SHLO_LANE_DIV,
  SHLO_LANE_MAX,
  SHLO_LANE_MIN,
  SHLO_LANE_NEG,
  SHLO_LANE_ABS,
  SHLO_LANE_SQRT,
  SHLO_LANE_EXP,
  SHLO_LANE_TANH,
  SHLO_LANE_LOGISTIC,
  SHLO_LANE_COUNT
} shlo_lane_op;

/* Operands and outputs a program may have; more and the chain runs op by
 * op. */
#define SHLO_VCHAIN_MAX_IO 32
#define SHLO_VCHAIN_ACC (-1) /* an operand: the accumulator */

typedef struct shlo_vchain_ins {
  uint8_t op;   /* shlo_lane_op */
  int8_t a, b;  /* operands: SHLO_VCHAIN_ACC or an input; b unused by
                   unary ops */
  int8_t out;   /* >= 0: the output the value is also stored to */
} shlo_vchain_ins;

typedef struct shlo_vchain {
  int n_ins, n_in, n_out;
  shlo_vchain_ins *ins;
  uint8_t in_one[SHLO_VCHAIN_MAX_IO]; /* input k is one element */
  /* output k is written past the caches (a result larger than they are,
   * not read again soon; stream_store.h), where its blocks are aligned
   * for it; the caller fences (shlo__stream_fence) before it is read */
  uint8_t out_stream[SHLO_VCHAIN_MAX_IO];
} shlo_vchain;

/* Whether op takes two operands. */
static inline int shlo_lane_op_binary(int op) {
  return op >= SHLO_LANE_ADD && op <= SHLO_LANE_MIN;
}

/* Bytes of the workspace shlo__vchain_run needs for program p. */
size_t shlo__vchain_work_bytes(const shlo_vchain *p);
/* Run p over n elements: in[k] points at input k's first element (its one
 * element when p->in_one[k]), out[k] at output k's.  An output may be an
 * input at the same address (read by instructions before the one that
 * stores it, or after), never overlap one otherwise.  work: 64-byte
 * aligned, shlo__vchain_work_bytes(p) bytes. */
void shlo__vchain_run(const shlo_vchain *p, float *const *out,
                      const float *const *in, int64_t n, void *work);
/* shlo__vchain_run over `rows` rows of n elements, one row after the
 * other, the program decoded once: row r's input k starts at in[k] +
 * r * in_step[k] bytes, its output q at out[q] + r * out_step[q] bytes
 * (a step of 0: the same array every row).  The same as a call per row,
 * so a row's outputs are written before the next row reads them. */
void shlo__vchain_run_rows(const shlo_vchain *p, float *const *out,
                           const int64_t *out_step, const float *const *in,
                           const int64_t *in_step, int64_t rows, int64_t n,
                           void *work);

#endif
