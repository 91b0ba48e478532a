"""tests/guest/apps.t section: mpi (to be written)."""


def run(ctx):
    ctx.t.skip("mpi: not written yet")
