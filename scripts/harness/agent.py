"""Host side of the guest control channel (the guest side is scripts/guest/agent.c).

Frames, both directions: an ASCII header line ``T1 <TYPE> <id> <len> [args...]`` followed by
``len`` raw payload bytes. The host sends PING, RUN and KILL; the guest answers with HELLO
(once, when the agent starts), PONG, OUT (output chunks), EXIT and ERR. Commands run
concurrently in the guest; a reader thread here routes every frame to its :class:`Job`.
"""

import itertools
import socket
import threading
import time

from .errors import AgentLost, CommandFailed, CommandTimeout, HarnessError

# The guest agent buffers one whole request; keep payloads well below its 8 MiB buffer.
MAX_PAYLOAD = 8 * 1024 * 1024 - 64 * 1024
# How long the host waits beyond a command's own (guest-side) timeout before giving up.
HOST_GRACE = 15.0
LOG_OUTPUT_LIMIT = 16 * 1024


class Result:
    """The outcome of one command: exit status, output and timing.

    ``rc`` is the exit code (128+N when killed by signal N, as a shell reports it),
    ``stdout``/``stderr`` are decoded text and ``stdout_bytes``/``stderr_bytes`` the raw bytes,
    ``timed_out`` tells whether the guest killed it at its timeout, ``duration`` is in seconds
    (measured in the guest).
    """

    def __init__(self, node, cmd, rc, signal, timed_out, duration, out, err):
        self.node = node
        self.cmd = cmd
        self.rc = rc
        self.signal = signal
        self.timed_out = timed_out
        self.duration = duration
        self.stdout_bytes = bytes(out)
        self.stderr_bytes = bytes(err)

    @property
    def stdout(self):
        """Standard output as text (UTF-8, undecodable bytes replaced)."""
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self):
        """Standard error as text (UTF-8, undecodable bytes replaced)."""
        return self.stderr_bytes.decode("utf-8", "replace")

    @property
    def ok(self):
        """True when the command exited with status 0."""
        return self.rc == 0 and not self.timed_out

    def __repr__(self):
        return "<Result %s rc=%s%s %.3fs out=%dB err=%dB: %s>" % (
            self.node, self.rc, " TIMEOUT" if self.timed_out else "", self.duration,
            len(self.stdout_bytes), len(self.stderr_bytes), _short(self.cmd))


def _short(cmd, limit=60):
    line = cmd.strip().splitlines()[0] if cmd.strip() else ""
    return line if len(line) <= limit and "\n" not in cmd.strip() else line[:limit] + " ..."


class Job:
    """A command running in a guest; returned by :meth:`Agent.start` and ``Node.spawn``."""

    def __init__(self, agent, job_id, cmd, timeout):
        self.agent = agent
        self.id = job_id
        self.cmd = cmd
        self.timeout = timeout
        self._out = bytearray()
        self._err = bytearray()
        self._done = threading.Event()
        self._result = None
        self._error = None

    # Called from the reader thread.
    def _output(self, fd, data):
        (self._out if fd == 1 else self._err).extend(data)

    def _exit(self, code, sig, timed_out, duration_us):
        rc = code if sig == 0 else 128 + sig
        self._result = Result(self.agent.name, self.cmd, rc, sig, bool(timed_out),
                              duration_us / 1e6, self._out, self._err)
        self._done.set()

    def _fail(self, error):
        self._error = error
        self._done.set()

    @property
    def stdout(self):
        """Standard output received so far, as text."""
        return bytes(self._out).decode("utf-8", "replace")

    @property
    def stderr(self):
        """Standard error received so far, as text."""
        return bytes(self._err).decode("utf-8", "replace")

    def done(self):
        """True once the command has exited (or the agent was lost)."""
        return self._done.is_set()

    def poll(self):
        """The :class:`Result` if the command has exited, else None."""
        return self.wait(0, raise_timeout=False) if self.done() else None

    def wait(self, timeout=None, check=False, raise_timeout=True):
        """Wait for the command to exit and return its :class:`Result`.

        ``timeout`` (seconds, None: the command's own timeout plus a grace period, or forever
        when it has none) bounds the wait on the host. Raises :class:`CommandTimeout` when the
        guest killed the command at its timeout or the host wait expired (the command keeps
        running in that case), :class:`AgentLost` when the guest went away, and
        :class:`CommandFailed` for a non-zero exit when ``check`` is true.
        """
        if timeout is None and self.timeout:
            timeout = self.timeout + HOST_GRACE
        if not self._done.wait(timeout):
            partial = Result(self.agent.name, self.cmd, None, 0, True, timeout or 0,
                             self._out, self._err)
            raise CommandTimeout("%s: no answer from the agent within %.0f s for: %s" % (
                self.agent.name, timeout, _short(self.cmd)), partial)
        if self._error:
            raise self._error
        res = self._result
        if res.timed_out and raise_timeout:
            raise CommandTimeout("%s: command timed out after %s s: %s" % (
                self.agent.name, self.timeout, _short(self.cmd)), res)
        if check and res.rc != 0:
            raise CommandFailed("%s: exit %s: %s\n%s" % (
                self.agent.name, res.rc, _short(self.cmd), res.stderr[-2000:]), res)
        return res

    def kill(self, signal=15):
        """Send ``signal`` (default SIGTERM) to the command's whole process group."""
        if not self.done():
            self.agent._send("KILL", self.id, b"", [signal])


class Agent:
    """One connection to a guest agent over its virtio-serial unix socket."""

    _ids = itertools.count(1)

    def __init__(self, name, sock_path, log_path=None):
        self.name = name
        self.sock_path = sock_path
        self.hello = None
        self._sock = None
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._jobs = {}
        self._pings = {}
        self._ready = threading.Event()
        self._lost = None
        self._reader = None
        self._log = open(log_path, "a", buffering=1) if log_path else None
        self._t0 = time.monotonic()

    def log(self, msg):
        """Append a line to this node's agent log (kept in the run's result dir)."""
        if self._log:
            try:
                self._log.write("[%9.3f] %s\n" % (time.monotonic() - self._t0, msg))
            except ValueError:
                pass  # closed

    def connect(self, deadline, alive=lambda: True):
        """Connect to the QEMU chardev socket, retrying until ``deadline`` (monotonic)."""
        while True:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                s.connect(self.sock_path)
                break
            except OSError as e:
                s.close()
                if time.monotonic() > deadline or not alive():
                    raise HarnessError("%s: cannot connect to %s: %s" % (
                        self.name, self.sock_path, e)) from None
                time.sleep(0.05)
        self._sock = s
        self._reader = threading.Thread(target=self._read_loop, name="agent-" + self.name,
                                        daemon=True)
        self._reader.start()
        self._send("PING", 0, b"")

    def wait_ready(self, timeout):
        """Wait until the agent has greeted us; True when it has."""
        return self._ready.wait(timeout)

    @property
    def alive(self):
        """False once the connection is gone."""
        return self._sock is not None and self._lost is None

    def _send(self, kind, job_id, payload, args=()):
        header = "T1 %s %d %d%s\n" % (kind, job_id, len(payload),
                                       "".join(" %s" % a for a in args))
        with self._send_lock:
            if self._lost:
                raise self._lost
            try:
                self._sock.sendall(header.encode() + payload)
            except OSError as e:
                raise AgentLost("%s: cannot send to the agent: %s" % (self.name, e)) from None

    def start(self, cmd, timeout=60, input=None):
        """Start ``cmd`` (a shell script) in the guest and return its :class:`Job`.

        ``timeout`` (seconds; 0 or None for none) is enforced in the guest, which kills the
        command's process group when it expires. ``input`` (bytes or str) becomes its stdin.
        """
        script = cmd.encode() if isinstance(cmd, str) else bytes(cmd)
        if isinstance(input, str):
            input = input.encode()
        payload = script + (input or b"")
        if len(payload) > MAX_PAYLOAD:
            raise HarnessError("%s: command plus input is %d bytes, the limit is %d" % (
                self.name, len(payload), MAX_PAYLOAD))
        job_id = next(self._ids)
        job = Job(self, job_id, script.decode("utf-8", "replace"), timeout or 0)
        with self._lock:
            if self._lost:
                raise self._lost
            self._jobs[job_id] = job
        self.log("%d start (timeout %s, stdin %dB): %s" % (
            job_id, timeout or "none", len(input or b""), job.cmd.rstrip()))
        try:
            self._send("RUN", job_id, payload, [int((timeout or 0) * 1000), len(script)])
        except AgentLost as e:
            job._fail(e)
        return job

    def ping(self, timeout=10):
        """Round-trip one PING; returns the latency in seconds."""
        job_id = next(self._ids)
        ev = threading.Event()
        with self._lock:
            self._pings[job_id] = ev
        t = time.monotonic()
        self._send("PING", job_id, b"")
        if not ev.wait(timeout):
            raise CommandTimeout("%s: no PONG within %s s" % (self.name, timeout), None)
        if self._lost:
            raise self._lost
        return time.monotonic() - t

    def _read_loop(self):
        f = self._sock.makefile("rb")
        reason = "connection closed (did QEMU exit?)"
        try:
            while True:
                line = f.readline(1024)
                if not line:
                    break
                fields = line.split()
                if len(fields) < 4 or fields[0] != b"T1" or not line.endswith(b"\n"):
                    self.log("bad frame header from guest: %r" % line[:200])
                    continue
                kind = fields[1].decode()
                job_id, length = int(fields[2]), int(fields[3])
                args = [int(a) for a in fields[4:]] if kind == "EXIT" or kind == "OUT" else []
                payload = f.read(length) if length else b""
                if len(payload) != length:
                    break
                self._dispatch(kind, job_id, payload, args)
        except (OSError, ValueError) as e:
            reason = "connection error: %s" % e
        self._lose(AgentLost("%s: agent %s" % (self.name, reason)))

    def _dispatch(self, kind, job_id, payload, args):
        if kind == "HELLO":
            self.hello = payload.decode("utf-8", "replace")
            self.log("hello: " + self.hello)
            self._ready.set()
        elif kind == "PONG":
            self._ready.set()
            with self._lock:
                ev = self._pings.pop(job_id, None)
            if ev:
                ev.set()
        elif kind == "OUT":
            job = self._jobs.get(job_id)
            if job:
                job._output(args[0], payload)
        elif kind == "EXIT":
            with self._lock:
                job = self._jobs.pop(job_id, None)
            if job:
                job._exit(*args[:4])
                res = job._result
                self.log("%d exit rc=%s%s %.3fs out=%dB err=%dB%s%s" % (
                    job_id, res.rc, " TIMEOUT" if res.timed_out else "", res.duration,
                    len(res.stdout_bytes), len(res.stderr_bytes),
                    _log_block("stdout", res.stdout_bytes), _log_block("stderr", res.stderr_bytes)))
        elif kind == "ERR":
            msg = payload.decode("utf-8", "replace")
            self.log("%d error from agent: %s" % (job_id, msg))
            with self._lock:
                job = self._jobs.pop(job_id, None)
            if job:
                job._fail(HarnessError("%s: agent refused the command: %s" % (self.name, msg)))
        else:
            self.log("unknown frame %s %d" % (kind, job_id))

    def _lose(self, error):
        with self._lock:
            first = self._lost is None
            if first:
                self._lost = error
            jobs, self._jobs = list(self._jobs.values()), {}
            pings, self._pings = list(self._pings.values()), {}
        for job in jobs:
            job._fail(error)
        for ev in pings:
            ev.set()
        if first:
            self.log(str(error))

    def close(self):
        """Close the connection; commands still running fail with :class:`AgentLost`."""
        if self._sock is not None:
            try:
                self._sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            if self._reader:
                self._reader.join(5)
            self._sock.close()
        self._lose(AgentLost("%s: agent connection closed by the harness" % self.name))
        if self._log:
            self._log.close()
            self._log = None


def _log_block(label, data):
    if not data:
        return ""
    text = data[:LOG_OUTPUT_LIMIT].decode("utf-8", "replace")
    more = "\n    ... (%d more bytes)" % (len(data) - LOG_OUTPUT_LIMIT) \
        if len(data) > LOG_OUTPUT_LIMIT else ""
    return "\n  %s:\n    %s%s" % (label, text.rstrip("\n").replace("\n", "\n    "), more)
