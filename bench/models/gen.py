# SPDX-License-Identifier: Apache-2.0
"""Writes the model bench programs (bench/models/*.mlir) with jax.export.

Each model is a JAX function whose weights are arguments (the peers in
bench/model_peers.py compute the same math from the same arguments).
Arguments come, as for every bench program, from SplitMix64 streams on
[-1, 1) (../shared/bench/README.md, "Inputs"); a layer that multiplies by
weights of that size would grow its activations by sqrt(fan-in) each
time, so every product is scaled by 1/sqrt(fan-in) after the GEMM (a
scalar multiply that fuses with the bias), which keeps softmax, tanh and
the sigmoids in their sensitive range, where a wrong result shows.

  python3 bench/models/gen.py [--tiny] [--out DIR]

--tiny writes the same programs at toy sizes into bench/models/tiny
(tests/bench_models.py runs them and compares with the numpy peer).  Needs jax; the
int8 program is written by hand (JAX has no uniform quantized types): it
is StableHLO's static int8 linear as a quantizing exporter writes it.
"""
import argparse
import math
import os
import re

import jax
import jax.numpy as jnp
from jax import export, lax

F32, BF16 = jnp.float32, jnp.bfloat16

# ---- sizes (full, tiny) ----
FULL = dict(batch=8, seq=128, width=768, heads=12, mlp=3072,
            rn_batch=8, rn_hw=56, rn_c=256, rn_mid=64,
            lstm_steps=100, lstm_batch=32, lstm_in=512, lstm_hidden=512,
            q_batch=64, q_in=1024, q_out=4096)
TINY = dict(batch=1, seq=4, width=128, heads=2, mlp=64,   # head width 64 as FULL's
            rn_batch=1, rn_hw=6, rn_c=8, rn_mid=4,
            lstm_steps=3, lstm_batch=2, lstm_in=4, lstm_hidden=4,
            q_batch=2, q_in=8, q_out=4)


def layer_norm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def linear(h, w, b, acc=None):
    """h @ w / sqrt(fan-in) + b; acc: the accumulation type of a bf16 GEMM."""
    y = jnp.matmul(h, w, preferred_element_type=acc) if acc else h @ w
    return y * (1.0 / math.sqrt(w.shape[0])) + b


def encoder(s, bf16):
    """Pre-LN transformer encoder layer; bf16: the GEMM operands in bf16,
    accumulated in f32, everything else in f32 (what mixed precision does)."""
    B, S, D, H = s["batch"], s["seq"], s["width"], s["heads"]
    dh = D // H
    low = (lambda t: t.astype(BF16)) if bf16 else (lambda t: t)
    acc = F32 if bf16 else None

    def f(x, ln1_g, ln1_b, w_qkv, b_qkv, w_o, b_o, ln2_g, ln2_b, w_1, b_1, w_2, b_2):
        x = x.astype(F32)
        h = layer_norm(x, ln1_g, ln1_b)
        qkv = linear(low(h), w_qkv, b_qkv, acc)            # B,S,3D
        q, k, v = jnp.split(qkv.reshape(B, S, 3, H, dh), 3, axis=2)
        q, k, v = (low(t.reshape(B, S, H, dh)) for t in (q, k, v))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k, preferred_element_type=acc)
        p = jax.nn.softmax(scores * (1.0 / math.sqrt(dh)), axis=-1)
        a = jnp.einsum("bhqk,bkhd->bqhd", low(p), v, preferred_element_type=acc)
        x = x + linear(low(a.reshape(B, S, D)), w_o, b_o, acc)
        h = layer_norm(x, ln2_g, ln2_b)
        m = jax.nn.gelu(linear(low(h), w_1, b_1, acc), approximate=True)
        return x + linear(low(m), w_2, b_2, acc)

    wt = BF16 if bf16 else F32
    args = [((B, S, D), wt), ((D,), F32), ((D,), F32), ((D, 3 * D), wt), ((3 * D,), F32),
            ((D, D), wt), ((D,), F32), ((D,), F32), ((D,), F32),
            ((D, s["mlp"]), wt), ((s["mlp"],), F32), ((s["mlp"], D), wt), ((D,), F32)]
    return f, args


def bottleneck(s):
    """ResNet bottleneck, NHWC/HWIO, batch norm folded into the biases."""
    N, HW, C, M = s["rn_batch"], s["rn_hw"], s["rn_c"], s["rn_mid"]

    def conv(x, w, b, pad):
        y = lax.conv_general_dilated(x, w, (1, 1), pad, dimension_numbers=("NHWC", "HWIO", "NHWC"))
        fan_in = w.shape[0] * w.shape[1] * w.shape[2]
        return y * (1.0 / math.sqrt(fan_in)) + b

    def f(x, w1, b1, w2, b2, w3, b3):
        h = jax.nn.relu(conv(x, w1, b1, "VALID"))
        h = jax.nn.relu(conv(h, w2, b2, ((1, 1), (1, 1))))
        return jax.nn.relu(x + conv(h, w3, b3, "VALID"))

    args = [((N, HW, HW, C), F32), ((1, 1, C, M), F32), ((M,), F32),
            ((3, 3, M, M), F32), ((M,), F32), ((1, 1, M, C), F32), ((C,), F32)]
    return f, args


def lstm(s):
    """LSTM layer (gates i, f, g, o), time-major; the input projection of all
    steps is one GEMM before the loop, the recurrent one a GEMM per step of
    a stablehlo.while (lax.fori_loop).  Result: the last hidden state."""
    T, B, I, Hd = s["lstm_steps"], s["lstm_batch"], s["lstm_in"], s["lstm_hidden"]

    def f(xs, w_x, w_h, b):
        xw = (xs @ w_x) * (1.0 / math.sqrt(I)) + b      # T,B,4H

        def step(t, hc):
            h, c = hc
            g = lax.dynamic_index_in_dim(xw, t, keepdims=False) + (h @ w_h) * (1.0 / math.sqrt(Hd))
            i, fg, gg, o = jnp.split(g, 4, axis=-1)
            c = jax.nn.sigmoid(fg) * c + jax.nn.sigmoid(i) * jnp.tanh(gg)
            return jax.nn.sigmoid(o) * jnp.tanh(c), c

        zero = jnp.zeros((B, Hd), F32)
        h, _ = lax.fori_loop(0, T, step, (zero, zero))
        return h

    args = [((T, B, I), F32), ((I, 4 * Hd), F32), ((Hd, 4 * Hd), F32), ((4 * Hd,), F32)]
    return f, args


def linear_f32(s):
    """The f32 counterpart of int8_linear: x @ w, the same sizes."""
    def f(x, w):
        return x @ w
    return f, [((s["q_batch"], s["q_in"]), F32), ((s["q_in"], s["q_out"]), F32)]


# int8: per-tensor activations (scale 2^-7: [-1, 1) maps onto the storage
# range), per-channel weights (output channel j: 2^-7 * (1 + (j % 4) / 4),
# exact in f32).  Shared with model_peers.py.
X_SCALE = 2.0 ** -7


def w_scale(j):
    return 2.0 ** -7 * (1 + (j % 4) / 4)


def int8_linear_text(s):
    """uniform_quantize x, dot_general i8 x i8 -> i32 (scales multiplied),
    uniform_dequantize: what a static-quantization exporter writes."""
    Bq, I, O = s["q_batch"], s["q_in"], s["q_out"]
    ws = ", ".join(repr(w_scale(j)) for j in range(O))
    acc = ", ".join(repr(X_SCALE * w_scale(j)) for j in range(O))
    xq = f"tensor<{Bq}x{I}x!quant.uniform<i8:f32, {X_SCALE!r}>>"
    wq = f"tensor<{I}x{O}x!quant.uniform<i8:f32:1, {{{ws}}}>>"
    yq = f"tensor<{Bq}x{O}x!quant.uniform<i32:f32:1, {{{acc}}}>>"
    return (
        "module @jit_int8_linear attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
        f"  func.func public @main(%arg0: tensor<{Bq}x{I}xf32>, %arg1: {wq}) -> (tensor<{Bq}x{O}xf32>) {{\n"
        f"    %0 = stablehlo.uniform_quantize %arg0 : (tensor<{Bq}x{I}xf32>) -> {xq}\n"
        f"    %1 = stablehlo.dot_general %0, %arg1, contracting_dims = [1] x [0] : ({xq}, {wq}) -> {yq}\n"
        f"    %2 = stablehlo.uniform_dequantize %1 : ({yq}) -> tensor<{Bq}x{O}xf32>\n"
        f"    return %2 : tensor<{Bq}x{O}xf32>\n"
        "  }\n}\n")


def exported_text(f, args, name):
    specs = [jax.ShapeDtypeStruct(shape, dt) for shape, dt in args]
    text = export.export(jax.jit(f, inline=True))(*specs).mlir_module()
    # the module name and the locations name this script's lines; drop the
    # locations so that editing a comment here does not rewrite the programs
    text = re.sub(r"^#loc.*\n", "", text, flags=re.M)
    text = re.sub(r" loc\((?:[^()]|\([^()]*\))*\)", "", text)
    return text.replace("module @jit_f ", f"module @jit_{name} ")


def programs(s):
    yield "transformer", exported_text(*encoder(s, False), "transformer")
    yield "transformer_bf16", exported_text(*encoder(s, True), "transformer_bf16")
    yield "bottleneck", exported_text(*bottleneck(s), "bottleneck")
    yield "lstm", exported_text(*lstm(s), "lstm")
    yield "linear_f32", exported_text(*linear_f32(s), "linear_f32")
    yield "int8_linear", int8_linear_text(s)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--tiny", action="store_true")
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    a.out = a.out or (os.path.join(here, "tiny") if a.tiny else here)
    os.makedirs(a.out, exist_ok=True)
    for name, text in programs(TINY if a.tiny else FULL):
        with open(os.path.join(a.out, name + ".mlir"), "w") as fh:
            fh.write(text)
        print(name)


if __name__ == "__main__":
    main()
