"""The tournament as an event-sourced state machine over the domain core (still pure)."""
