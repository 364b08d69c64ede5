"""Broker settings in coarser units (minutes, hours) mean the same to the broker's own view
(DescribeConfigs on the broker) and to the topic defaults storage applies."""

import pytest

from trafka.broker.config import BrokerConfig
from trafka.storage.config import topic_defaults_from_broker


@pytest.mark.parametrize(
    ("given", "broker_name", "topic_name", "expected"),
    [
        ({"log.retention.hours": "2"}, "log.retention.ms", "retention.ms", 7_200_000),
        ({"log.retention.minutes": "5", "log.retention.hours": "1"}, "log.retention.ms", "retention.ms", 300_000),
        ({"log.retention.hours": "-1"}, "log.retention.ms", "retention.ms", -1),  # no limit stays -1
        ({"log.roll.hours": "3"}, "log.roll.ms", "segment.ms", 10_800_000),
        ({"log.roll.jitter.hours": "1"}, "log.roll.jitter.ms", "segment.jitter.ms", 3_600_000),
    ],
)
def test_coarser_units_agree(given, broker_name, topic_name, expected):
    assert BrokerConfig(given)[broker_name] == expected
    assert topic_defaults_from_broker(given)[topic_name] == str(expected)


def test_the_finest_unit_given_wins():
    given = {"log.retention.ms": "1000", "log.retention.minutes": "5"}
    assert BrokerConfig(given)["log.retention.ms"] == 1000
    assert topic_defaults_from_broker(given)["retention.ms"] == "1000"
