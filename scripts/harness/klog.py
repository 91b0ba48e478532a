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
    r"kmemleak|unreferenced object 0x",
    r"possible circular locking dependency",
    r"possible recursive locking",
    r"inconsistent lock state",
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
        if pat.search(line) and not any(s.search(line) for s in skip):
            found.append(line.rstrip("\r"))
    return found
