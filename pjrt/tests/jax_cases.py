# SPDX-License-Identifier: Apache-2.0
"""The oracle suite's functions: name -> (function, argument builder,
exact).  Each runs jitted on shlo and on JAX's CPU backend.  exact=True:
bit for bit (integer, logical and data-movement ops, where XLA is exact
too); False: within test_jax_oracle.py's RTOL/ATOL; a number: that
relative tolerance.

Where XLA:CPU is not exact: it contracts a multiply and an add into one
FMA (shlo rounds both), and it keeps f32 precision across bf16/f16
round trips (xla_allow_excess_precision), where shlo rounds to the narrow
type as the program says."""
import numpy as np

import jax
import jax.numpy as jnp
from jax import lax


def _rng(seed):
    return np.random.default_rng(seed)


def f32(*shape, seed=0, lo=-2.0, hi=2.0):
    return lambda: _rng(seed).uniform(lo, hi, shape).astype(np.float32)


def pos32(*shape, seed=0):
    return f32(*shape, seed=seed, lo=0.1, hi=3.0)


def i32(*shape, seed=0, lo=-50, hi=50, dtype=np.int32):
    return lambda: _rng(seed).integers(lo, hi, shape).astype(dtype)


def args(*builders):
    return lambda: tuple(b() for b in builders)


CASES = {}


def case(name, fn, build, exact=False):
    CASES[name] = (fn, build, exact)


# ---- elementwise unary, f32, shapes varying per op
_UNARY = {
    "neg": (jnp.negative, f32(7, 3)), "abs": (jnp.abs, f32(5)),
    "exp": (jnp.exp, f32(4, 6)), "expm1": (jnp.expm1, f32(9)),
    "log": (jnp.log, pos32(3, 3)), "log1p": (jnp.log1p, pos32(8)),
    "sqrt": (jnp.sqrt, pos32(2, 5)), "rsqrt": (lax.rsqrt, pos32(6)),
    "cbrt": (jnp.cbrt, f32(6)), "tanh": (jnp.tanh, f32(3, 4, 2)),
    "logistic": (jax.nn.sigmoid, f32(10)), "sin": (jnp.sin, f32(4, 4)),
    "cos": (jnp.cos, f32(11)), "tan": (jnp.tan, f32(5, seed=3, lo=-1, hi=1)),
    "atan": (jnp.arctan, f32(6)), "asin": (jnp.arcsin, f32(6, lo=-0.9, hi=0.9)),
    "acos": (jnp.arccos, f32(6, lo=-0.9, hi=0.9)), "sinh": (jnp.sinh, f32(5)),
    "cosh": (jnp.cosh, f32(5)), "asinh": (jnp.arcsinh, f32(5)),
    "erf": (lax.erf, f32(7)), "erf_inv": (lax.erf_inv, f32(7, lo=-0.9, hi=0.9)),
    "lgamma": (lax.lgamma, pos32(6)), "digamma": (lax.digamma, pos32(6)),
    "floor": (jnp.floor, f32(8)), "ceil": (jnp.ceil, f32(8)),
    "round": (jnp.round, f32(8)), "sign": (jnp.sign, f32(8)),
    "is_finite": (jnp.isfinite, f32(8)), "square": (jnp.square, f32(3, 3)),
    "reciprocal": (jnp.reciprocal, pos32(5)),
    "gelu": (jax.nn.gelu, f32(4, 8)), "relu": (jax.nn.relu, f32(12)),
    "softplus": (jax.nn.softplus, f32(6)),
}
for _n, (_f, _b) in _UNARY.items():
    case("unary_" + _n, _f, args(_b),
         exact=_n in ("neg", "abs", "floor", "ceil", "round", "sign",
                      "is_finite", "relu"))

# ---- elementwise binary
_BINARY = {
    "add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply,
    "div": jnp.divide, "max": jnp.maximum, "min": jnp.minimum,
    "pow": lambda a, b: jnp.power(jnp.abs(a) + 0.5, b), "atan2": jnp.arctan2,
    "rem": jnp.fmod, "nextafter": jnp.nextafter, "hypot": jnp.hypot,
}
for _n, _f in _BINARY.items():
    case("binary_" + _n, _f, args(f32(3, 5, seed=1), f32(3, 5, seed=2)),
         exact=_n in ("add", "sub", "mul", "max", "min", "nextafter"))
case("binary_broadcast", lambda a, b: a * b + 1, args(f32(4, 1), f32(1, 6)))

# ---- integers, all exact
for _dt in (np.int8, np.int16, np.int32, np.uint8, np.uint32):
    _n = np.dtype(_dt).name
    _b = i32(4, 5, lo=0 if _n.startswith("u") else -50, hi=50, dtype=_dt)
    case(f"int_{_n}_arith", lambda a: a * 3 - a // 2 + a % 7, args(_b), True)
case("int_bitwise", lambda a, b: (a & b) ^ (a | ~b), args(i32(6, seed=1), i32(6, seed=2)), True)
case("int_shifts", lambda a: (a << 2) + (a >> 1) +
     lax.shift_right_logical(a, a.dtype.type(3)),
     args(i32(7)), True)
case("int_popcnt_clz", lambda a: lax.population_count(a) + lax.clz(a), args(i32(9)), True)
case("int_compare", lambda a, b: jnp.stack([a < b, a == b, a >= b]),
     args(i32(5, seed=1), i32(5, seed=2)), True)
case("bool_logic", lambda a, b: jnp.logical_xor(a > 0, b > 0) | ~(a > b),
     args(f32(6, seed=1), f32(6, seed=2)), True)

# ---- conversions
case("convert_f32_i32", lambda a: (a * 10).astype(jnp.int32), args(f32(6)), True)
case("convert_i32_f32", lambda a: a.astype(jnp.float32) / 3, args(i32(6)))
case("convert_f16", lambda a: (a.astype(jnp.float16) * 3).astype(jnp.float32),
     args(f32(6)), 2.0 ** -10)
case("convert_bf16", lambda a: (a.astype(jnp.bfloat16) + 1).astype(jnp.float32),
     args(f32(6)), 2.0 ** -7)
case("bitcast_f32_u32", lambda a: lax.bitcast_convert_type(a, jnp.uint32), args(f32(5)), True)
case("clamp", lambda a: jnp.clip(a, -0.5, 0.7), args(f32(9)), True)
case("select", lambda a, b: lax.select(a > b, a, b), args(f32(4, seed=1), f32(4, seed=2)), True)

# ---- reductions
case("reduce_sum", lambda a: a.sum(axis=1), args(f32(6, 7)))
case("reduce_prod", lambda a: a.prod(axis=0), args(f32(4, 3)))
case("reduce_max", lambda a: a.max(axis=(0, 2)), args(f32(3, 4, 5)), True)
case("reduce_min_int", lambda a: a.min(), args(i32(20)), True)
case("reduce_argmax", lambda a: jnp.argmax(a, axis=1), args(f32(5, 8)), True)
case("reduce_argmin", lambda a: jnp.argmin(a, axis=0), args(f32(5, 8)), True)
case("reduce_any_all", lambda a: (jnp.any(a > 1), jnp.all(a > -3)), args(f32(10)), True)
case("reduce_mean_var", lambda a: (a.mean(0), a.var(0)), args(f32(9, 3)))
case("logsumexp", lambda a: jax.nn.logsumexp(a, axis=-1), args(f32(4, 6)))
case("softmax", lambda a: jax.nn.softmax(a, axis=-1), args(f32(3, 7)))
case("cumsum", lambda a: jnp.cumsum(a, axis=1), args(f32(3, 6)))
case("cumprod", lambda a: jnp.cumprod(a, axis=0), args(f32(5, 2)))
case("cummax", lambda a: lax.cummax(a, axis=0), args(f32(7)), True)
case("reduce_window_maxpool",
     lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
     args(f32(1, 6, 6, 2)), True)
case("reduce_window_avgpool",
     lambda a: lax.reduce_window(a, 0., lax.add, (2, 2), (1, 1), "SAME") / 4,
     args(f32(5, 5)))

# ---- data movement, exact
case("reshape", lambda a: a.reshape(6, 4), args(f32(2, 3, 4)), True)
case("transpose", lambda a: jnp.transpose(a, (2, 0, 1)), args(f32(2, 3, 4)), True)
case("broadcast", lambda a: jnp.broadcast_to(a, (3, 4, 5)), args(f32(4, 1)), True)
case("slice", lambda a: a[1:5:2, ::3], args(f32(6, 7)), True)
case("rev", lambda a: a[::-1, ::-1], args(f32(3, 4)), True)
case("concatenate", lambda a, b: jnp.concatenate([a, b, a], axis=0),
     args(f32(2, 3, seed=1), f32(4, 3, seed=2)), True)
case("pad", lambda a: jnp.pad(a, ((1, 2), (0, 3)), constant_values=7.), args(f32(3, 3)), True)
case("pad_interior", lambda a: lax.pad(a, a.dtype.type(0), ((1, 1, 1),)),
     args(f32(4)), True)
case("iota", lambda: jnp.arange(12).reshape(3, 4), args(), True)
case("dynamic_slice", lambda a, i: lax.dynamic_slice(a, (i, i - 1), (2, 3)),
     lambda: (f32(5, 6)(), np.int32(2)), True)
case("dynamic_update_slice",
     lambda a, b: lax.dynamic_update_slice(a, b, (1, 2)), args(f32(5, 6), f32(2, 2, seed=3)), True)
case("gather_take", lambda a, i: a[i], args(f32(8, 3), i32(5, lo=0, hi=8)), True)
case("gather_take_along", lambda a, i: jnp.take_along_axis(a, i, axis=1),
     args(f32(4, 6), i32(4, 2, lo=0, hi=6)), True)
case("scatter_add", lambda a, i, u: a.at[i].add(u),
     args(f32(6), i32(4, lo=0, hi=6), f32(4, seed=5)))
case("scatter_set", lambda a, i: a.at[i].set(-1.), args(f32(6, 2), i32(3, lo=0, hi=6)), True)
case("sort", lambda a: jnp.sort(a, axis=-1), args(f32(4, 9)), True)
case("argsort", lambda a: jnp.argsort(a), args(f32(11)), True)
case("top_k", lambda a: lax.top_k(a, 3), args(f32(2, 10)), True)
case("where_nonzero_size", lambda a: jnp.nonzero(a > 0, size=4, fill_value=-1)[0],
     args(f32(9)), True)

# ---- linear algebra
case("dot_vec", lambda a, b: a @ b, args(f32(7, seed=1), f32(7, seed=2)))
case("matmul", lambda a, b: a @ b, args(f32(5, 6, seed=1), f32(6, 3, seed=2)))
case("matmul_batched", lambda a, b: jnp.einsum("bij,bjk->bik", a, b),
     args(f32(3, 4, 5, seed=1), f32(3, 5, 2, seed=2)))
case("einsum_contract", lambda a, b: jnp.einsum("ijk,kj->i", a, b),
     args(f32(2, 3, 4, seed=1), f32(4, 3, seed=2)))
case("matmul_int", lambda a, b: a @ b, args(i32(3, 4, seed=1), i32(4, 2, seed=2)), True)
case("conv2d", lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
     args(f32(1, 2, 6, 6, seed=1), f32(3, 2, 3, 3, seed=2)))
case("conv1d_strided", lambda x, w: lax.conv_general_dilated(x, w, (2,), "VALID"),
     args(f32(2, 1, 9, seed=1), f32(4, 1, 3, seed=2)))
case("linalg_inv", lambda a: jnp.linalg.inv(a + 4 * jnp.eye(4)), args(f32(4, 4)))
case("linalg_solve", lambda a, b: jnp.linalg.solve(a + 5 * jnp.eye(5), b),
     args(f32(5, 5, seed=1), f32(5, 2, seed=2)))
case("linalg_cholesky", lambda a: jnp.linalg.cholesky(a @ a.T + 4 * jnp.eye(4)), args(f32(4, 4)))
case("linalg_qr", lambda a: jnp.abs(jnp.linalg.qr(a)[1]), args(f32(5, 3)))
case("linalg_eigh_values", lambda a: jnp.linalg.eigvalsh(a + a.T), args(f32(4, 4)))
case("linalg_svd_values", lambda a: jnp.linalg.svd(a, compute_uv=False), args(f32(4, 3)))
case("linalg_det", lambda a: jnp.linalg.det(a + 3 * jnp.eye(3)), args(f32(3, 3)))
case("triangular_solve",
     lambda a, b: jax.scipy.linalg.solve_triangular(jnp.tril(a) + 4 * jnp.eye(4), b, lower=True),
     args(f32(4, 4, seed=1), f32(4, 2, seed=2)))
case("fft", lambda a: jnp.abs(jnp.fft.fft(a)), args(f32(8)))
case("complex_mul", lambda a, b: jnp.abs((a + 1j * b) * (b - 2j * a)),
     args(f32(6, seed=1), f32(6, seed=2)))

# ---- control flow
case("scan_cumsum", lambda a: lax.scan(lambda c, r: (c + r, c * r), jnp.zeros(a.shape[1]), a),
     args(f32(6, 3)))
case("fori_loop", lambda a: lax.fori_loop(0, 5, lambda i, c: c * 0.9 + i, a), args(f32(4)))
case("while_loop", lambda a: lax.while_loop(lambda c: c[0] < 7, lambda c: (c[0] + 1, jnp.sin(c[1])), (0, a))[1],
     args(f32(3)))
case("cond", lambda a: lax.cond(a.sum() > 0, lambda b: b * 2, lambda b: b - 1, a), args(f32(5)))
case("switch", lambda i, a: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], a),
     lambda: (np.int32(1), f32(4)()))
case("map", lambda a: lax.map(lambda r: jnp.dot(r, r), a), args(f32(5, 3)))

# ---- transformations
case("vmap_dot", lambda a, b: jax.vmap(jnp.dot)(a, b), args(f32(4, 3, seed=1), f32(4, 3, seed=2)))
case("vmap_nested", lambda a: jax.vmap(jax.vmap(lambda x: x * x + 1))(a), args(f32(3, 4)))
case("grad_mlp", lambda w, x: jax.grad(lambda w: jnp.sum(jnp.tanh(x @ w) ** 2))(w),
     args(f32(5, 3, seed=1), f32(4, 5, seed=2)))
case("grad_logistic", lambda w, x, y: jax.grad(
    lambda w: jnp.mean(jax.nn.softplus(-(x @ w) * y)))(w),
     lambda: (f32(6)(), f32(10, 6, seed=1)(), np.sign(f32(10, seed=2)()).astype(np.float32)))
case("jacfwd", lambda a: jax.jacfwd(lambda x: jnp.sin(x) * x.sum())(a), args(f32(4)))
case("hessian", lambda a: jax.hessian(lambda x: jnp.sum(x ** 3))(a), args(f32(3)))
case("value_and_grad_scan", lambda a: jax.value_and_grad(
    lambda x: lax.scan(lambda c, r: (c * r, None), 1.0, x)[0])(a), args(f32(5)))

# ---- random numbers (threefry, on the device)
case("random_uniform", lambda: jax.random.uniform(jax.random.key(1), (3, 4)), args())
case("random_normal", lambda: jax.random.normal(jax.random.key(2), (5,)), args())
case("random_bits", lambda: jax.random.bits(jax.random.key(3), (6,)), args(), True)
case("random_permutation", lambda: jax.random.permutation(jax.random.key(4), 8), args(), True)

# ---- sweeps: the same ops over element types and seeded random shapes
_shape_rng = np.random.default_rng(1234)


def _shape():
    rank = int(_shape_rng.integers(0, 4))
    return tuple(int(d) for d in _shape_rng.integers(1, 6, rank))


def typed(dtype, shape, seed):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -60), min(info.max, 60)
        return lambda: _rng(seed).integers(lo, hi, shape).astype(dt)
    if dt.kind == "b":
        return lambda: _rng(seed).integers(0, 2, shape).astype(bool)
    return lambda: _rng(seed).uniform(-3, 3, shape).astype(dt)


# Narrow floats: XLA:CPU computes them in f32 without rounding between ops
# (excess precision); one rounding step of the narrow type apart is equal.
_NARROW_RTOL = {"float16": 2.0 ** -9, "bfloat16": 2.0 ** -7}
_INTS = ("int8", "int16", "int32", "uint8", "uint16", "uint32")
_FLOATS = ("float32", "float16", jnp.bfloat16)

for _dt in _INTS + _FLOATS:
    _name = np.dtype(_dt).name
    _tol = True if _name in _INTS else _NARROW_RTOL.get(_name, True)
    for _op, _f in (("add", jnp.add), ("sub", jnp.subtract),
                    ("mul", jnp.multiply), ("max", jnp.maximum),
                    ("min", jnp.minimum)):
        _s = _shape()
        case(f"sweep_{_op}_{_name}", _f,
             args(typed(_dt, _s, 1), typed(_dt, _s, 2)), _tol)
    _s = _shape()
    case(f"sweep_compare_{_name}", lambda a, b: (a < b, a == b, a >= b),
         args(typed(_dt, _s, 3), typed(_dt, _s, 4)), True)
    _s = _shape()
    case(f"sweep_select_{_name}", lambda p, a, b: jnp.where(p, a, b),
         args(typed(bool, _s, 5), typed(_dt, _s, 6), typed(_dt, _s, 7)), True)
    for _ax in (None, 0, -1):
        _s = _shape() or (3,)
        _s = _s if len(_s) else (3,)
        case(f"sweep_sum_ax{_ax}_{_name}", lambda a, ax=_ax: jnp.sum(a, axis=ax),
             args(typed(_dt, _s, 8)),
             _tol if _name in _INTS else (_NARROW_RTOL.get(_name, False)))
        case(f"sweep_max_ax{_ax}_{_name}", lambda a, ax=_ax: jnp.max(a, axis=ax),
             args(typed(_dt, _s, 9)), True)
    _s = _shape()
    case(f"sweep_transpose_reshape_{_name}", lambda a: a.T.reshape(-1),
         args(typed(_dt, _s, 10)), True)
    _s = _shape() or (2,)
    case(f"sweep_concat_{_name}", lambda a: jnp.concatenate([a, a[::-1]], axis=0)
         if a.ndim else jnp.stack([a, a]), args(typed(_dt, _s, 11)), True)

for _dt in ("float16", jnp.bfloat16):
    _name = np.dtype(_dt).name
    for _op, _f in (("exp", jnp.exp), ("tanh", jnp.tanh), ("sin", jnp.sin),
                    ("sqrt", lambda a: jnp.sqrt(jnp.abs(a))),
                    ("log", lambda a: jnp.log(jnp.abs(a) + 0.5)),
                    ("logistic", jax.nn.sigmoid)):
        case(f"sweep_{_op}_{_name}", _f, args(typed(_dt, _shape(), 12)),
             _NARROW_RTOL[_name])

for _i in range(8):  # matmuls of seeded random sizes
    _m, _k, _n = (int(d) for d in _shape_rng.integers(1, 9, 3))
    case(f"sweep_matmul_{_m}x{_k}x{_n}", jnp.matmul,
         args(f32(_m, _k, seed=20 + _i), f32(_k, _n, seed=40 + _i)))
