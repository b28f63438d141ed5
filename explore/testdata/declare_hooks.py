#!/usr/bin/env python3
"""Run a conformance adapter, declaring only some hooks in its hello.

    python3 declare_hooks.py HOOK,HOOK -- COMMAND [ARG...]

Starts COMMAND (an adapter speaking conformance/PROTOCOL.md), relays every line between the
harness (stdin/stdout) and it unchanged, except its hello, whose capabilities.hooks become the
comma-separated HOOKs ("" for none). With the reference behind it (`turnstile adapter`), this
is a fault-free implementation that supports only those hooks, e.g.

    turnstile explore --runs 2000 \\
      --impl "python3 explore/testdata/declare_hooks.py getSteeringMessages,getFollowUpMessages -- turnstile adapter"

(the inner command is run as is: give turnstile's path when it is not on the PATH).
"""
import json
import subprocess
import sys
import threading


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit("usage: declare_hooks.py HOOK,HOOK -- COMMAND [ARG...]")
    hooks = [h for h in sys.argv[1].split(",") if h]
    child = subprocess.Popen(sys.argv[3:], stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def relay_in():
        try:
            for line in sys.stdin.buffer:
                child.stdin.write(line)
                child.stdin.flush()
        except BrokenPipeError:
            pass
        finally:
            try:
                child.stdin.close()
            except BrokenPipeError:
                pass

    threading.Thread(target=relay_in, daemon=True).start()
    out = sys.stdout.buffer
    hello_seen = False
    for line in child.stdout:
        if not hello_seen and b'"hello"' in line:
            msg = json.loads(line)
            if msg.get("type") == "hello":
                hello_seen = True
                msg.setdefault("capabilities", {})["hooks"] = hooks
                line = (json.dumps(msg, separators=(",", ":")) + "\n").encode()
        out.write(line)
        out.flush()
    sys.exit(child.wait())


if __name__ == "__main__":
    main()
