"""trafka: a Kafka-wire-compatible broker for laptops and CI."""

__version__ = "0.1.0"
