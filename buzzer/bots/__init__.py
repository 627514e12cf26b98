"""Bots that play Tossup matches over the player websocket protocol (docs/PROTOCOL.md)."""
