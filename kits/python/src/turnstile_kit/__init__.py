"""turnstile_kit: the turnstile conformance protocol (conformance/PROTOCOL.md) for Python loops.

An adapter maps its loop's hooks onto a :class:`Session` and calls :func:`serve`; the kit does
the rest: hello, sessions, calls and answers, notifications, deliveries, the virtual clock,
idle detection (exact, see vloop.py), stop and shutdown, for asyncio and synchronous loops;
of protocol version 2, Agent scenarios (agent.py), stream options and aborts during a hook.
"""

from .agent import AgentHandler
from .server import ALL_HOOKS, PROTOCOL, Kit, now, serve
from .session import (STOPPED, AbortSignal, CallError, Clock, DeliveryError, Session, SessionStopped,
                      Stream, ToolError, ToolRun, error_text)
from .timepatch import install_virtual_time
from .vloop import VirtualLoop, VirtualLoopError
from .wire import AdapterError, ProtocolError, Shutdown

__all__ = [
    "ALL_HOOKS", "PROTOCOL", "AdapterError", "AgentHandler", "STOPPED", "AbortSignal", "CallError", "Clock", "DeliveryError", "Kit",
    "ProtocolError", "Session", "SessionStopped", "Shutdown", "Stream", "ToolError", "ToolRun",
    "VirtualLoop", "VirtualLoopError", "error_text", "install_virtual_time", "now", "serve",
]
