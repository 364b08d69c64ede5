"""Java kafka-clients 3.9.1 / 4.3.0 through the py4j bridge (testkit.java): the driver and the
transactional producer."""

from __future__ import annotations

from testkit.clients.base import Got, Msg, TIMEOUT_S, TxnFailed, headers_tuple, Reading


class Java:
    """Java kafka-clients through the py4j harness; `kafka` is a JavaKafka."""

    def __init__(self, bootstrap: str, kafka):
        self.bootstrap = bootstrap
        self.kafka = kafka
        self.name = f"java-{kafka.version}"

    def produce(self, topic: str, msgs: list[Msg], codec: str = "none", partition: int = 0,
                idempotent: bool = False) -> list[int]:
        producer = self.kafka.make_producer({"bootstrap.servers": self.bootstrap, "compression.type": codec,
                                             "linger.ms": 20, "delivery.timeout.ms": TIMEOUT_S * 1000,
                                             "request.timeout.ms": 10000})
        try:
            futures = [producer.send_async(topic, m.key, m.value, list(m.headers), partition, m.timestamp) for m in msgs]
            return [f.get(TIMEOUT_S).offset for f in futures]
        finally:
            producer.close()

    def consume(self, topic: str, count: int, partition: int = 0) -> list[Got]:
        consumer = self.kafka.make_consumer({"bootstrap.servers": self.bootstrap, "enable.auto.commit": "false"})
        try:
            consumer.assign([(topic, partition)])
            consumer.seekToBeginning()
            return [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp, r.timestamp_type)
                    for r in consumer.poll_until(count, timeout_s=TIMEOUT_S)]
        finally:
            consumer.close()

    def group_consume(self, topic: str, group: str, count: int) -> list[Got]:
        consumer = self.kafka.make_consumer({"bootstrap.servers": self.bootstrap, "group.id": group,
                                             "enable.auto.commit": "false"})
        try:
            consumer.subscribe([topic])
            got = consumer.poll_until(count, timeout_s=TIMEOUT_S)
            consumer.commitSync()
            return [Got(r.offset, r.key, r.value, headers_tuple(r.headers), r.timestamp) for r in got]
        finally:
            consumer.close()


class JavaTxn:
    def __init__(self, kafka, bootstrap, transactional_id, timeout_ms):
        self.kafka = kafka
        self.p = kafka.make_producer({"bootstrap.servers": bootstrap, "transactional.id": transactional_id,
                                      "transaction.timeout.ms": timeout_ms, "max.block.ms": TIMEOUT_S * 1000})

    def _call(self, fn, *args):
        from testkit.java import KafkaJavaError

        try:
            return self.kafka.call(fn, *args)
        except KafkaJavaError as exc:
            raise TxnFailed(f"java-{self.kafka.version}", exc.simple_name) from exc

    def init(self):
        self._call(self.p.j.initTransactions)

    def begin(self):
        self._call(self.p.j.beginTransaction)

    def send(self, topic, value):
        self._call(lambda: self.p.send_async(topic, None, value, None, 0))

    def flush(self):
        self._call(self.p.j.flush)

    def commit(self):
        self._call(self.p.j.commitTransaction)

    def abort(self):
        self._call(self.p.j.abortTransaction)

    def send_offsets(self, topic, partition, offset, group):
        jvm = self.kafka.jvm
        offsets = jvm.java.util.HashMap()
        offsets.put(self.kafka.tp(topic, partition), jvm.org.apache.kafka.clients.consumer.OffsetAndMetadata(int(offset)))
        metadata = jvm.org.apache.kafka.clients.consumer.ConsumerGroupMetadata(group)
        self._call(self.p.j.sendOffsetsToTransaction, offsets, metadata)

    def close(self):
        try:
            self.p.close()
        except Exception:  # closing a fenced producer may report the fencing again
            pass


def read_values_java(kafka, bootstrap, topic, isolation, until, count, quiet_s=None):
    c = kafka.make_consumer({"bootstrap.servers": bootstrap, "isolation.level": isolation, "enable.auto.commit": "false"})
    try:
        c.assign([(topic, 0)])
        c.seekToBeginning()
        values, reading = [], Reading(until, count, quiet_s)
        while reading.goes_on(values):
            values += [r.value for r in c.poll(300)]
        return values
    finally:
        c.close()
