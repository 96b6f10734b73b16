# SPDX-License-Identifier: Apache-2.0
"""Issue #13, outfeed for a browser: GET .../outfeed with
`Accept: text/event-stream` answers `text/event-stream`, one `data:` event
per value in order (the JSON tensor form), then an `end` event whose data
is the execution's final state.  Without that Accept the same stream is
NDJSON.

usage: stream_sse.py SHLO_SERVER"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from srvtest import Server, check, finish  # noqa: E402

# Outfeeds [1, 2], [2, 4], [3, 6]; returns [3, 6].
THREE = """func.func @main() -> tensor<2xi32> {
  %t0 = "stablehlo.after_all"() : () -> !stablehlo.token
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %t1 = "stablehlo.outfeed"(%a, %t0) : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  %b = stablehlo.add %a, %a : tensor<2xi32>
  %t2 = "stablehlo.outfeed"(%b, %t1) : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  %c = stablehlo.add %b, %a : tensor<2xi32>
  %t3 = "stablehlo.outfeed"(%c, %t2) : (tensor<2xi32>, !stablehlo.token) -> !stablehlo.token
  return %c : tensor<2xi32>
}
"""
WANT = [[1, 2], [2, 4], [3, 6]]


def start(srv):
    st, ans = srv.post("/v1/executions", {"program": THREE})
    check(st == 202, f"started: {st} {ans}")
    return ans["id"]


def events(text):
    """(event name, data) of each event of a text/event-stream body."""
    out = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[len("event: "):]
            elif line.startswith("data: "):
                data.append(line[len("data: "):])
        out.append((name, "\n".join(data)))
    return out


srv = Server(sys.argv[1])
xid = start(srv)
st, hdr, body = srv.request("GET", f"/v1/executions/{xid}/outfeed",
                            headers={"Accept": "text/event-stream"})
ctype = {k.lower(): v for k, v in hdr.items()}.get("content-type", "")
check(st == 200 and ctype.startswith("text/event-stream"),
      f"an event stream: {st} {ctype}")
ev = events(body.decode())
check(len(ev) == 4, f"three values and the end: {ev}")
vals = [json.loads(d).get("data") for n, d in ev[:3] if n == "message"]
check(vals == WANT, f"the values in order: {vals}")
end = ev[-1] if ev else ("", "{}")
check(end[0] == "end" and json.loads(end[1]).get("state") == "succeeded" and
      json.loads(end[1]).get("outputs", [{}])[0].get("data") == WANT[-1],
      f"the last event is the final state: {end}")

# The same stream without the Accept header: NDJSON lines.
xid = start(srv)
st, hdr, body = srv.request("GET", f"/v1/executions/{xid}/outfeed")
ctype = {k.lower(): v for k, v in hdr.items()}.get("content-type", "")
lines = [json.loads(l) for l in body.decode().splitlines() if l.strip()]
check(st == 200 and ctype.startswith("application/x-ndjson") and
      [l.get("data") for l in lines[:3]] == WANT and
      lines[-1].get("state") == "succeeded",
      f"NDJSON by default: {st} {ctype} {lines}")
check(srv.stop() == 0, "stops cleanly")
finish("stream_sse")
