"""The client side of a hub: websocket sessions, fan-out, the feed store, HTTP, auth."""
