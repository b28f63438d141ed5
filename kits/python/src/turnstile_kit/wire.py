"""Line I/O of the protocol: one JSON object per line on stdin and stdout."""

from __future__ import annotations

import json
import sys
from typing import Any, BinaryIO, Callable

MAX_LINE = 16 * 1024 * 1024


class ProtocolError(SystemExit):
    """The harness sent something the protocol does not allow; the adapter reports it and exits 1.

    A SystemExit, so that a loop's ``except Exception`` around a hook does not mistake it for a
    failed hook, and asyncio lets it through tasks: it unwinds through the loop to the kit.
    """

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "protocol error"


class AdapterError(SystemExit):
    """The adapter cannot go on (e.g. an event that is not JSON); reported to the harness, exit 1."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "adapter error"


class Shutdown(SystemExit):
    """The harness said shutdown, or closed stdin: the adapter exits with status 0 (see ProtocolError)."""


class Wire:
    """Reads the harness's messages and writes the adapter's, a line each."""

    def __init__(self, reader: BinaryIO | None = None, writer: BinaryIO | None = None,
                 to_json: Callable[[Any], Any] | None = None) -> None:
        self.to_json = to_json  # json.dumps's default: turns the loop's own objects into JSON values
        self.reader = reader if reader is not None else sys.stdin.buffer
        self.writer = writer if writer is not None else sys.stdout.buffer
        self.line = 0  # lines read so far
        self.written = 0  # lines written so far
        self.fatal: SystemExit | None = None  # a Shutdown or ProtocolError seen; raised again by every read

    def send(self, msg: dict[str, Any]) -> None:
        """Writes one message as a line and flushes it."""
        try:
            data = json.dumps(msg, separators=(",", ":"), ensure_ascii=False, allow_nan=False, default=self.to_json)
        except (TypeError, ValueError) as err:
            what = msg.get("type", "message")
            if what == "notify":
                what = f'{msg["notification"]["kind"]} notification'
                data = msg["notification"].get("data")
                if isinstance(data, dict) and isinstance(data.get("type"), str):
                    what = f'event {data["type"]}'
            elif what == "call":
                what = f'{msg["call"]["kind"]} call'
            self.fatal = AdapterError(f"the {what} is not JSON: {err} (convert your loop's objects to pi's JSON "
                                      "shapes in the adapter, or give serve(to_json=...))")
            raise self.fatal from None
        self.writer.write(data.encode("utf-8") + b"\n")
        self.writer.flush()
        self.written += 1

    def receive(self) -> dict[str, Any]:
        """The next message; raises Shutdown at shutdown or the end of stdin."""
        if self.fatal is not None:
            raise self.fatal
        try:
            return self._receive()
        except SystemExit as err:
            self.fatal = err
            raise

    def _receive(self) -> dict[str, Any]:
        raw = self.reader.readline(MAX_LINE + 2)
        if not raw:
            raise Shutdown()
        self.line += 1
        if len(raw) > MAX_LINE + 1 and not raw.endswith(b"\n"):
            raise ProtocolError(f"protocol error at line {self.line}: the line is longer than {MAX_LINE} bytes")
        try:
            msg = json.loads(raw.decode("utf-8").rstrip("\r\n"))
        except ValueError as err:
            raise ProtocolError(f"protocol error at line {self.line}: not JSON: {err}") from None
        if not isinstance(msg, dict) or not isinstance(msg.get("type"), str):
            raise ProtocolError(f'protocol error at line {self.line}: expected an object with a "type"')
        if msg["type"] == "shutdown":
            raise Shutdown()
        return msg
