import asyncio
import unittest

import tests.harness  # noqa: F401  (puts src on sys.path)
from turnstile_kit import VirtualLoop, VirtualLoopError


class VirtualLoopTest(unittest.TestCase):
    def setUp(self):
        self.loop = VirtualLoop(lambda: 1.5)

    def tearDown(self):
        self.loop.close()

    def test_idle_when_every_task_waits_on_an_unresolved_future(self):
        fut = self.loop.create_future()
        log = []

        async def waiter(name):
            log.append(f"{name} waits")
            await fut
            for _ in range(3):
                await asyncio.sleep(0)  # already-resolved hops: still one run_until_idle
            log.append(f"{name} done")

        async def main():
            await asyncio.gather(waiter("a"), waiter("b"))
            log.append("gathered")

        task = self.loop.create_task(main())
        self.loop.run_until_idle()
        self.assertFalse(self.loop.has_ready())
        self.assertEqual(log, ["a waits", "b waits"])
        self.assertFalse(task.done())
        fut.set_result(None)  # what a delivery does
        self.assertTrue(self.loop.has_ready())
        self.loop.run_until_idle()
        self.assertEqual(log, ["a waits", "b waits", "a done", "b done", "gathered"])
        self.assertTrue(task.done())

    def test_asyncio_primitives_run_on_it(self):
        out = []

        async def main():
            self.assertIs(asyncio.get_running_loop(), self.loop)
            q = asyncio.Queue()
            ev = asyncio.Event()

            async def producer():
                await q.put(1)
                ev.set()

            t = asyncio.create_task(producer())
            await ev.wait()
            out.append(await q.get())
            await t
            out.append(asyncio.get_running_loop().time())
            out.append(asyncio.current_task().get_name() is not None)

        task = self.loop.create_task(main())
        self.loop.run_until_idle()
        self.assertTrue(task.done(), "a loop of resolved awaits must finish in one run")
        task.result()
        self.assertEqual(out, [1, 1.5, True])

    def test_real_timers_are_refused(self):
        async def main():
            await asyncio.sleep(0.01)

        task = self.loop.create_task(main())
        self.loop.run_until_idle()
        with self.assertRaises(VirtualLoopError) as cm:
            task.result()
        self.assertIn("time only moves with deliveries", str(cm.exception))

    def test_threads_are_refused(self):
        async def main():
            await asyncio.to_thread(print)

        task = self.loop.create_task(main())
        self.loop.run_until_idle()
        with self.assertRaises(VirtualLoopError):
            task.result()

    def test_a_loop_that_never_idles_is_reported(self):
        import turnstile_kit.vloop as vloop

        saved = vloop.MAX_STEPS
        vloop.MAX_STEPS = 1000
        try:
            async def spin():
                while True:
                    await asyncio.sleep(0)

            self.loop.create_task(spin())
            with self.assertRaises(VirtualLoopError) as cm:
                self.loop.run_until_idle()
            self.assertIn("never became idle", str(cm.exception))
        finally:
            vloop.MAX_STEPS = saved


if __name__ == "__main__":
    unittest.main()
