"""tests/guest/apps.t section: ucx (to be written)."""


def run(ctx):
    ctx.t.skip("ucx: not written yet")
