"""A tiny TAP (Test Anything Protocol) producer for Python test scripts run by ``prove``.

    t = Tap()                      # or Tap(plan=5)
    t.ok(x == 1, "x is one")
    t.eq(got, want, "same value")  # prints both on failure
    with t.step("boots"):          # ok unless the block raises (traceback as diagnostics)
        ...
    t.diag("a note")               # "# a note"
    t.skip("needs tern", "no device")
    t.abort("cluster did not boot: ...")   # fails this file only, never the whole run
    t.exit()                       # prints the plan if none was given; status = failures

A test that took STEP_NOTE seconds or more since the previous one (or the start) is followed by
"# took 12.3 s", so that prove's verbose logs show where a file spends its time
(scripts/lib/test-times.py lists the slowest).
"""

import sys
import time
import traceback
from contextlib import contextmanager


class Tap:
    """Counts tests and prints TAP version 12 lines on stdout."""

    STEP_NOTE = 5.0

    def __init__(self, plan=None, out=None):
        self.out = out or sys.stdout
        self._last = time.monotonic()
        self.count = 0
        self.failed = 0
        self.planned = plan
        if plan is not None:
            self._print("1..%d" % plan)

    def _print(self, line):
        self.out.write(line + "\n")
        self.out.flush()

    def _took(self):
        """After a test's line: its time since the previous test, when it is worth noting."""
        now = time.monotonic()
        if now - self._last >= self.STEP_NOTE:
            self._print("# took %.1f s" % (now - self._last))
        self._last = now

    def plan(self, n):
        """Declare the number of tests (once, before or after running them)."""
        if self.planned is not None:
            raise RuntimeError("plan already declared")
        self.planned = n
        self._print("1..%d" % n)

    def ok(self, cond, desc="", *diag):
        """Report one test; ``diag`` lines are printed as diagnostics when it fails.
        Returns ``bool(cond)``."""
        self.count += 1
        desc = str(desc).replace("\n", " ").replace("#", "\\#")
        self._print("%s %d%s" % ("ok" if cond else "not ok", self.count,
                                 " - " + desc if desc else ""))
        self._took()
        if not cond:
            self.failed += 1
            for d in diag:
                self.diag(d)
        return bool(cond)

    def eq(self, got, want, desc=""):
        """ok(got == want), printing both values when they differ."""
        return self.ok(got == want, desc, "     got: %r" % (got,), "expected: %r" % (want,))

    def diag(self, *msgs):
        """Print diagnostics: every line prefixed with '# '."""
        for msg in msgs:
            for line in str(msg).splitlines() or [""]:
                self._print("# " + line)

    def skip(self, desc, reason="", count=1):
        """Report ``count`` skipped tests."""
        for _ in range(count):
            self.count += 1
            self._print("ok %d - %s # SKIP %s" % (self.count, desc, reason))
        self._took()

    def todo(self, cond, desc, reason=""):
        """A test expected to fail (does not count as a failure)."""
        self.count += 1
        self._print("%s %d - %s # TODO %s" % ("ok" if cond else "not ok", self.count, desc,
                                              reason))
        self._took()
        return bool(cond)

    def skip_all(self, reason):
        """Skip the whole script (only before any test ran) and exit 0."""
        self._print("1..0 # SKIP %s" % reason)
        sys.exit(0)

    def abort(self, reason):
        """A precondition of the rest of this script failed (a cluster that did not boot, a
        setup step): report it as one failed test, print the plan and exit non-zero. Only
        this test file ends; prove goes on with the others (no TAP "Bail out!", which would
        stop the whole run and hide every later file's result)."""
        self.ok(False, "precondition: %s" % str(reason).splitlines()[0] if str(reason) else
                "precondition failed", str(reason))
        if self.planned is None:
            self.plan(self.count)
        sys.exit(min(max(self.failed, 1), 254))

    @contextmanager
    def step(self, desc):
        """A test that passes unless the with-block raises; the traceback becomes
        diagnostics. The exception is swallowed so the script goes on."""
        try:
            yield
        except Exception:
            self.ok(False, desc, traceback.format_exc())
        else:
            self.ok(True, desc)

    def done(self):
        """Print the plan if it was not declared; return the exit status (failures, or 255
        when the count does not match the plan)."""
        if self.planned is None:
            self._print("1..%d" % self.count)
            self.planned = self.count
        elif self.planned != self.count:
            self.diag("planned %d tests but ran %d" % (self.planned, self.count))
            return 255
        return min(self.failed, 254)

    def exit(self):
        """done(), then exit with its status."""
        sys.exit(self.done())
