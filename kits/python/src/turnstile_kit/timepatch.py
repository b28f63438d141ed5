"""Optional: make the time module read the virtual clock, for loops that call time.time()."""

from __future__ import annotations

import time

from .session import Clock


def install_virtual_time(clock: Clock | None = None) -> None:
    """Replaces time.time, time.monotonic, time.perf_counter (and their _ns forms) by the clock.

    Only code that looks them up at call time (``time.time()``) sees it; ``from time import
    time`` done earlier keeps the real one. Seconds are ``ms / 1000`` as floats: convert back
    with ``round(t * 1000)``, not ``int()`` (0.57 * 1000 is 569.999…). Prefer passing
    :func:`turnstile_kit.now` (milliseconds) to your loop as its clock.
    """
    from .server import CLOCK

    c = clock or CLOCK
    seconds = lambda: c.ms / 1000  # noqa: E731
    nanos = lambda: int(round(c.ms * 1_000_000))  # noqa: E731
    time.time = seconds
    time.monotonic = seconds
    time.perf_counter = seconds
    time.time_ns = nanos
    time.monotonic_ns = nanos
    time.perf_counter_ns = nanos
