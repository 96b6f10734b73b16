# SPDX-License-Identifier: Apache-2.0
"""JAX on shlo through the jax_plugins package, with JAX's CPU backend as
the oracle.  Skips (exit 77) when jax is not importable.

Usage: test_jax.py PATH/TO/libshlo_pjrt.so PATH/TO/pjrt/python
"""
import os
import sys

SKIP = 77


def main():
    lib, pkg = sys.argv[1], sys.argv[2]
    os.environ["SHLO_PJRT_LIBRARY"] = lib
    os.environ["JAX_PLATFORMS"] = "shlo,cpu"
    sys.path.insert(0, pkg)
    try:
        import jax
        import jax.numpy as jnp
        import numpy as np
    except ImportError as e:
        print(f"SKIP: jax is not importable ({e})")
        return SKIP
    shlo = jax.devices("shlo")
    cpu = jax.devices("cpu")[0]
    print(jax.devices())
    assert len(shlo) == 1 and shlo[0].platform == "shlo", shlo
    assert jax.default_backend() == "shlo", jax.default_backend()

    def f(x):
        return jnp.sin(x) @ x.T

    ones = jnp.ones((4, 4))
    got = jax.jit(f)(ones)
    assert got.devices() == {shlo[0]}, got.devices()
    want = jax.jit(f)(jax.device_put(ones, cpu))
    print(got)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)

    x = np.random.default_rng(0).standard_normal((4, 4)).astype(np.float32)
    got = jax.jit(f)(x)
    want = jax.jit(f)(jax.device_put(x, cpu))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5,
                               atol=1e-6)
    # Shardings on the one device: a mesh, in/out shardings, a sharding
    # constraint (Shardy annotations the engine reads as identities).
    from jax.sharding import AxisType, NamedSharding, PartitionSpec as P
    mesh = jax.make_mesh((1,), ("x",), axis_types=(AxisType.Auto,),
                         devices=shlo)
    s = NamedSharding(mesh, P("x"))
    g = jax.jit(lambda a: jax.lax.with_sharding_constraint(jnp.sin(a) * 2, s) + 1,
                in_shardings=s, out_shardings=s)
    v = np.arange(8, dtype=np.float32)
    np.testing.assert_allclose(np.asarray(g(jax.device_put(v, s))),
                               np.asarray(jax.jit(lambda a: jnp.sin(a) * 2 + 1)(
                                   jax.device_put(v, cpu))), rtol=1e-6)

    # A compiled function serialized and loaded back runs the same.
    from jax.experimental import serialize_executable as se
    compiled = jax.jit(f).lower(x).compile()
    blob, in_tree, out_tree = se.serialize(compiled)
    again = se.deserialize_and_load(blob, in_tree, out_tree)
    np.testing.assert_array_equal(np.asarray(again(x)), np.asarray(compiled(x)))
    print("jax on shlo: sin(x) @ x.T matches the CPU backend; a serialized "
          "executable loads back")
    return 0


if __name__ == "__main__":
    sys.exit(main())
