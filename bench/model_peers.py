# SPDX-License-Identifier: Apache-2.0
"""numpy, PyTorch and ONNX Runtime peers of the model programs
(bench/models/*.mlir, written by bench/models/gen.py).

Each peer computes the program's math from the program's own arguments,
made as every bench program's are (SplitMix64 per argument, state 42 + k,
../shared/bench/README.md "Inputs"): f32 uniform on [-1, 1); bf16 the same
value rounded to nearest even; the int8 weights' storage the low 8 bits of
(z >> 32) % 65536 (what `shlo bench --int-range 65536` stores), their
scales read from the program's types.  Prints one JSON line, as peers.py
--json does: program, peer, median_ms, min_ms, runs, warmup, sum, l2,
version; or program, peer, error where the peer cannot run the program.

  /usr/bin/python3 -s bench/model_peers.py --program NAME --peer numpy|torch|ort
                   [--models DIR] [--runs N] [--warmup N]

Where the weights are:
  numpy, torch  arguments, as in the .mlir (layout changes a library needs,
                HWIO -> OIHW, LSTM gate matrices transposed, the 1/sqrt(fan-in)
                folded into the weights, are made once, outside the timing);
  ort           initializers of the model torch.onnx.export writes from the
                same torch module (ORT may pre-pack them: its best case); the
                int8 model is written with onnx.helper (QuantizeLinear,
                MatMulInteger, Cast, Mul), weights as an int8 initializer.
                The bottleneck's input goes to ORT as NCHW, transposed once
                outside the timing (ORT's convolutions take NCHW; torch sees
                the NHWC data as a channels_last view, free).
Peer-specific math:
  transformer_bf16  numpy: f32 GEMMs on operands rounded to bf16 (numpy has
                no bf16; exact products, f32 sums: the program's math, not
                a bf16 speed); torch: bf16 matmuls (oneDNN), results back
                to f32; ort: the same module exported (bf16 Casts and
                MatMuls), its input given as f32 values (numpy has no bf16).
  int8_linear   numpy: one f32 GEMM of the integer values (|products| <=
                2^14, 1024 of them: exact in f32) times the scales; torch:
                quantized::linear (quint8 activations, per-channel qint8
                weights) whose output is requantized to quint8 (scale
                max|y|/127, not exact: checked to 2e-2); ort: exact.
"""
import argparse
import json
import math
import os
import re
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNS = {"lstm": (10, 2), "transformer": (10, 2), "transformer_bf16": (10, 2)}
HEAD_DIM = 64  # gen.py: width 768, 12 heads


# ---- the arguments ----

def splitmix(state, n):
    """Outputs 1..n of SplitMix64 started at state (wrapping uint64)."""
    with np.errstate(over="ignore"):
        i = np.arange(1, n + 1, dtype=np.uint64)
        z = np.uint64(state) + i * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def to_bf16(x):
    """f32 values rounded to the nearest bf16 (ties to even), kept in f32."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)


def main_args(text):
    """(shape, kind, scales) of each @main argument; kind f32, bf16 or q8."""
    m = re.search(r"@main\((.*?)\)\s*->", text, re.S)
    out = []
    for dims, rest in re.findall(r"%arg\d+: tensor<((?:\d+x)*)([^,)>]*(?:<[^>]*>)?)>", m.group(1)):
        shape = tuple(int(d) for d in dims.split("x") if d)
        if rest.startswith("!quant.uniform<i8"):
            scales = [float(s) for s in re.search(r"\{([^}]*)\}", rest).group(1).split(",")]
            out.append((shape, "q8", np.array(scales, dtype=np.float32)))
        else:
            out.append((shape, rest, None))
    return out


def make_args(text):
    args = []
    for k, (shape, kind, scales) in enumerate(main_args(text)):
        z = splitmix(42 + k, int(np.prod(shape)))
        if kind == "q8":
            q = ((z >> np.uint64(32)) % np.uint64(65536)).astype(np.uint8).view(np.int8)
            args.append((q.reshape(shape), scales))
            continue
        x = ((z >> np.uint64(40)).astype(np.float64) * 2.0 ** -23 - 1.0).astype(np.float32)
        args.append(to_bf16(x).reshape(shape) if kind == "bf16" else x.reshape(shape))
    return args


def x_scale(text):
    return float(re.search(r"uniform_quantize .*-> tensor<\S*?!quant\.uniform<i8:f32, ([^>]+)>", text).group(1))


# ---- numpy ----

def np_ln(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = np.square(x - m).mean(-1, keepdims=True)
    return (x - m) * (1.0 / np.sqrt(v + np.float32(1e-5))) * g + b


def np_gelu(x):
    return x * (0.5 * (1 + np.tanh(np.float32(math.sqrt(2 / math.pi)) * (x + np.float32(0.044715) * x * x * x))))


def np_encoder(a, rnd):
    x, g1, c1, wqkv, bqkv, wo, bo, g2, c2, w1, b1, w2, b2 = a
    B, S, D = x.shape
    H = D // HEAD_DIM
    lin = lambda h, w, b: (rnd(h) @ w) * np.float32(1 / math.sqrt(w.shape[0])) + b
    h = np_ln(x, g1, c1)
    qkv = lin(h, wqkv, bqkv).reshape(B, S, 3, H, HEAD_DIM)
    q, k, v = (rnd(qkv[:, :, i].transpose(0, 2, 1, 3)) for i in range(3))  # B,H,S,dh
    s = (q @ k.transpose(0, 1, 3, 2)) * np.float32(1 / math.sqrt(HEAD_DIM))
    e = np.exp(s - s.max(-1, keepdims=True))
    p = e / e.sum(-1, keepdims=True)
    att = (rnd(p) @ v).transpose(0, 2, 1, 3).reshape(B, S, D)
    x = x + lin(att, wo, bo)
    h = np_ln(x, g2, c2)
    return x + lin(np_gelu(lin(h, w1, b1)), w2, b2)


def np_conv(x, w, pad):
    """NHWC x HWIO, stride 1: im2col (for 3x3) and one GEMM."""
    kh, kw, ci, co = w.shape
    if kh == 1:
        return x @ w.reshape(ci, co)
    N, Hh, W, _ = x.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    cols = np.empty((N, Hh, W, kh, kw, ci), dtype=np.float32)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, :, i, j] = xp[:, i:i + Hh, j:j + W]
    return cols.reshape(N, Hh, W, kh * kw * ci) @ w.reshape(-1, co)


def np_bottleneck(a):
    x, w1, b1, w2, b2, w3, b3 = a
    sc = lambda w: np.float32(1 / math.sqrt(w.shape[0] * w.shape[1] * w.shape[2]))
    h = np.maximum(np_conv(x, w1, 0) * sc(w1) + b1, 0)
    h = np.maximum(np_conv(h, w2, 1) * sc(w2) + b2, 0)
    return np.maximum(x + (np_conv(h, w3, 0) * sc(w3) + b3), 0)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def np_lstm(a):
    xs, wx, wh, b = a
    T, B, I = xs.shape
    Hd = wh.shape[0]
    xw = (xs @ wx) * np.float32(1 / math.sqrt(I)) + b
    h = np.zeros((B, Hd), np.float32)
    c = np.zeros((B, Hd), np.float32)
    s = np.float32(1 / math.sqrt(Hd))
    for t in range(T):
        g = xw[t] + (h @ wh) * s
        i, f, gg, o = np.split(g, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(gg)
        h = sigmoid(o) * np.tanh(c)
    return h


def numpy_peer(name, args, text):
    if name == "transformer":
        return lambda: np_encoder(args, lambda t: t), "numpy " + np.__version__
    if name == "transformer_bf16":
        return lambda: np_encoder(args, to_bf16), "numpy " + np.__version__ + " (f32 GEMMs of bf16-rounded operands)"
    if name == "bottleneck":
        return lambda: np_bottleneck(args), "numpy " + np.__version__
    if name == "lstm":
        return lambda: np_lstm(args), "numpy " + np.__version__
    if name == "linear_f32":
        x, w = args
        return lambda: x @ w, "numpy " + np.__version__
    if name == "int8_linear":
        x, (wq, ws) = args
        sx = np.float32(x_scale(text))
        wf = wq.astype(np.float32)          # once: the integer values, exact in f32
        scale = sx * ws                     # f32, as the program's accumulator type's scales

        def run():
            xq = np.clip(np.rint(x / sx), -128, 127)
            return (xq @ wf) * scale
        return run, "numpy " + np.__version__ + " (integer GEMM as an exact f32 GEMM)"
    raise KeyError(name)


# ---- torch ----

def torch_modules(name, args, text):
    """A torch.nn.Module computing the program (weights as its parameters or
    buffers, prepared once) and its input tensors."""
    import torch
    import torch.nn.functional as F
    T = lambda a: torch.from_numpy(np.ascontiguousarray(a))

    class Encoder(torch.nn.Module):
        def __init__(self, a, low):
            super().__init__()
            names = "g1 c1 wqkv bqkv wo bo g2 c2 w1 b1 w2 b2".split()
            for n, v in zip(names, a[1:]):
                t = T(v)
                if n.startswith("w"):      # F.linear wants (out, in); scaled once
                    t = (t * (1 / math.sqrt(t.shape[0]))).t().contiguous().to(low)
                self.register_buffer(n, t)
            self.low = low

        def lin(self, h, w, b):
            return F.linear(h.to(self.low), w).float() + b

        def forward(self, x):
            B, S, D = x.shape
            H = D // HEAD_DIM
            x = x.float()
            h = F.layer_norm(x, (D,), self.g1, self.c1, 1e-5)
            qkv = self.lin(h, self.wqkv, self.bqkv).view(B, S, 3, H, HEAD_DIM).permute(2, 0, 3, 1, 4)
            q, k, v = qkv[0].to(self.low), qkv[1].to(self.low), qkv[2].to(self.low)
            s = torch.matmul(q, k.transpose(-1, -2)).float() * (1 / math.sqrt(HEAD_DIM))
            p = torch.softmax(s, dim=-1)
            att = torch.matmul(p.to(self.low), v).float().transpose(1, 2).reshape(B, S, D)
            x = x + self.lin(att, self.wo, self.bo)
            h = F.layer_norm(x, (D,), self.g2, self.c2, 1e-5)
            return x + self.lin(F.gelu(self.lin(h, self.w1, self.b1), approximate="tanh"), self.w2, self.b2)

    class Bottleneck(torch.nn.Module):
        def __init__(self, a):
            super().__init__()
            for i in range(3):
                w = T(a[1 + 2 * i])
                fan = w.shape[0] * w.shape[1] * w.shape[2]
                self.register_buffer(f"w{i}", (w.permute(3, 2, 0, 1) / math.sqrt(fan)).contiguous(
                    memory_format=torch.channels_last))
                self.register_buffer(f"b{i}", T(a[2 + 2 * i]))

        def forward(self, x):   # x: NHWC data, seen as a channels_last NCHW tensor
            h = F.relu(F.conv2d(x, self.w0, self.b0))
            h = F.relu(F.conv2d(h, self.w1, self.b1, padding=1))
            return F.relu(x + F.conv2d(h, self.w2, self.b2))

    class LSTM(torch.nn.Module):
        def __init__(self, a):
            super().__init__()
            xs, wx, wh, b = a
            self.lstm = torch.nn.LSTM(wx.shape[0], wh.shape[0])
            with torch.no_grad():    # torch's gate order is the program's: i, f, g, o
                self.lstm.weight_ih_l0.copy_(T(wx).t() / math.sqrt(wx.shape[0]))
                self.lstm.weight_hh_l0.copy_(T(wh).t() / math.sqrt(wh.shape[0]))
                self.lstm.bias_ih_l0.copy_(T(b))
                self.lstm.bias_hh_l0.zero_()

        def forward(self, xs):
            return self.lstm(xs)[1][0]     # h_n: 1 x B x H

    class Linear(torch.nn.Module):
        def __init__(self, w):
            super().__init__()
            self.register_buffer("w", T(w))

        def forward(self, x):
            return torch.matmul(x, self.w)

    if name in ("transformer", "transformer_bf16"):
        low = torch.bfloat16 if name.endswith("bf16") else torch.float32
        x = T(args[0])
        return Encoder(args, low), (x.to(low),)
    if name == "bottleneck":
        x = T(args[0]).permute(0, 3, 1, 2)    # a view: channels_last NCHW
        return Bottleneck(args), (x,)
    if name == "lstm":
        return LSTM(args), (T(args[0]),)
    if name == "linear_f32":
        return Linear(args[1]), (T(args[0]),)
    raise KeyError(name)


def torch_peer(name, args, text):
    import torch
    torch.set_num_threads(2)
    ver = "torch " + torch.__version__
    if name == "int8_linear":
        x, (wq, ws) = args
        sx = x_scale(text)
        torch.backends.quantized.engine = "onednn"
        w = torch._make_per_channel_quantized_tensor(
            torch.from_numpy(np.ascontiguousarray(wq.T)), torch.from_numpy(ws.astype(np.float64)),
            torch.zeros(len(ws), dtype=torch.int64), 0)
        packed = torch.ops.quantized.linear_prepack(w, None)
        ref, _ = numpy_peer(name, args, text)
        out_scale = float(np.abs(ref()).max()) / 127
        xt = torch.from_numpy(x)

        def run():
            xq = torch.quantize_per_tensor(xt, sx, 128, torch.quint8)
            return torch.ops.quantized.linear(xq, packed, out_scale, 128).dequantize()
        return run, ver + " (quantized::linear, onednn, output requantized to quint8)"
    mod, inputs = torch_modules(name, args, text)
    mod.eval()

    def run():
        with torch.no_grad():
            return mod(*inputs)
    return run, ver


# ---- ONNX Runtime ----

def ort_model(name, args, text, path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    if name == "int8_linear":
        x, (wq, ws) = args
        sx = x_scale(text)
        inits = [numpy_helper.from_array(np.array(sx, np.float32), "sx"),
                 numpy_helper.from_array(np.array(0, np.int8), "zp"),
                 numpy_helper.from_array(wq, "wq"),
                 numpy_helper.from_array((np.float32(sx) * ws).astype(np.float32), "scale")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "sx", "zp"], ["xq"]),
                 helper.make_node("MatMulInteger", ["xq", "wq", "zp", "zp"], ["acc"]),
                 helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
                 helper.make_node("Mul", ["accf", "scale"], ["y"])]
        g = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
        m.ir_version = 8
        onnx.save(m, path)
        return {"x": x}
    import io
    import warnings
    import torch
    mod, inputs = torch_modules(name, args, text)
    mod.eval()
    # the bf16 input's values as f32 (the module starts with x.float()):
    # numpy, hence ORT's Python binding, has no bf16 arrays
    inputs = tuple(t.float() for t in inputs)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(mod, inputs, buf, opset_version=17, do_constant_folding=True,
                          input_names=["x"], output_names=["y"])
    with open(path, "wb") as fh:
        fh.write(buf.getvalue())
    return {"x": inputs[0].contiguous().numpy()}


def ort_peer(name, args, text):
    import onnxruntime as ort
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"shlo-model-{os.getpid()}-{name}.onnx")
    try:
        feeds = ort_model(name, args, text, path)
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = 2, 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    finally:
        if os.path.exists(path):
            os.unlink(path)
    return (lambda: sess.run(None, feeds)[0]), "onnxruntime " + ort.__version__


PEERS = {"numpy": numpy_peer, "torch": torch_peer, "ort": ort_peer}


def as_numpy(out):
    if hasattr(out, "detach"):
        return out.detach().float().numpy()
    return np.asarray(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--program", required=True)
    ap.add_argument("--peer", required=True, choices=sorted(PEERS))
    ap.add_argument("--models", default=os.path.join(HERE, "models"))
    ap.add_argument("--runs", type=int)
    ap.add_argument("--warmup", type=int)
    a = ap.parse_args()
    text = open(os.path.join(a.models, a.program + ".mlir")).read()
    args = make_args(text)
    try:
        run, version = PEERS[a.peer](a.program, args, text)
        runs, warmup = RUNS.get(a.program, (20, 3))
        runs = a.runs or runs
        warmup = a.warmup if a.warmup is not None else warmup
        out = None
        for _ in range(warmup):
            out = None
            out = run()
        times = []
        for _ in range(runs):
            out = None   # dropped before the next call, as peers.py does
            t0 = time.perf_counter()
            out = run()
            times.append((time.perf_counter() - t0) * 1e3)
    except Exception as e:  # the table says why this peer has no figure
        print(json.dumps({"program": a.program, "peer": a.peer,
                          "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:200]}))
        return
    r = as_numpy(out).astype(np.float64)
    print(json.dumps({"program": a.program, "peer": a.peer,
                      "median_ms": round(statistics.median(times), 4), "min_ms": round(min(times), 4),
                      "runs": runs, "warmup": warmup, "sum": float(r.sum()),
                      "l2": float(np.sqrt((r * r).sum())), "version": version}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
