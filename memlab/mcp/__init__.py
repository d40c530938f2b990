"""memlab's store for agents over the Model Context Protocol (official ``mcp`` SDK).

- :func:`memlab.mcp.server.build_server` - the tools and resources over a MemoryStore;
- :mod:`memlab.mcp.http` - streamable HTTP on 127.0.0.1 with a bearer token;
- :mod:`memlab.mcp.cli` - the ``memlab mcp`` command.

Needs the ``mcp`` extra (``pip install memlab[mcp]``).
"""
