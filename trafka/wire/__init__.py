"""Sans-io Kafka protocol codec: bytes in, objects out. No trio, no files."""
