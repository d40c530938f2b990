"""memlab's store for agents over the Model Context Protocol (official ``mcp`` SDK, the ``mcp``
extra): tools and resources (:mod:`memlab.mcp.server`), served over stdio or HTTP on 127.0.0.1
(:mod:`memlab.mcp.http`) by ``memlab mcp`` (:mod:`memlab.mcp.cli`).
"""
