"""The coordinator runtime every coordinator runs on (docs/architecture.md)."""
