"""One small driver per client, so cross-client tests can say "written by X, read by Y".

Every driver produces a list of :class:`Msg` to one partition (one producer per call, with the
given compression codec, flushed before returning) and consumes by assign + seek from the start,
returning :class:`Got` in offset order. Every call is bounded by ``TIMEOUT_S``.

kafka-python 3.x and the Java producers are idempotent by default (KIP-679); ``idempotent=True``
turns idempotence on for the others (librdkafka and aiokafka ship with it off).

The per-client test modules use the clients directly as well; the drivers only cover what
every client can do, so they stay small. Each client's driver lives with its other adapters in
testkit/clients/<client>.py.
"""

from __future__ import annotations

from testkit.clients.aiokafka import Aiokafka
from testkit.clients.base import CODECS, CREATE_TIME, LOG_APPEND_TIME, TIMEOUT_S, Got, Msg
from testkit.clients.confluent import Confluent
from testkit.clients.java import Java
from testkit.clients.kafka_python import KafkaPython
from testkit.clients.kcat import Kcat

__all__ = ["Aiokafka", "CODECS", "CREATE_TIME", "Confluent", "Got", "Java", "KafkaPython", "Kcat", "LOG_APPEND_TIME",
           "Msg", "TIMEOUT_S"]
