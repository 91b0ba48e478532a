"""tests/guest/apps.t section: rsockets (to be written)."""


def run(ctx):
    ctx.t.skip("rsockets: not written yet")
