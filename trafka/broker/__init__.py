"""The trio server: connections, one handler module per API, the group coordinator."""
