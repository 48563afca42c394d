"""The address a tablet can open: what a console bound to every interface (0.0.0.0, ::) prints instead of it."""

from __future__ import annotations

import ipaddress
import socket

_UNSPECIFIED = ("0.0.0.0", "::", "")
_PROBE = ("192.0.2.1", 9)  # TEST-NET-1 (RFC 5737): connecting a UDP socket sends nothing, it only picks a route


def interface_addresses() -> list[str]:
    """This machine's IPv4 addresses other than loopback, best first: the one a route outwards leaves from, then
    those its host name resolves to."""
    found: list[str] = []
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(_PROBE)
            found.append(probe.getsockname()[0])
    except OSError:
        pass  # no route at all: the host name may still resolve
    try:
        found += [str(info[4][0]) for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)]
    except OSError:
        pass
    return [a for n, a in enumerate(found) if a not in found[:n] and not ipaddress.ip_address(a).is_loopback
            and a not in _UNSPECIFIED]


def shown_hosts(host: str) -> list[str]:
    """The hosts to print for a server listening on *host*: itself, or for every interface, each real address
    (loopback if there is none)."""
    if host not in _UNSPECIFIED:
        return [host]
    return interface_addresses() or ["127.0.0.1"]


def url(host: str, port: int) -> str:
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"
