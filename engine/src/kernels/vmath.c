/* f32 vector maths (see vmath.h): the scalar reference loops, the per-ISA
 * variants (vmath_body.h, compiled once per target) and the run-time
 * choice among them.  Off x86-64 only the scalar loops exist. */
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "kernels/vmath.h"

/* The engine's scalar definitions (elementwise.c's FU_ macros for f32);
 * the vector variants fall back to these for NaN operands and tails. */
static void vm_exp_scalar(float *d, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = (float)exp((double)x[i]);
}

static void vm_tanh_scalar(float *d, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) d[i] = (float)tanh((double)x[i]);
}

static void vm_logistic_scalar(float *d, const float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    d[i] = 1.0f / (1.0f + (float)exp(-(double)x[i]));
}

typedef void (*vm_fn)(float *d, const float *x, int64_t n);

typedef struct vm_impl {
  const char *isa;
  vm_fn exp, tanh, logistic;
} vm_impl;

#if defined(__x86_64__) && defined(__GNUC__)
#define VM_LOG2E 0x1.71547652b82fep+0
#define VM_LN2_HI 0x1.62e42fee00000p-1
#define VM_LN2_LO 0x1.a39ef35793c76p-33

#define VM_ISA avx512
#define VM_TARGET "avx512f"
#define VM_W 8
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_TARGET
#undef VM_W

#define VM_ISA avx2
#define VM_TARGET "avx2,fma"
#define VM_W 4
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_TARGET
#undef VM_W

#define VM_ISA sse2
#define VM_TARGET "sse2"
#define VM_W 2
#include "kernels/vmath_body.h"
#undef VM_ISA
#undef VM_TARGET
#undef VM_W

/* best first */
static const vm_impl vm_impls[] = {
    {"avx512f", vexp_avx512, vtanh_avx512, vlogistic_avx512},
    {"avx2", vexp_avx2, vtanh_avx2, vlogistic_avx2},
    {"sse2", vexp_sse2, vtanh_sse2, vlogistic_sse2},
};

static bool vm_supported(const vm_impl *v) {
  __builtin_cpu_init();
  if (!strcmp(v->isa, "avx512f")) return __builtin_cpu_supports("avx512f");
  if (!strcmp(v->isa, "avx2"))
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return true;
}
#else
static const vm_impl vm_impls[] = {
    {"scalar", vm_exp_scalar, vm_tanh_scalar, vm_logistic_scalar},
};
static bool vm_supported(const vm_impl *v) { return (void)v, true; }
#endif

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

const char *shlo__vmath_isa(void) { return vm_impl_now()->isa; }

bool shlo__vmath_use_isa(const char *isa) {
  for (size_t i = 0; i < VM_N_IMPLS; i++)
    if (!strcmp(vm_impls[i].isa, isa) && vm_supported(&vm_impls[i])) {
      atomic_store_explicit(&vm_chosen, &vm_impls[i], memory_order_release);
      return true;
    }
  return false;
}
