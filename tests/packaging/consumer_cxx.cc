/* SPDX-License-Identifier: Apache-2.0 */
// A C++17 program outside the project, built only from the installed
// headers with `g++ -std=c++17 -Wall -Werror` and pkg-config (see
// languages.sh): the headers must parse as C++, their functions link with
// C names, and the ownership rules map onto RAII.  It parses, verifies,
// compiles and runs a program, reads the result through the accessors,
// cancels a run from another thread, and frees everything (valgrind checks
// that).  It runs in a context of one thread whose allocator counts:
// every byte is back when the context is destroyed.  Its C99 twin is
// consumer_c99.c.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <shlo/context.h>
#include <shlo/engine.h>
#include <shlo/ir.h>
#include <shlo/limits.h>
#include <shlo/tensor.h>
#include <shlo/verify.h>

namespace {

const char kProgram[] =
    "func.func @main(%x: tensor<2x3xf32>, %y: tensor<3x2xf32>)"
    " -> tensor<2x2xf32> {\n"
    "  %d = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0] :"
    " (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>\n"
    "  %t = stablehlo.transpose %d, dims = [1, 0] :"
    " (tensor<2x2xf32>) -> tensor<2x2xf32>\n"
    "  func.return %t : tensor<2x2xf32>\n"
    "}\n";

// Runs until canceled.
const char kEndless[] =
    "func.func @main() -> tensor<i64> {\n"
    "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
    "  %r = stablehlo.while(%i = %z) : tensor<i64>\n"
    "  cond {\n"
    "    %t = stablehlo.constant dense<true> : tensor<i1>\n"
    "    stablehlo.return %t : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
    "    %i2 = stablehlo.add %i, %one : tensor<i64>\n"
    "    stablehlo.return %i2 : tensor<i64>\n"
    "  }\n"
    "  func.return %r : tensor<i64>\n}\n";

int failures = 0;
shlo_context *ctx = nullptr;

// The context's allocator counts the bytes it has out; the engine may call
// it from any thread.  Each block keeps its size in front.
std::atomic<long long> live_bytes{0}, n_allocs{0};
constexpr size_t kHead = 2 * sizeof(size_t);

void *count_alloc(void *, size_t n) {
  auto *p = static_cast<size_t *>(std::malloc(kHead + n));
  if (!p) return nullptr;
  p[0] = n;
  live_bytes += static_cast<long long>(n);
  n_allocs++;
  return reinterpret_cast<char *>(p) + kHead;
}

void count_free(void *, void *q) {
  if (!q) return;
  auto *p = reinterpret_cast<size_t *>(static_cast<char *>(q) - kHead);
  live_bytes -= static_cast<long long>(p[0]);
  std::free(p);
}

void *count_realloc(void *user, void *q, size_t n) {
  if (!q) return count_alloc(user, n);
  auto *p = reinterpret_cast<size_t *>(static_cast<char *>(q) - kHead);
  const size_t old = p[0];
  auto *g = static_cast<size_t *>(std::realloc(p, kHead + n));
  if (!g) return nullptr;
  g[0] = n;
  live_bytes += static_cast<long long>(n) - static_cast<long long>(old);
  return reinterpret_cast<char *>(g) + kHead;
}

void check(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "consumer_cxx: FAIL: %s\n", what);
    failures++;
  }
}

std::string describe(const shlo_diag &d) {
  char buf[2048];
  shlo_diag_format(&d, buf, sizeof buf);
  return buf;
}

// One owned reference each; the deleters are the release functions the
// headers name.
struct ValueRelease {
  void operator()(shlo_value *v) const { shlo_value_release(v); }
};
struct ModuleFree {
  void operator()(shlo_module *m) const { shlo_module_free(m); }
};
struct ExecutableFree {
  void operator()(shlo_executable *e) const { shlo_executable_free(e); }
};
using Value = std::unique_ptr<shlo_value, ValueRelease>;
using Module = std::unique_ptr<shlo_module, ModuleFree>;
using Executable = std::unique_ptr<shlo_executable, ExecutableFree>;

// The results of shlo_execute: owned references in a malloc'd array.
struct Results {
  shlo_value **v = nullptr;
  int n = 0;
  ~Results() {
    for (int i = 0; i < n; i++) shlo_value_release(v[i]);
    std::free(v);
  }
};

Value iota(int64_t rows, int64_t cols, float scale) {
  const int64_t dims[2] = {rows, cols};
  Value v(shlo_context_tensor_new(ctx, SHLO_F32, 2, dims));
  if (!v) return v;
  float *p = static_cast<float *>(shlo_tensor_data(v.get()));
  for (int64_t i = 0; i < shlo_tensor_numel(v.get()); i++)
    p[i] = static_cast<float>(i) * scale;
  return v;
}

void check_op_codes(const shlo_module *m) {
  const shlo_func *f = shlo_module_entry(m);
  check(f != nullptr, "entry function");
  if (!f) return;
  for (int i = 0; i < f->body->n_ops; i++) {
    const shlo_op *op = f->body->ops[i];
    check(op->code != SHLO_OP_CODE_UNKNOWN, "op known");
    check(op->code == shlo_op_code_of(op->name), "op code by name");
    const char *name = shlo_op_code_name(op->code);
    check(name && std::string(name) == op->name, "op name by code");
  }
}

void run_program() {
  shlo_diag diag;
  shlo_diag_clear(&diag);
  shlo_module *raw_m = nullptr;
  if (shlo_parse_module(kProgram, sizeof kProgram - 1, "cxx.mlir", &raw_m,
                        &diag) != SHLO_OK) {
    check(false, ("parse: " + describe(diag)).c_str());
    return;
  }
  Module m(raw_m);
  shlo_verify_opts vopts{};
  vopts.require_entry = true;
  check(shlo_verify_module(m.get(), &vopts, nullptr) == SHLO_OK, "verify");
  check_op_codes(m.get());

  shlo_cancel never = SHLO_CANCEL_INIT;
  shlo_compile_opts copts{};
  copts.verified = true;
  copts.context = ctx;
  shlo_executable *raw_e = nullptr;
  if (shlo_compile(m.get(), &copts, &raw_e, &diag) != SHLO_OK) {
    check(false, ("compile: " + describe(diag)).c_str());
    return;
  }
  Executable e(raw_e);
  Value x = iota(2, 3, 1.0f), y = iota(3, 2, 0.5f);
  check(x && y, "inputs");
  if (!x || !y) return;
  shlo_value *const args[2] = {x.get(), y.get()};
  shlo_exec_opts eopts{};
  eopts.timeout_s = 30;
  eopts.cancel = &never;
  Results res;
  if (shlo_execute(e.get(), &eopts, args, 2, &res.v, &res.n, &diag) !=
      SHLO_OK) {
    check(false, ("execute: " + describe(diag)).c_str());
    return;
  }
  check(res.n == 1, "one result");
  if (res.n != 1) return;
  const shlo_value *r = res.v[0];
  check(shlo_value_kind(r) == SHLO_TYPE_TENSOR, "a tensor");
  check(shlo_tensor_elem(r) == SHLO_F32, "f32");
  check(shlo_tensor_rank(r) == 2 && shlo_tensor_dims(r)[0] == 2 &&
            shlo_tensor_dims(r)[1] == 2,
        "2x2");
  const float *p = static_cast<const float *>(shlo_tensor_data_const(r));
  const std::vector<float> got(p, p + shlo_tensor_numel(r));
  check(got == std::vector<float>({5, 14, 6.5f, 20}), "values");
  // Another owner keeps the result past the Results that held it.
  Value kept(shlo_value_retain(res.v[0]));
  check(kept.get() == r, "retain returns its argument");
}

// Cancel from another thread while the run loops.
void run_canceled() {
  shlo_diag diag;
  shlo_module *raw_m = nullptr;
  shlo_executable *raw_e = nullptr;
  shlo_compile_opts copts{};
  copts.context = ctx;
  if (shlo_load(kEndless, sizeof kEndless - 1, "endless.mlir", &copts,
                &raw_m, &raw_e, &diag) != SHLO_OK) {
    check(false, ("load: " + describe(diag)).c_str());
    return;
  }
  Module m(raw_m);
  Executable e(raw_e);
  shlo_cancel stop = SHLO_CANCEL_INIT;
  std::thread canceler([&stop] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    shlo_cancel_set(&stop, 3);
  });
  shlo_exec_opts eopts{};
  eopts.timeout_s = 60;
  eopts.cancel = &stop;
  Results res;
  shlo_status st =
      shlo_execute(e.get(), &eopts, nullptr, 0, &res.v, &res.n, &diag);
  canceler.join();
  check(st == SHLO_ECANCELED, "canceled");
  check(shlo_cancel_reason(&stop) == 3, "the reason stays");
}

}  // namespace

int main() {
  shlo_context_options o;
  shlo_context_options_init(&o);
  o.threads = 1;
  o.allocator.alloc = count_alloc;
  o.allocator.realloc = count_realloc;
  o.allocator.free = count_free;
  if (shlo_context_create(&o, &ctx) != SHLO_OK) {
    std::fprintf(stderr, "consumer_cxx: FAIL: context\n");
    return 1;
  }
  check(shlo_context_threads(ctx) == 1, "one thread");
  run_program();
  run_canceled();
  shlo_context_destroy(ctx);
  check(n_allocs > 0, "the context's allocator is used");
  check(live_bytes == 0, "every byte comes back to the allocator");
  if (failures) return 1;
  std::printf("consumer_cxx: ok\n");
  return 0;
}
