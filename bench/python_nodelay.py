"""The Python reference service with one fix: TCP_NODELAY on its connections.

kindgi 0.1.10's `serve()` creates its listening socket as
`socket.socket(family, SOCK_STREAM)`, protocol 0. asyncio sets TCP_NODELAY
only on sockets whose protocol is IPPROTO_TCP, so the accepted connections
keep Nagle's algorithm; uvicorn writes a response's headers and body in two
writes, and the body then waits for the client's delayed ACK (~40 ms on
Linux). This runs the same `serve` with the socket created as IPPROTO_TCP,
so the benchmark can show Python without that stall too.

    python python_nodelay.py --index index.json --module-root pack --host 127.0.0.1
"""

import socket
import sys
import types

import kindgi.pack.serve as serve

patched = types.ModuleType("socket")
patched.__dict__.update(socket.__dict__)
patched.socket = lambda family, kind: socket.socket(family, kind, socket.IPPROTO_TCP)
serve.socket = patched  # type: ignore[attr-defined]

from kindgi.pack.__main__ import main  # noqa: E402

sys.exit(main(["serve", *sys.argv[1:]]))
