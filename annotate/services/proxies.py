"""Which client a request comes from, when a reverse proxy may stand in between.

Kept apart from the throttle (no database imports) so that ``h2h serve`` can check its
``--trusted-proxy`` option without loading the database layer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

__all__ = ["parse_trusted", "client_address", "Network"]

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def parse_trusted(spec: str | Sequence[str] | None) -> tuple[Network, ...]:
    """Trusted proxies as written for ``h2h serve --trusted-proxy``: addresses or networks,
    comma-separated (``127.0.0.1``, ``10.0.0.0/8``). Raises ValueError naming a bad entry."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec or ())
    out = []
    for raw in (x.strip() for x in parts):
        if not raw:
            continue
        try:
            out.append(ipaddress.ip_network(raw, strict=False))
        except ValueError:
            raise ValueError(f"--trusted-proxy: '{raw}' is not an IP address or network "
                             "(e.g. 127.0.0.1 or 10.0.0.0/8)") from None
    return tuple(out)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    t = text.strip()
    if t.startswith("[") and "]" in t:  # [v6]:port
        t = t[1:t.index("]")]
    elif t.count(":") == 1:  # v4:port
        t = t.split(":")[0]
    try:
        return ipaddress.ip_address(t)
    except ValueError:
        return None


def client_address(peer: str | None, forwarded_for: Sequence[str],
                   trusted: Sequence[Network]) -> str:
    """The address to count failures by.

    ``X-Forwarded-For`` is believed only when the connection comes from a trusted proxy;
    then the client is the right-most address in it that is not itself a trusted proxy
    (each proxy appends the address it saw, so entries to the left of that one are whatever
    the client chose to send). ``peer`` None means a loopback connection.
    """
    addr = _ip(peer or "127.0.0.1")
    if addr is None or not any(addr in n for n in trusted):
        return str(addr or peer)
    hops = [h for v in forwarded_for for h in v.split(",") if h.strip()]
    for hop in reversed(hops):
        ip = _ip(hop)
        if ip is None:
            return hop.strip()[:64]
        if not any(ip in n for n in trusted):
            return str(ip)
        addr = ip
    return str(addr)
