"""What a downstream agent receives: a localization result rendered as an inline context pack under
a token cap, whose closing note claims only what was sent (seed 002)."""
