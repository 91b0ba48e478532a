"""Exceptions raised by the harness."""


class HarnessError(Exception):
    """Something in the harness or a guest went wrong."""


class BootError(HarnessError):
    """A guest did not come up (QEMU failed or its agent never answered)."""


class AgentLost(HarnessError):
    """The connection to a guest's agent is gone (QEMU exited, the guest panicked...)."""


class CommandTimeout(HarnessError):
    """A command ran past its timeout; ``result`` holds what it printed until then."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result


class CommandFailed(HarnessError):
    """A command run with ``check=True`` exited non-zero; ``result`` has the details."""

    def __init__(self, message, result):
        super().__init__(message)
        self.result = result
