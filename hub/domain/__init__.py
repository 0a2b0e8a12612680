"""The pure, synchronous duplicate-poker core: no I/O, no clock, no global RNG."""
