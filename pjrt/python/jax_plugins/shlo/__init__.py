# SPDX-License-Identifier: Apache-2.0
"""JAX plugin for shlo: registers libshlo_pjrt.so as the platform "shlo".

JAX calls initialize() when it discovers this module (the jax_plugins
namespace package, or the jax_plugins entry point of the installed
distribution).  The library is looked for, in order: $SHLO_PJRT_LIBRARY,
a libshlo_pjrt.so beside this file, then the install locations CMake uses.
"""
import glob
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_INSTALLED = ("/usr/local/lib*/shlo/libshlo_pjrt.so",
              "/usr/local/lib/*/shlo/libshlo_pjrt.so",
              "/usr/lib*/shlo/libshlo_pjrt.so",
              "/usr/lib/*/shlo/libshlo_pjrt.so")


def library_path():
    """The plugin library to load, or None when none is found."""
    env = os.environ.get("SHLO_PJRT_LIBRARY")
    if env:
        return env
    beside = os.path.join(_HERE, "libshlo_pjrt.so")
    if os.path.exists(beside):
        return beside
    for pattern in _INSTALLED:
        found = sorted(glob.glob(pattern))
        if found:
            return found[0]
    return None


def initialize():
    path = library_path()
    if path is None:
        # Say why instead of failing JAX's import: the CPU backend works on.
        import warnings
        warnings.warn("jax_plugins.shlo: libshlo_pjrt.so not found; set "
                      "SHLO_PJRT_LIBRARY to its path")
        return
    from jax._src import xla_bridge
    xla_bridge.register_plugin("shlo", library_path=path)
