"""Share groups (KIP-932, docs/share-groups.md)."""
