"""Message bus: one small interface, an in-memory and a Redis implementation, bytes only."""

from hub.bus.base import Bus, Message, Subscription, open_bus

__all__ = ["Bus", "Message", "Subscription", "open_bus"]
