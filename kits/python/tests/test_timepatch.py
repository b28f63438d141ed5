import time
import unittest

import tests.harness  # noqa: F401  (puts src on sys.path)
from turnstile_kit import Clock, install_virtual_time

NAMES = ("time", "monotonic", "perf_counter", "time_ns", "monotonic_ns", "perf_counter_ns")


class VirtualTimeTest(unittest.TestCase):
    def setUp(self):
        self.saved = {n: getattr(time, n) for n in NAMES}

    def tearDown(self):
        for n, f in self.saved.items():
            setattr(time, n, f)

    def test_the_time_module_reads_the_virtual_clock(self):
        clock = Clock()
        install_virtual_time(clock)
        self.assertEqual((time.time(), time.monotonic(), time.perf_counter()), (0, 0, 0))
        clock.ms = 570
        self.assertEqual(round(time.time() * 1000), 570)
        self.assertEqual(time.monotonic_ns(), 570_000_000)
        self.assertEqual(time.perf_counter(), 0.57)


if __name__ == "__main__":
    unittest.main()
