/* SPDX-License-Identifier: Apache-2.0 */
/* SHLO_CLONES before a function's definition compiles it once per x86-64
 * ISA level (AVX-512, AVX2, the baseline) and lets the loader pick the
 * best one the CPU has, so hot loops use wide vectors while the binary
 * still runs on any x86-64 (the shipped build has no -march).  Only for
 * loops whose results cannot depend on the ISA: every clone must do the
 * same IEEE operations in the same order (no reassociation, and the
 * functions it marks do no multiply-add that could be contracted).
 * Elsewhere it is empty. */
#ifndef SHLO_MULTIVERSION_H
#define SHLO_MULTIVERSION_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define SHLO_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SHLO_CLONES
#endif

#endif
