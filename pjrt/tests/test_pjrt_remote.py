# SPDX-License-Identifier: Apache-2.0
"""The plugin's remote mode against a running shlo-server: the C harness
(everything it checks in process, now compiled and executed by the
server, with the caller's token), a token the server refuses
(UNAUTHENTICATED at client creation), then JAX itself (test_jax.py and
the oracle suite; their own skip when jax is missing is reported).

Usage: test_pjrt_remote.py SHLO_SERVER HARNESS PLUGIN FIXTURE PYDIR --jax|--no-jax
(--no-jax: a sanitizer build, whose plugin python3 cannot load)
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "server"))
from srvtest import Server, check, finish  # noqa: E402

TOKEN = "pjrt-remote-test-token-0123456789"


def run(cmd, env, what, ok=(0,)):
    p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                       timeout=600)
    out = (p.stdout + p.stderr).strip()
    print(f"--- {what}: rc {p.returncode}\n{out[-3000:]}")
    check(p.returncode in ok, f"{what}: rc {p.returncode}")
    return p.returncode


def main():
    server, harness, plugin, fixture, pydir, jax_flag = sys.argv[1:7]
    with tempfile.NamedTemporaryFile("w", suffix=".tokens", delete=False) as f:
        f.write(f"pjrt {TOKEN}\n")
        tokens = f.name
    srv = Server(server, "--tokens", tokens, binary_port=True)
    try:
        env = dict(os.environ, SHLO_PJRT_SERVER=f"shlo://127.0.0.1:{srv.bport}",
                   SHLO_PJRT_TOKEN=TOKEN)
        run([harness, plugin, fixture], env, "harness, remote")
        bad = dict(env, SHLO_PJRT_TOKEN="not-a-token")
        run([harness, plugin, fixture, "--expect-refused"], bad,
            "harness, refused token")
        # The executions ran on the server, as the token's holder.
        log = srv.log()
        check("protocol=binary type=execute" in log and "token=pjrt" in log,
              "the server ran the harness's executions for token pjrt")
        if jax_flag == "--no-jax":
            print("JAX parts off: a sanitizer build's plugin cannot be "
                  "loaded into python3")
        for script in (("test_jax.py", "test_jax_oracle.py")
                       if jax_flag == "--jax" else ()):
            rc = run([sys.executable, os.path.join(HERE, script), plugin, pydir],
                     env, f"{script}, remote", ok=(0, 77))
            if rc == 77:
                print(f"{script}: skipped (jax missing), remote JAX unchecked")
    finally:
        srv.stop()
        os.unlink(tokens)
    finish("test_pjrt_remote")


if __name__ == "__main__":
    main()
