# SPDX-License-Identifier: Apache-2.0
"""The oracle suite: every function of jax_cases.py jitted on shlo and on
JAX's CPU backend, results compared (bit for bit where `exact`, else
within RTOL/ATOL).  Known failures are listed in KNOWN with the reason;
the test fails when a case outside KNOWN fails (a regression) and reports
a KNOWN case that now passes (so the list can shrink).  Skips (77) when
jax is not importable.

Usage: test_jax_oracle.py PATH/TO/libshlo_pjrt.so PATH/TO/pjrt/python
"""
import os
import sys

SKIP = 77
RTOL, ATOL = 2e-5, 2e-6

# name -> why it fails on shlo today.
KNOWN = {
    "linalg_eigh_values": "JAX has no lowering of eigh for a plugin "
                          "platform (only cpu/gpu/tpu register one)",
    "linalg_svd_values": "the same: JAX lowers svd through eigh",
    "linalg_qr": "JAX emits custom_call @Qr, which the engine does not run",
}


def compare(got, want, exact):
    import numpy as np
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        raise AssertionError(f"{got.dtype}{got.shape} != {want.dtype}{want.shape}")
    if exact is not True and exact is not False:  # a relative tolerance
        np.testing.assert_allclose(got.astype(np.float64),
                                   want.astype(np.float64), rtol=exact)
    elif exact:
        if got.dtype.kind == "f":
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            if not same.all():
                raise AssertionError(f"not bit-exact: {got} != {want}")
        else:
            np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64),
                                   rtol=RTOL, atol=ATOL)


def main():
    lib, pkg = sys.argv[1], sys.argv[2]
    os.environ["SHLO_PJRT_LIBRARY"] = lib
    os.environ["JAX_PLATFORMS"] = "shlo,cpu"
    sys.path.insert(0, pkg)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        import jax
        import numpy as np  # noqa: F401
    except ImportError as e:
        print(f"SKIP: jax is not importable ({e})")
        return SKIP
    from jax_cases import CASES
    shlo, cpu = jax.devices("shlo")[0], jax.devices("cpu")[0]
    failed, fixed = {}, []
    for name, (fn, build, exact) in CASES.items():
        inputs = build()
        try:
            # Inputs committed to each device; jit runs where they are.
            # (jit(device=...) would add a Shardy mesh, which shlo's
            # artifact reader does not take: see KNOWN-style note in
            # docs/pjrt.md.)
            fn_jit = jax.jit(fn)
            got = fn_jit(*jax.device_put(inputs, shlo))
            want = fn_jit(*jax.device_put(inputs, cpu))
            jax.tree.map(lambda g, w: compare(g, w, exact), got, want)
            if name in KNOWN:
                fixed.append(name)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            failed[name] = f"{type(e).__name__}: {first[:300]}"
    total = len(CASES)
    passed = total - len(failed)
    x64 = " (64-bit types on)" if jax.config.jax_enable_x64 else ""
    print(f"oracle{x64}: {passed}/{total} functions agree with JAX's CPU "
          f"backend ({100.0 * passed / total:.1f}%)")
    for name, why in sorted(failed.items()):
        tag = "known" if name in KNOWN else "NEW"
        print(f"  {tag} {name}: {why}")
    for name in fixed:
        print(f"  now passes, remove from KNOWN: {name}")
    new = [n for n in failed if n not in KNOWN]
    return 1 if new else 0


if __name__ == "__main__":
    sys.exit(main())
