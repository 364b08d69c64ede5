"""The same scenario against testcontainers' real Kafka and against trafka, results compared.

Needs a Docker daemon (and the confluentinc/cp-kafka image pulled from a registry); skips
with the reason otherwise."""

from __future__ import annotations

import pytest
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

from trafka.testing import TrafkaContainer

pytestmark = [pytest.mark.container, pytest.mark.timeout(1200)]


def scenario(bootstrap: str) -> dict:
    """Produce keyed records to 3 partitions, read them back, commit, list offsets."""
    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    admin.create_topics([NewTopic("diff", num_partitions=3, replication_factor=1)])
    producer = KafkaProducer(bootstrap_servers=bootstrap)
    sent = [producer.send("diff", key=f"k{i % 5}".encode(), value=f"v{i}".encode(), partition=i % 3).get(timeout=30)
            for i in range(30)]
    producer.close()
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id="diff-group", auto_offset_reset="earliest",
                             enable_auto_commit=False, consumer_timeout_ms=5000)
    consumer.subscribe(["diff"])
    got = []
    for record in consumer:
        got.append((record.partition, record.offset, record.key, record.value))
        if len(got) == 30:
            break
    consumer.commit()
    ends = consumer.end_offsets([TopicPartition("diff", p) for p in range(3)])
    committed = {p: consumer.committed(TopicPartition("diff", p)) for p in range(3)}
    consumer.close()
    admin.close()
    return {
        "sent": sorted((m.partition, m.offset) for m in sent),
        "got": sorted(got),
        "end_offsets": {tp.partition: o for tp, o in ends.items()},
        "committed": committed,
    }


def test_same_results_as_real_kafka(docker_image_for_testcontainers):
    from testcontainers.community.kafka import KafkaContainer

    with KafkaContainer() as kafka:
        expected = scenario(kafka.get_bootstrap_server())
    with TrafkaContainer(docker_image_for_testcontainers) as trafka:
        actual = scenario(trafka.get_bootstrap_server())
    assert actual == expected
