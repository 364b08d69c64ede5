"""A simulated cluster's controller state in the metadata log: a reassignment in flight when
the whole process dies is still under way after the restart, and finishes then."""

from __future__ import annotations

from confluent_kafka.admin import AdminClient, NewTopic

from testkit.cluster import wait_for


def test_a_reassignment_in_flight_survives_a_whole_process_restart(trafka_cluster):
    admin = AdminClient({"bootstrap.servers": trafka_cluster.bootstrap_servers})
    admin.create_topics([NewTopic("moving", 1, 1)])["moving"].result(10)
    (source,) = trafka_cluster.partition_state("moving", 0)["replicas"]
    target = (source + 1) % 3
    trafka_cluster.stop_broker(target)  # the move cannot finish while its target is down
    moved = trafka_cluster.reassign_partition("moving", 0, [target])
    assert moved["reassigning_to"] == [target]
    trafka_cluster.restart(kill=True)
    state = trafka_cluster.partition_state("moving", 0)
    assert state["reassigning_to"] in ([target], None), state
    wait_for(lambda: trafka_cluster.partition_state("moving", 0)["reassigning_to"] is None, timeout=20,
             what="the reassignment to finish after the restart")
    assert trafka_cluster.partition_state("moving", 0)["replicas"] == [target]
