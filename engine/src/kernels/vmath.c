/* SPDX-License-Identifier: Apache-2.0 */
/* f32 vector maths (see vmath.h) and lane programs (vchain.h): the
 * variants of vmath_body.h and vchain_body.h, one per ISA and one
 * portable, and the run-time choice among them.  Off x86-64
 * only the portable one exists.
 *
 * Built with -ffp-contract=off (CMakeLists.txt): the FMAs are written out
 * (emulated exactly in the portable variant), and a
 * multiply and add that the compiler fused on its own in one variant only
 * would round once where the others round twice. */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "kernels/stream_store.h"
#include "kernels/vchain.h"
#include "kernels/vmath.h"
#if defined(__GNUC__) && !defined(__clang__)
#include "kernels/sum_tree.h"
#endif

#define VM_LOG2E_F 0x1.715476p+0f
#define VM_LN2_HI_F 0x1.62e43p-1f   /* ln 2 rounded to f32 */
#define VM_LN2_LO_F -1.90465432e-9f /* ln 2 - VM_LN2_HI_F */

#define VM_AVX512 1
#define VM_AVX2 2
#define VM_PORTABLE 3

typedef void (*vm_fn)(float *d, const float *x, int64_t n);
typedef void (*vm_chain_fn)(const shlo_vchain *p, float *const *out,
                            const int64_t *out_step, const float *const *in,
                            const int64_t *in_step, int64_t rows, int64_t n,
                            void *work);

typedef bool (*vm_sm_exp_fn)(float *e, float *sum, const float *y,
                             const float *m, int64_t rows, int64_t cols,
                             bool m_is_max, const float *next,
                             const shlo_vsoftmax_div *dv,
                             const shlo_vsoftmax_max *mx);
typedef void (*vm_sm_div_fn)(float *d, float *e, const float *s,
                             int64_t rows, int64_t cols, bool stream);

typedef struct vm_impl {
  const char *isa;
  vm_fn exp, tanh, logistic;
  vm_chain_fn chain;
  vm_sm_exp_fn sm_exp;
  vm_sm_div_fn sm_div;
} vm_impl;

#define VM_ISA portable
#define VM_KIND VM_PORTABLE
#define VM_W 4
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_KIND
#undef VM_W

#if defined(__x86_64__) && defined(__GNUC__)
#define VM_ISA avx512
#define VM_KIND VM_AVX512
#define VM_TARGET "avx512f"
#define VM_W 16
#define VM_PS(op) _mm512_##op##_ps
#define VM_M __m512
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_KIND
#undef VM_PS
#undef VM_M
#undef VM_TARGET
#undef VM_W

#define VM_ISA avx2
#define VM_KIND VM_AVX2
#define VM_TARGET "avx2,fma"
#define VM_W 8
#define VM_PS(op) _mm256_##op##_ps
#define VM_M __m256
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_KIND
#undef VM_PS
#undef VM_M
#undef VM_TARGET
#undef VM_W
#endif

/* best first; the portable one (SSE2 on x86-64) runs anywhere */
static const vm_impl vm_impls[] = {
#if defined(__x86_64__) && defined(__GNUC__)
    {"avx512f", vexp_avx512, vtanh_avx512, vlogistic_avx512, vchain_avx512,
     vsm_exp_avx512, vsm_div_avx512},
    {"avx2", vexp_avx2, vtanh_avx2, vlogistic_avx2, vchain_avx2,
     vsm_exp_avx2, vsm_div_avx2},
#endif
    {"portable", vexp_portable, vtanh_portable, vlogistic_portable,
     vchain_portable, vsm_exp_portable, vsm_div_portable},
};

static bool vm_supported(const vm_impl *v) {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (!strcmp(v->isa, "avx512f")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(v->isa, "avx2"))
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#endif
  return (void)v, true;
}

#define VM_N_IMPLS (sizeof vm_impls / sizeof vm_impls[0])

static _Atomic(const vm_impl *) vm_chosen;

static const vm_impl *vm_impl_now(void) {
  const vm_impl *v = atomic_load_explicit(&vm_chosen, memory_order_acquire);
  if (v) return v;
  for (size_t i = 0; i < VM_N_IMPLS && !v; i++)
    if (vm_supported(&vm_impls[i])) v = &vm_impls[i];
  /* every thread that races here picks the same one */
  atomic_store_explicit(&vm_chosen, v, memory_order_release);
  return v;
}

void shlo__vexp_f32(float *d, const float *x, int64_t n) {
  vm_impl_now()->exp(d, x, n);
}

void shlo__vtanh_f32(float *d, const float *x, int64_t n) {
  vm_impl_now()->tanh(d, x, n);
}

void shlo__vlogistic_f32(float *d, const float *x, int64_t n) {
  vm_impl_now()->logistic(d, x, n);
}

/* the largest block of any variant: 16 vectors of 16 floats */
#define VM_MAX_BLOCK 256

size_t shlo__vchain_work_bytes(const shlo_vchain *p) {
  /* a tail block per array */
  return (size_t)(p->n_in + p->n_out) * VM_MAX_BLOCK * sizeof(float);
}

void shlo__vchain_run(const shlo_vchain *p, float *const *out,
                      const float *const *in, int64_t n, void *work) {
  vm_impl_now()->chain(p, out, NULL, in, NULL, 1, n, work);
}

void shlo__vchain_run_rows(const shlo_vchain *p, float *const *out,
                           const int64_t *out_step, const float *const *in,
                           const int64_t *in_step, int64_t rows, int64_t n,
                           void *work) {
  vm_impl_now()->chain(p, out, out_step, in, in_step, rows, n, work);
}

bool shlo__vsoftmax_exp_f32(float *e, float *sum, const float *y,
                            const float *m, int64_t rows, int64_t cols,
                            bool m_is_max, const float *next,
                            const shlo_vsoftmax_div *dv,
                            const shlo_vsoftmax_max *mx) {
  return vm_impl_now()->sm_exp(e, sum, y, m, rows, cols, m_is_max, next, dv,
                               mx);
}

void shlo__vsoftmax_div_f32(float *d, float *e, const float *s, int64_t rows,
                            int64_t cols, bool stream) {
  vm_impl_now()->sm_div(d, e, s, rows, cols, stream);
}

const char *shlo__vmath_isa(void) { return vm_impl_now()->isa; }

bool shlo__vmath_use_isa(const char *isa) {
  for (size_t i = 0; i < VM_N_IMPLS; i++)
    if (!strcmp(vm_impls[i].isa, isa) && vm_supported(&vm_impls[i])) {
      atomic_store_explicit(&vm_chosen, &vm_impls[i], memory_order_release);
      return true;
    }
  return false;
}
