"""Find kernel complaints (warnings, oopses, sanitizer and lockdep reports) in a kernel log."""

import re

# Lines that mean the kernel is unhappy. Case-sensitive on purpose: "WARNING:" is what
# __warn() and lockdep print, while plenty of harmless messages say "warning".
PATTERNS = [
    r"WARNING:",
    r"\bBUG[: ]",
    r"kernel BUG at",
    r"\bOops\b",
    r"general protection fault",
    r"Unable to handle kernel",
    r"invalid opcode:",
    r"Call Trace:",
    r"Kernel panic",
    r"KASAN",
    r"UBSAN",
    r"KFENCE",
    r"kmemleak: .*suspected memory leak|unreferenced object 0x",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
    r"possible irq lock inversion|bad unlock balance|held lock freed|lock held when returning",
    r"Possible unsafe locking scenario|DEBUG_LOCKS_WARN_ON|INFO: lockdep is turned off",
    r"suspicious RCU usage",
    r"INFO: task .* blocked for more than",
    r"hung task|hung_task",
    r"soft lockup|hard LOCKUP",
    r"rcu: INFO: .*detected stall|self-detected stall",
    r"scheduling while atomic",
    r"sleeping function called from invalid context",
    r"refcount_t: ",
    r"list_(add|del) corruption",
    r"stack-protector|stack guard page",
    r"DMA-API: ",
    r"Memory corruption|double free|use-after-free|out-of-bounds",
]

# Known-harmless lines that would otherwise match (boot noise of Debian's kernel under TCG).
IGNORE = [
    r"Spectre V2 : WARNING: Unprivileged eBPF",
]

# The kernel's one-line reports of a user process's fault (show_unhandled_signals):
# "traps: prog[pid] general protection fault ip:... in lib.so" or "prog[pid]: segfault at".
# The fault is the program's, not the kernel's: the test that ran the program judges its exit
# status; these lines are reported apart (user_faults), never as kernel problems.
USER_FAULT = re.compile(r"traps: \S+\[\d+\] (general protection fault|trap \S+.*) ip:|"
                        r"\S+\[\d+\]: segfault at ")

_pat = re.compile("|".join("(?:%s)" % p for p in PATTERNS))


def kernel_problems(text, ignore=(), extra=()):
    """Return the lines of kernel log ``text`` that report a kernel problem.

    ``ignore`` adds regular expressions for lines to accept anyway (e.g. a warning a test
    provokes on purpose); ``extra`` adds patterns that count as problems. Lines are returned
    as they appear (timestamps included), in order.
    """
    pat = re.compile("|".join("(?:%s)" % p for p in PATTERNS + list(extra))) if extra else _pat
    skip = [re.compile(p) for p in IGNORE + list(ignore)]
    found = []
    for line in text.splitlines():
        if pat.search(line) and not USER_FAULT.search(line) and \
                not any(s.search(line) for s in skip):
            found.append(line.rstrip("\r"))
    return found


def user_faults(text):
    """The lines of kernel log ``text`` that report a user process's fault (USER_FAULT)."""
    return [ln.rstrip("\r") for ln in text.splitlines() if USER_FAULT.search(ln)]


def problem_reports(text, ignore=(), extra=(), context=40, limit=4):
    """Excerpts of ``text`` around its kernel problems: each offending line with up to
    ``context`` following lines (the rest of a KASAN/lockdep/WARN report: stack, allocation
    and free traces), overlapping excerpts merged, at most ``limit`` excerpts. Returns a
    list of strings (empty when the log is clean)."""
    lines = [ln.rstrip("\r") for ln in text.splitlines()]
    bad = set(kernel_problems(text, ignore, extra))
    spans = []
    for i, line in enumerate(lines):
        if line in bad:
            if spans and i <= spans[-1][1]:
                spans[-1][1] = min(len(lines), i + 1 + context)
            else:
                spans.append([i, min(len(lines), i + 1 + context)])
    return ["\n".join(lines[a:b]) for a, b in spans[:limit]]
