"""Spark Structured Streaming's Kafka source and sink against a real trafka broker. See docs/spark.md."""
