"""The server's listening socket: accepted connections send each response at once (TCP_NODELAY).

Without it a keep-alive client waits ~40 ms per request for its own delayed ACK: the HTTP catalog
took 261 s instead of ~70 s. Checked on the socket asyncio hands the protocol, not by timing.
"""

from __future__ import annotations

import asyncio
import socket

from turngate.implementations.serve.main import open_listener


def test_connections_accepted_by_asyncio_have_nagle_off() -> None:
    async def accept_one() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        listener = open_listener("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        async with server:
            _reader, writer = await asyncio.open_connection("127.0.0.1", listener.getsockname()[1])
            try:
                return await asyncio.wait_for(seen, 30)
            finally:
                writer.close()

    assert asyncio.run(accept_one()) != 0
