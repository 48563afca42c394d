"""OSC over UDP: the console's remote control, bounded and guarded.

The address space is the ``osc`` column of ``commands.COMMANDS`` (exact addresses only; an OSC pattern such as
``/yuesheng/*`` is refused, never fanned out)::

    /yuesheng/go            GO
    /yuesheng/stop          STOP ALL
    /yuesheng/fade          FADE the held music
    /yuesheng/goto CUE      jump: CUE (a string) is the next GO's cue (a command that names a cue takes it)

When the console has a token, every sender puts it first: ``/yuesheng/go TOKEN``, ``/yuesheng/goto TOKEN CUE`` (off
loopback the console has one, always); ``--osc-allow`` narrows who may send, never replacing the token. A datagram
is at most ``MAX_DATAGRAM`` bytes; a bundle nests at most ``MAX_DEPTH`` deep and holds at most ``MAX_MESSAGES``
messages. Argument types taken: ``s i f h d T F N``. Messages are parsed by python-osc; bundles are opened here,
without recursion (python-osc's bundle parser recurses, so 2,000 nested bundles were a RecursionError), to bound
their depth and count. Anything else (too long, too deep, malformed, an unknown address or type, a wrong or missing
token, a sender not allowed) is dropped with a notice, at most one a second, counting what was dropped meanwhile.
Nothing a datagram holds can raise out of the listener.
"""

from __future__ import annotations

import hmac
import ipaddress
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from yuesheng.errors import OscMessageError
from yuesheng.live.commands import by_osc, value_of
from yuesheng.live.control import Control

MAX_DATAGRAM = 2048  # bytes: a GOTO with a token and a cue id is under 200
MAX_DEPTH = 4  # bundles within bundles
MAX_MESSAGES = 16  # per datagram
PATTERN_CHARACTERS = frozenset("*?[]{}")
TAKEN_TYPES = frozenset("sifhdTFN")  # OSC argument types a command may carry

Argument = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Message:
    address: str
    args: tuple[Argument, ...]


def parse_message(data: bytes) -> Message:
    """One OSC message, parsed by python-osc; OscMessageError if it is not one this console takes.

    The type tags are read first (python-osc only logs a warning for a type it does not know, and takes more
    types than a command needs)."""
    from pythonosc import osc_message
    from pythonosc.parsing import osc_types

    try:
        address, at = osc_types.get_string(data, 0)
        tags = osc_types.get_string(data, at)[0] if at < len(data) else ","
        if not address.startswith("/"):
            raise OscMessageError(f"address {address[:40]!r} does not start with '/'")
        if not tags.startswith(",") or not set(tags[1:]) <= TAKEN_TYPES:
            raise OscMessageError(f"argument types {tags[:20]!r} (taken: {''.join(sorted(TAKEN_TYPES))})")
        message = osc_message.OscMessage(data)
    except (osc_types.ParseError, osc_message.ParseError, UnicodeDecodeError) as exc:
        raise OscMessageError(f"not an OSC message ({exc.__class__.__name__})") from None
    return Message(message.address, tuple(message.params))


def parse_datagram(data: bytes) -> list[Message]:
    """The messages of a datagram, bundles opened without recursion; OscMessageError past the bounds."""
    if len(data) > MAX_DATAGRAM:
        raise OscMessageError(f"a datagram over {MAX_DATAGRAM} bytes")
    messages: list[Message] = []
    pending = [(data, 0)]
    while pending:
        part, depth = pending.pop()
        if not part.startswith(b"#bundle\0"):
            messages.append(parse_message(part))
        elif depth >= MAX_DEPTH:
            raise OscMessageError(f"bundles nested over {MAX_DEPTH} deep")
        else:
            pending.extend(reversed(list(_elements(part, depth + 1))))
        if len(messages) + len(pending) > MAX_MESSAGES:
            raise OscMessageError(f"over {MAX_MESSAGES} messages in one datagram")
    return messages


def _elements(bundle: bytes, depth: int) -> Iterable[tuple[bytes, int]]:
    at = 16  # '#bundle\0' and the time tag
    while at < len(bundle):
        if at + 4 > len(bundle):
            raise OscMessageError("a bundle element's size runs past the end")
        size = struct.unpack_from(">i", bundle, at)[0]
        if size <= 0 or size % 4 or at + 4 + size > len(bundle):
            raise OscMessageError(f"a bundle element of size {size}")
        yield bundle[at + 4:at + 4 + size], depth
        at += 4 + size


def is_loopback(host: str) -> bool:
    """Whether *host* is this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Gate:
    """Who may command the console by OSC: whoever puts the *token* first, and, with an allow list, only the senders
    it names. A UDP source address is not a credential (it is forged in one line), so an allow list narrows who may
    send and never stands in for the token.

    With no token, every sender (of the allow list, if one is given) is taken: only right when the socket is bound
    to loopback (``check_binding``).
    """

    def __init__(self, token: str | None = None, allowed: Iterable[str] = ()) -> None:
        self.token = token
        self.allowed = {ipaddress.ip_address(a) for a in allowed}

    def admit(self, sender: str, args: tuple[Argument, ...]) -> tuple[Argument, ...] | None:
        """The arguments past the token, if *sender* may command; None if not."""
        if self.allowed and not self._allowed(sender):
            return None
        if self.token is None:
            return args
        carries = bool(args and isinstance(args[0], str)
                       and hmac.compare_digest(args[0].encode(), self.token.encode()))
        return args[1:] if carries else None

    def _allowed(self, sender: str) -> bool:
        try:
            address = ipaddress.ip_address(sender.split("%")[0])
        except ValueError:
            return False
        mapped = getattr(address, "ipv4_mapped", None)
        return address in self.allowed or (mapped is not None and mapped in self.allowed)


def check_binding(host: str, gate: Gate) -> str:
    """Why OSC may not listen on *host* with *gate* ('' if it may): off loopback it needs the token."""
    if is_loopback(host) or gate.token:
        return ""
    narrowed = " (--osc-allow narrows who may send; a UDP source address is forged in one line, so it never " \
        "replaces the token)" if gate.allowed else ""
    return (f"--osc {host}: OSC off loopback would take GO and STOP from anyone on the network{narrowed}; give the "
            "console a token: YUESHENG_TOKEN=$(python3 -c 'import secrets; print(secrets.token_urlsafe(16))') or "
            "--token-file FILE; senders put it first (/yuesheng/go TOKEN)")


class Notices:
    """Notices of dropped datagrams, at most one every *every* seconds, counting those held back."""

    def __init__(self, notify: Callable[[str], None], every: float = 1.0) -> None:
        self.notify, self.every = notify, every
        self.last = float("-inf")
        self.held = 0

    def drop(self, sender: str, why: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every:
            self.held += 1
            return
        more = f" (and {self.held} more dropped since the last notice)" if self.held else ""
        self.notify(f"OSC from {sender}: dropped, {why}{more}")
        self.last, self.held = now, 0


class OscListener:
    """A UDP socket feeding the control, read in a daemon thread until ``close``."""

    def __init__(self, control: Control, host: str, port: int, *, gate: Gate | None = None,
                 notify: Callable[[str], None] = print) -> None:
        self.control, self.gate, self.notices = control, gate or Gate(), Notices(notify)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_DGRAM)
        try:
            self.socket.bind((host, port))
        except OSError:
            self.socket.close()
            raise
        self.socket.settimeout(0.5)  # so that ``close`` is seen even if the wake-up is missed
        self.address = self.socket.getsockname()[:2]
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._serve, name="yuesheng-osc", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.closed.is_set():
            try:
                data, sender = self.socket.recvfrom(MAX_DATAGRAM + 1)
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            if not self.closed.is_set():
                self.receive(data, str(sender[0]))

    def receive(self, data: bytes, sender: str) -> None:
        """Carry out what a datagram from *sender* asks, or drop it with a notice."""
        try:
            messages = parse_datagram(data)
        except OscMessageError as exc:
            self.notices.drop(sender, str(exc))
            return
        for message in messages:
            self._one(message, sender)

    def _one(self, message: Message, sender: str) -> None:
        if PATTERN_CHARACTERS & set(message.address):
            self.notices.drop(sender, f"{message.address[:40]!r} is a pattern; send an exact address")
            return
        row = by_osc(message.address)
        if row is None:
            self.notices.drop(sender, f"unknown address {message.address[:40]!r}")
            return
        args = self.gate.admit(sender, message.args)
        if args is None:
            self.notices.drop(sender, "no token first (or the sender is not in --osc-allow)")
            return
        named = row.target or row.sounding
        cue = args[0] if named and args else ""
        if named and not (isinstance(cue, str) and cue):
            self.notices.drop(sender, f"{row.osc} needs a cue id (a string)")
            return
        rest = args[1:] if named else args
        value, why = value_of(row, rest[0] if rest else None)
        if why or len(rest) > (1 if row.value else 0):
            self.notices.drop(sender, why or f"{row.osc}: more arguments than it takes")
            return
        self.control.submit(row.command, "osc", str(cue), value=value)

    def close(self) -> None:
        self.closed.set()
        try:
            self.socket.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.socket.close()
        self.thread.join(timeout=2)


STATE = ("/yuesheng/cue", "/yuesheng/number", "/yuesheng/elapsed", "/yuesheng/armed")  # the state sent out


def check_targets(targets: Iterable[tuple[str, int]], token: str | None) -> str:
    """Why the state may not be sent to *targets* ('' if it may): off loopback only with the token, put first in
    every message, so that a receiver can tell the console's state from a forged one."""
    for host, port in targets:
        if not is_loopback(host) and not token:
            return (f"--osc-out {host}:{port}: state off loopback goes with the console's token first; give it one "
                    "(YUESHENG_TOKEN or --token-file), or send to 127.0.0.1")
    return ""


class OscSender:
    """The show's state sent to the OSC targets named when the console started, and to no other: each message a
    datagram, the token first (off loopback). Nothing a target sends back is read."""

    def __init__(self, targets: Iterable[tuple[str, int]], token: str | None = None) -> None:
        self.targets = [(host, port, token if token and not is_loopback(host) else None) for host, port in targets]
        self.sockets = {f: socket.socket(f, socket.SOCK_DGRAM) for f in (socket.AF_INET, socket.AF_INET6)}

    def send_state(self, cue: str, number: int, elapsed: float, armed: str) -> None:
        """/yuesheng/cue s, /yuesheng/number i, /yuesheng/elapsed f, /yuesheng/armed s, to every target; a target
        that cannot be reached is passed over (the show goes on)."""
        from pythonosc.osc_message_builder import OscMessageBuilder

        for host, port, token in self.targets:
            values: tuple[str | int | float, ...] = (cue, number, float(elapsed), armed)
            for address, value in zip(STATE, values, strict=True):
                builder = OscMessageBuilder(address)
                if token:
                    builder.add_arg(token)
                builder.add_arg(value)
                family = socket.AF_INET6 if ":" in host else socket.AF_INET
                try:
                    self.sockets[family].sendto(builder.build().dgram, (host, port))
                except OSError:
                    break

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()
