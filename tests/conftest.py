import logging

# kafka-python logs every reconnect at WARNING/ERROR while a test restarts the broker.
logging.getLogger("kafka").setLevel(logging.CRITICAL)
