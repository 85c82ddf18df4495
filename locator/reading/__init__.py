"""The reading engine: one loop, every reading algorithm a composition of its parts.

    state (`state`) -> actions as data (`actions`, proposed by `sources`) -> one request per group
    of files, built and mapped back in one place (`LocatorContext.ask_keyed`) -> policy (`schedule`)
    -> effect: read through the metered context and observe (`effects`) -> budget (`budget`) ->
    next state; evidence is selected from the observations at the end (`evidence`).

`engine.ProgressiveReader` is the loop; each part is a small module, configured in YAML under
`locator.reader.*`, so a variant is a composition, not a copy of the loop. `epochs.EpochFlow` runs
its epochs as a dataflow: a request goes out as soon as its inputs exist (a batch's next round waits
on its own answers only), with the loop's requests and decisions at every concurrency.
"""
