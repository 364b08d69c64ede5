"""The network side: one client connection, sending a response frame, connection quotas."""
