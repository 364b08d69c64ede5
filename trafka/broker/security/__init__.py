"""Security as one layer at the connection: listeners, TLS on the stream, a SASL state machine.

The connection authenticates; the request context carries the principal. See docs/security.md.
"""
